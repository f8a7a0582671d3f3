//! `runner gil-probe MODULE:FUNCTION`: the GIL probe, ad hoc, for a
//! maintainer at a terminal: one probe, or one per stage of a setup (the
//! stage table).
//!
//! It runs in the session's interpreter (`--python`, else the runner's
//! venv), because the question is about the user's build of their
//! library. It answers "releases" or "holds" with the figures, or cannot
//! judge (the note says why); with an expected answer, the other one is a
//! failure. It takes the machine's measuring turn like any gate, so two
//! probes never read each other as load.

use std::time::Duration;

use super::ask::{ask, stage_plans, stage_table, Asked, Report, StageError};
use super::plan::{PlanError, PyLiteral};
use super::render::verdict_text;
use super::stages::render as render_stages;
use super::{Expect, GilBlock, GilPlan, InstrumentChoice};
use crate::console::{Console, JsonOut};
use crate::exit::Finish;
use crate::host::signals;
use crate::session::Session;
use crate::verdict::Verdict;

/// What `runner gil-probe` is asked: the flags, as given.
#[derive(Debug, Clone, Default)]
pub struct GilProbeCommand {
    /// MODULE:FUNCTION, or none with a setup.
    pub call: Option<String>,
    /// Python literals: the call's arguments, or the setup's.
    pub args: Vec<String>,
    pub setup: Option<String>,
    /// `releases` or `holds`.
    pub expect: Option<String>,
    pub rounds: Option<u32>,
    pub round_ms: Option<u32>,
    pub scale: Vec<u32>,
    /// Stage names: one probe per stage.
    pub stage: Vec<String>,
    /// auto, schedstat, iterations or sampled.
    pub instrument: String,
    pub out: JsonOut,
    pub machine_wait_ms: u64,
}

impl GilProbeCommand {
    /// The block the command describes, as a row would write it.
    fn block(&self) -> Result<GilBlock, String> {
        match (&self.call, &self.setup) {
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
        let expect = match self.expect.as_deref() {
            None => None,
            Some(s) => Some(
                Expect::parse(s).ok_or_else(|| format!("--expect {s}: use releases or holds"))?,
            ),
        };
        let instrument = match self.instrument.as_str() {
            "auto" => InstrumentChoice::Auto,
            "schedstat" if crate::kernel::schedstat::forced_off() => {
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
            call: self.call.clone(),
            setup: self.setup.clone(),
            args: self
                .args
                .iter()
                .map(|a| PyLiteral::Source(a.clone()))
                .collect(),
            expect,
            round_ms: self.round_ms,
            rounds: self.rounds,
            instrument: Some(instrument),
            scale: self.scale.clone(),
            ..Default::default()
        })
    }

    /// The plans asked for: one, or one per stage of `names`.
    fn plans(&self, names: &[String]) -> Result<Vec<GilPlan>, String> {
        let plan_error = |e: PlanError| format!("{}: {}", plan_flag(e.key), e.message);
        if names.is_empty() {
            return self
                .block()?
                .validate()
                .map(|p| vec![p])
                .map_err(plan_error);
        }
        if self.setup.is_none() {
            return Err(
                "--stage needs --setup MODULE:FUNCTION, a setup that takes the stage's name first"
                    .into(),
            );
        }
        if self.expect.is_some() || !self.scale.is_empty() {
            return Err("--stage reads every stage: leave out --expect and --scale".into());
        }
        stage_plans(&self.block()?, names).map_err(|e| match e {
            StageError::Name(m) => format!("--stage {m}"),
            StageError::Plan(e) => plan_error(e),
        })
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

pub async fn run(
    session: &Session,
    probe: &GilProbeCommand,
    console: &dyn Console,
) -> Result<Finish, String> {
    probe.out.check()?;
    let names: Vec<String> = probe.stage.iter().map(|n| n.trim().to_string()).collect();
    let plans = probe.plans(&names)?;
    let env = session.python()?;
    let mut before = |i: usize| {
        let p: &GilPlan = &plans[i];
        console.note(&match names.get(i) {
            Some(name) => format!(
                "stage {name}: {} rounds of {} ms per arm",
                p.rounds, p.round_ms
            ),
            None => format!(
                "gil-probe {} in {}: {} rounds of {} ms per arm",
                p.target.describe(),
                env.python.display(),
                p.rounds,
                p.round_ms
            ),
        })
    };
    let wait = Duration::from_millis(probe.machine_wait_ms);
    let work = ask(session, &env.python, &plans, wait, &mut before);
    let asked = match session.cancellable(work).await {
        Ok(Ok(asked)) => asked,
        Ok(Err(e)) => return Ok(cannot_judge(console, &e)),
        Err(signal) => {
            console.note(&format!(
                "interrupted by {}; the probe's processes were stopped",
                signals::name(signal)
            ));
            return Ok(Finish::interrupted(signal, Vec::new()));
        }
    };
    if names.is_empty() {
        one(probe, &plans[0], asked, console)
    } else {
        stages(probe, &names, &asked, console)
    }
}

/// One probe's report.
fn one(
    probe: &GilProbeCommand,
    plan: &GilPlan,
    mut asked: Vec<Asked>,
    console: &dyn Console,
) -> Result<Finish, String> {
    let Some(Asked { run, judgement }) = asked.pop() else {
        return Ok(cannot_judge(console, "the probe did not run"));
    };
    if !probe
        .out
        .emit_value(console, &Report::of(&judgement, &run))?
    {
        let target = judgement
            .figures
            .as_ref()
            .map_or_else(|| plan.target.describe(), |f| f.target.clone());
        console.print(&verdict_text(&target, &judgement, &run));
    }
    Ok(Finish::verdicts(vec![judgement.verdict]))
}

/// The stage table of the stages' probes.
fn stages(
    probe: &GilProbeCommand,
    names: &[String],
    asked: &[Asked],
    console: &dyn Console,
) -> Result<Finish, String> {
    let table = match stage_table(names, asked) {
        Ok(t) => t,
        Err(e) => return Ok(cannot_judge(console, &e)),
    };
    probe.out.answer(console, &table, render_stages)?;
    if table.binds.is_none() {
        return Ok(Finish::cannot_judge());
    }
    Ok(Finish::verdicts(
        asked.iter().map(|a| a.judgement.verdict).collect(),
    ))
}

fn cannot_judge(console: &dyn Console, message: &str) -> Finish {
    console.note(&format!("cannot judge: {message}"));
    Finish::verdicts(vec![Verdict::CannotJudge])
}
