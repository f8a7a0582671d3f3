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

use std::path::Path;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use runner::host::limits::Limits;
use runner::host::machine_lock::MachineLock;
use runner::host::project::Project;
use runner::host::{pyenv, signals};
use runner::probe::gil::{
    self, Expect, GilBlock, GilFigures, GilJudgement, GilRun, InstrumentChoice,
};
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

    /// auto (schedstat where the kernel has it; sampled on macOS and with
    /// --witness portable; iterations with --witness off), schedstat,
    /// iterations (the lost-iteration fallback), or sampled (the spinner's
    /// run state sampled from outside: the portable witness).
    #[arg(
        long,
        default_value = "auto",
        value_name = "auto|schedstat|iterations|sampled"
    )]
    pub instrument: String,

    #[command(flatten)]
    pub out: JsonArgs,

    /// How long to wait for a gate running on this machine (they take turns).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

/// The `--json` document.
#[derive(Serialize)]
struct JsonOut<'a> {
    verdict: Verdict,
    answer: Option<Expect>,
    reason: &'a str,
    confidence: &'a str,
    headline: &'a str,
    figures: Option<&'a GilFigures>,
    run: &'a GilRun,
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
        "sampled" => InstrumentChoice::Sampled,
        other => {
            return Err(format!(
                "--instrument {other}: use auto, schedstat, iterations or sampled"
            ))
        }
    };
    Ok(GilBlock {
        call: args.call.clone(),
        setup: args.setup.clone(),
        args: args
            .args
            .iter()
            .map(|a| gil::plan::PyLiteral::Source(a.clone()))
            .collect(),
        expect,
        round_ms: args.round_ms,
        rounds: args.rounds,
        instrument: Some(instrument),
        scale: args.scale.clone(),
        ..Default::default()
    })
}

pub async fn run(project: &Project, python: Option<&Path>, args: &GilProbeArgs) -> Finish {
    if let Err(e) = args.out.check() {
        return unusable(&e);
    }
    if !args.stage.is_empty() {
        return stages::run(project, python, args).await;
    }
    let plan = match block(args).and_then(|b| {
        b.validate()
            .map_err(|e| format!("{}: {}", plan_flag(e.key), e.message))
    }) {
        Ok(p) => p,
        Err(e) => return unusable(&e),
    };
    let env = match pyenv::prepare(project, python, &mut |p| {
        if let pyenv::EnvProgress::Installing { venv, reason, .. } = p {
            eprintln!(
                "preparing the Python environment ({reason}): {} (pass --python to use your own interpreter)",
                venv.display()
            );
        }
    }) {
        Ok(env) => env,
        Err(e) => return unusable(&e.to_string()),
    };
    let lock_path = project.state_dir().join("measure.lock");
    let wait = Duration::from_millis(args.machine_wait_ms);
    let lock = match MachineLock::take(&lock_path, wait).await {
        Ok(lock) => lock,
        Err(e) => return cannot_judge(&e),
    };
    eprintln!(
        "gil-probe {} in {}: {} rounds of {} ms per arm",
        plan.target.describe(),
        env.python.display(),
        plan.rounds,
        plan.round_ms
    );
    let limits = gil::GilLimits::for_plan(&plan);
    let fixtures = gil::fixture_dir(&project.root);
    let measured = signals::until_signal(gil::measure(&env.python, &fixtures, &plan, limits)).await;
    drop(lock);
    let run = match measured {
        Ok(run) => run,
        Err(signal) => {
            eprintln!(
                "interrupted by {}; the probe's processes were stopped",
                signals::name(signal)
            );
            return Finish::interrupted(signal, Vec::new());
        }
    };
    let judgement = gil::judge(&plan, &run);
    let out = JsonOut {
        verdict: judgement.verdict,
        answer: judgement.figures.as_ref().and_then(|f| f.answer),
        reason: &judgement.reason,
        confidence: &judgement.confidence,
        headline: &judgement.headline,
        figures: judgement.figures.as_ref(),
        run: &run,
    };
    let printed = match args.out.emit_value(&out) {
        Ok(p) => p,
        Err(e) => return unusable(&e),
    };
    if !printed {
        let target = judgement
            .figures
            .as_ref()
            .map_or_else(|| plan.target.describe(), |f| f.target.clone());
        print!("{}", text(&target, &judgement, &run));
    }
    Finish::verdicts(vec![judgement.verdict])
}

