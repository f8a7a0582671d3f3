//! `runner gil-probe MODULE:FUNCTION [--arg LITERAL]... [--setup M:F]
//! [--expect releases|holds] [--scale 1,2,4] [--json]`: the GIL probe, ad
//! hoc, for a maintainer at a terminal.
//!
//! It runs in the interpreter given with `--python` (default: the runner's
//! `.gates/venv`), because the question is about the user's build of their
//! library. Exit 0 with "releases" or "holds" and the figures; 2 when it
//! cannot judge (the message says why); with `--expect`, 1 on the other
//! answer. It takes the machine's measuring turn like any gate, so two
//! probes never read each other as load.

use std::time::Duration;

use clap::Args;

use runner::host::limits::Limits;
use runner::host::signals;
use runner::probe::gil::ask::{ask, stage_plans, stage_table, Asked, Report, StageError};
use runner::probe::gil::plan::PyLiteral;
use runner::probe::gil::render::verdict_text;
use runner::probe::gil::stages::render as render_stages;
use runner::probe::gil::{Expect, GilBlock, InstrumentChoice};
use runner::session::Session;
use runner::verdict::Verdict;

use super::args::JsonArgs;
use super::{unusable, Finish};

#[derive(Debug, Args)]
pub struct GilProbeArgs {
    /// The call under test (time:sleep, package.module:Class.method); or
    /// give --setup instead.
    #[arg(value_name = "MODULE:FUNCTION")]
    pub call: Option<String>,

    /// An argument as a Python literal, repeatable: --arg 0.005 --arg "'text'".
    /// With --setup, the setup's arguments.
    #[arg(long = "arg", value_name = "LITERAL", allow_hyphen_values = true)]
    pub args: Vec<String>,

    /// A function run once per worker thread that returns (callable, args),
    /// so a per-thread handle can be opened there (zimsearch:setup).
    #[arg(long, value_name = "MODULE:FUNCTION")]
    pub setup: Option<String>,

    /// Make it a gate: exit 1 when the call does the other thing.
    #[arg(long, value_name = "releases|holds")]
    pub expect: Option<String>,

    /// Rounds per arm (the call and each control), interleaved.
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,

    /// Length of one round of one arm.
    #[arg(long, value_name = "MS")]
    pub round_ms: Option<u32>,

    /// Also measure calls/s on N threads and on N processes, for each N.
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub scale: Vec<u32>,

    /// The stage table: probe the setup once per stage, the stage's name
    /// given as its first argument (--setup minilmstages:stage --stage
    /// tokenize,to_numpy,forward,tolist,dumps), then each stage's ms,
    /// share, releases or holds, the held share and the ceilings.
    #[arg(long, value_delimiter = ',', value_name = "NAME,NAME,...")]
    pub stage: Vec<String>,

    /// auto (schedstat where the kernel has it), schedstat, or iterations
    /// (the lost-iteration fallback).
    #[arg(long, default_value = "auto", value_name = "auto|schedstat|iterations")]
    pub instrument: String,

    #[command(flatten)]
    pub out: JsonArgs,

    /// How long to wait for a gate running on this machine (they take turns).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

/// The block the flags describe, as a row would write it.
fn block(args: &GilProbeArgs) -> Result<GilBlock, String> {
    match (&args.call, &args.setup) {
        (None, None) => return Err(
            "give the call as MODULE:FUNCTION (time:sleep --arg 0.005), or --setup MODULE:FUNCTION"
                .into(),
        ),
        (Some(c), Some(s)) => {
            return Err(format!(
                "{c} and --setup {s}: give one; the setup returns the callable and its args"
            ))
        }
        _ => {}
    }
    let expect = match args.expect.as_deref() {
        None => None,
        Some(s) => {
            Some(Expect::parse(s).ok_or_else(|| format!("--expect {s}: use releases or holds"))?)
        }
    };
    let instrument = match args.instrument.as_str() {
        "auto" => InstrumentChoice::Auto,
        "schedstat" if runner::kernel::schedstat::forced_off() => {
            return Err(
                "--instrument schedstat reads the accounting that --witness off turns off; drop one of them"
                    .into(),
            )
        }
        "schedstat" => InstrumentChoice::Schedstat,
        "iterations" => InstrumentChoice::Iterations,
        other => {
            return Err(format!(
                "--instrument {other}: use auto, schedstat or iterations"
            ))
        }
    };
    Ok(GilBlock {
        call: args.call.clone(),
        setup: args.setup.clone(),
        args: args
            .args
            .iter()
            .map(|a| PyLiteral::Source(a.clone()))
            .collect(),
        expect,
        round_ms: args.round_ms,
        rounds: args.rounds,
        instrument: Some(instrument),
        scale: args.scale.clone(),
        ..Default::default()
    })
}

pub async fn run(session: &Session, args: &GilProbeArgs) -> Finish {
    if let Err(e) = args.out.check() {
        return unusable(&e);
    }
    if !args.stage.is_empty() {
        return stages(session, args).await;
    }
    let plan = match block(args).and_then(|b| {
        b.validate()
            .map_err(|e| format!("{}: {}", plan_flag(e.key), e.message))
    }) {
        Ok(p) => p,
        Err(e) => return unusable(&e),
    };
    let env = match session.python() {
        Ok(env) => env,
        Err(e) => return unusable(&e),
    };
    let wait = Duration::from_millis(args.machine_wait_ms);
    let mut before = |_| {
        eprintln!(
            "gil-probe {} in {}: {} rounds of {} ms per arm",
            plan.target.describe(),
            env.python.display(),
            plan.rounds,
            plan.round_ms
        )
    };
    let plans = std::slice::from_ref(&plan);
    let asked = match asked(
        session
            .cancellable(ask(session, &env.python, plans, wait, &mut before))
            .await,
    ) {
        Ok(mut a) => a.pop(),
        Err(finish) => return finish,
    };
    let Some(Asked { run, judgement }) = asked else {
        return cannot_judge("the probe did not run");
    };
    let printed = match args.out.emit_value(&Report::of(&judgement, &run)) {
        Ok(p) => p,
        Err(e) => return unusable(&e),
    };
    if !printed {
        let target = judgement
            .figures
            .as_ref()
            .map_or_else(|| plan.target.describe(), |f| f.target.clone());
        print!("{}", verdict_text(&target, &judgement, &run));
    }
    Finish::verdicts(vec![judgement.verdict])
}

/// The probes' judgements, or how the command ends without them: stopped
/// by a signal, or without the machine's turn.
fn asked(outcome: Result<Result<Vec<Asked>, String>, i32>) -> Result<Vec<Asked>, Finish> {
    match outcome {
        Ok(Ok(asked)) => Ok(asked),
        Ok(Err(e)) => Err(cannot_judge(&e)),
        Err(signal) => {
            eprintln!(
                "interrupted by {}; the probe's processes were stopped",
                signals::name(signal)
            );
            Err(Finish::interrupted(signal, Vec::new()))
        }
    }
}

/// The flag that sets a block's key, for messages.
fn plan_flag(key: &str) -> &'static str {
    match key {
        "call" => "MODULE:FUNCTION",
        "setup" => "--setup",
        "args" => "--arg",
        "rounds" => "--rounds",
        "round_ms" => "--round-ms",
        "scale" => "--scale",
        "expect" => "--expect",
        _ => "the probe's settings",
    }
}

/// `--stage`: one probe per stage, then the stage table.
async fn stages(session: &Session, args: &GilProbeArgs) -> Finish {
    if args.setup.is_none() {
        return unusable(
            "--stage needs --setup MODULE:FUNCTION, a setup that takes the stage's name first",
        );
    }
    if args.expect.is_some() || !args.scale.is_empty() {
        return unusable("--stage reads every stage: leave out --expect and --scale");
    }
    let names: Vec<String> = args.stage.iter().map(|n| n.trim().to_string()).collect();
    let plans = match block(args).and_then(|b| {
        stage_plans(&b, &names).map_err(|e| match e {
            StageError::Name(m) => format!("--stage {m}"),
            StageError::Plan(e) => format!("{}: {}", plan_flag(e.key), e.message),
        })
    }) {
        Ok(p) => p,
        Err(e) => return unusable(&e),
    };
    let env = match session.python() {
        Ok(env) => env,
        Err(e) => return unusable(&e),
    };
    let wait = Duration::from_millis(args.machine_wait_ms);
    let mut before = |i: usize| {
        eprintln!(
            "stage {}: {} rounds of {} ms per arm",
            names[i], plans[i].rounds, plans[i].round_ms
        )
    };
    let asked = match asked(
        session
            .cancellable(ask(session, &env.python, &plans, wait, &mut before))
            .await,
    ) {
        Ok(a) => a,
        Err(finish) => return finish,
    };
    let table = match stage_table(&names, &asked) {
        Ok(t) => t,
        Err(e) => return cannot_judge(&e),
    };
    match args.out.emit_value(&table) {
        Ok(true) => {}
        Ok(false) => print!("{}", render_stages(&table)),
        Err(e) => return unusable(&e),
    }
    if table.binds.is_none() {
        return Finish::verdicts(vec![Verdict::CannotJudge]);
    }
    Finish::verdicts(asked.iter().map(|a| a.judgement.verdict).collect())
}

fn cannot_judge(message: &str) -> Finish {
    eprintln!("cannot judge: {message}");
    Finish::verdicts(vec![Verdict::CannotJudge])
}