/// The terminal report: a verdict line, the table, the reason, confidence.
fn text(target: &str, j: &GilJudgement, run: &GilRun) -> String {
    let answer = j.figures.as_ref().and_then(|f| f.answer);
    let word = match (j.verdict, answer) {
        (Verdict::Fail, Some(a)) => format!("FAIL ({})", a.name().to_uppercase()),
        (_, Some(a)) => a.name().to_uppercase(),
        _ => "CANNOT JUDGE".to_string(),
    };
    let mut out = format!("{word} {target}");
    if !j.headline.is_empty() {
        out.push_str(&format!(": {}", j.headline));
    }
    out.push('\n');
    if let Some(f) = &j.figures {
        out.push_str(&gil::render(f));
    }
    out.push_str(&format!("  {}\n", j.reason));
    out.push_str(&format!(
        "  confidence: {}; {:.2} s\n",
        j.confidence,
        run.elapsed_ms / 1e3
    ));
    out
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
mod stages {
    use std::path::Path;
    use std::time::Duration;

    use super::GilProbeArgs;
    use runner::exit::Outcome;
    use runner::host::machine_lock::MachineLock;
    use runner::host::project::Project;
    use runner::host::{pyenv, signals};
    use runner::probe::gil::stages::{self, StageInput};
    use runner::probe::gil::{self, GilJudgement};
    use runner::verdict::Verdict;

    use super::super::{unusable, Finish};
    use super::{block, cannot_judge, plan_flag};

    pub async fn run(project: &Project, python: Option<&Path>, args: &GilProbeArgs) -> Finish {
        if args.setup.is_none() {
            return unusable(
                "--stage needs --setup MODULE:FUNCTION, a setup that takes the stage's name first",
            );
        }
        if args.expect.is_some() || !args.scale.is_empty() {
            return unusable("--stage reads every stage: leave out --expect and --scale");
        }
        let mut plans = Vec::new();
        for name in &args.stage {
            let name = name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return unusable(&format!(
                    "--stage {name:?}: a stage is a name (letters, digits, _)"
                ));
            }
            let mut one = block(args);
            if let Ok(b) = &mut one {
                b.args
                    .insert(0, gil::plan::PyLiteral::Source(format!("'{name}'")));
            }
            match one.and_then(|b| {
                b.validate()
                    .map_err(|e| format!("{}: {}", plan_flag(e.key), e.message))
            }) {
                Ok(p) => plans.push((name.to_string(), p)),
                Err(e) => return unusable(&e),
            }
        }
        let env = match pyenv::prepare(project, python, &mut |_| {}) {
            Ok(env) => env,
            Err(e) => return unusable(&e.to_string()),
        };
        let lock_path = project.state_dir().join("measure.lock");
        let wait = Duration::from_millis(args.machine_wait_ms);
        let lock = match MachineLock::acquire(&lock_path, wait).await {
            Ok(Some(lock)) => lock,
            Ok(None) => {
                return cannot_judge(&format!(
                    "another gate held {} for {} s; wait for it, or raise --machine-wait-ms",
                    lock_path.display(),
                    wait.as_secs()
                ))
            }
            Err(e) => return cannot_judge(&format!("cannot lock {}: {e}", lock_path.display())),
        };
        let fixtures = gil::fixture_dir(&project.root);
        let mut judged: Vec<(String, GilJudgement)> = Vec::new();
        for (name, plan) in &plans {
            eprintln!(
                "stage {name}: {} rounds of {} ms per arm",
                plan.rounds, plan.round_ms
            );
            let limits = gil::GilLimits::for_plan(plan);
            match signals::until_signal(gil::measure(&env.python, &fixtures, plan, limits)).await {
                Ok(run) => judged.push((name.clone(), gil::judge(plan, &run))),
                Err(signal) => {
                    eprintln!(
                        "interrupted by {}; the probe's processes were stopped",
                        signals::name(signal)
                    );
                    return Finish {
                        outcome: Outcome::Interrupted { signal },
                        verdicts: Vec::new(),
                    };
                }
            }
        }
        drop(lock);
        let mut inputs = Vec::new();
        for (name, j) in &judged {
            match &j.figures {
                Some(f) => inputs.push(StageInput::from_figures(name, f)),
                None => return cannot_judge(&format!("stage {name}: {}", j.reason)),
            }
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let Some(table) = stages::table(&inputs, cores) else {
            return cannot_judge("no stage has a time per call");
        };
        match args.out.emit_value(&table) {
            Ok(true) => {}
            Ok(false) => print!("{}", stages::render(&table)),
            Err(e) => return unusable(&e),
        }
        let verdicts = judged.iter().map(|(_, j)| j.verdict).collect::<Vec<_>>();
        if table.binds.is_none() {
            return Finish::verdicts(vec![Verdict::CannotJudge]);
        }
        Finish::verdicts(verdicts)
    }
}

fn cannot_judge(message: &str) -> Finish {
    eprintln!("cannot judge: {message}");
    Finish::verdicts(vec![Verdict::CannotJudge])
}
