//! The words of a GIL probe's judgement that are not a rule's: the
//! headline, and why a run that never reported, or reported an error, has
//! no figures to judge.

use super::figures::GilFigures;
use crate::probe::gil::instrument::{GilRun, InstrumentReport, RunOutcome};
use crate::probe::gil::plan::GilPlan;

/// `blocked 0.49 vs controls 0.00/0.47/0.83`.
pub fn headline(f: &GilFigures) -> String {
    format!(
        "{} {:.2} vs controls {:.2}/{:.2}/{:.2}",
        f.instrument.reading(),
        f.call.reading.median,
        f.controls.releases.reading.median,
        f.controls.holds_half.reading.median,
        f.controls.holds_all.reading.median
    )
}

pub fn outcome_reason(outcome: &RunOutcome, run: &GilRun) -> String {
    let tail = last_lines(&run.stderr_tail, 5);
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!("; its last words:\n{tail}")
    };
    match outcome {
        RunOutcome::Report { .. } => String::new(),
        RunOutcome::CannotStart { problem } => format!("cannot start the probe: {problem}"),
        RunOutcome::Timeout { limit_ms } => format!(
            "the probe did not finish within {:.0} s and was stopped (a call that never returns, or \
             a setup that takes longer?)",
            *limit_ms as f64 / 1e3
        ),
        RunOutcome::Crashed { status } => format!(
            "{} ended without a result ({status}){tail}",
            run.python.display()
        ),
        RunOutcome::BadOutput { problem } => format!(
            "the probe's output is not its JSON document ({problem}); is {} a CPython 3.9+ \
             interpreter?{tail}",
            run.python.display()
        ),
    }
}

pub fn error_reason(
    plan: &GilPlan,
    report: &InstrumentReport,
    e: &crate::probe::gil::instrument::ProbeErrorInfo,
) -> String {
    let python = if report.python.executable.is_empty() {
        "the interpreter".to_string()
    } else {
        report.python.executable.clone()
    };
    let raised = format!("{}: {}", e.kind, e.message);
    match e.place.as_str() {
        "import" if e.kind == "ModuleNotFoundError" || e.kind == "ImportError" => format!(
            "cannot import the call ({raised}): is it installed in {python}? --python picks the \
             interpreter"
        ),
        "import" => format!("cannot find {} ({raised})", target_name(plan)),
        "args" => format!("bad arguments: {}", e.message),
        "setup" => format!(
            "the setup {} raised {raised}; a setup that fails cannot be measured",
            target_name(plan)
        ),
        "call" => format!(
            "the call raised {raised}; a call that raises cannot be measured (check its --arg \
             literals)"
        ),
        "control" => format!(
            "the {} control could not run ({raised}); this interpreter cannot host the probe's \
             controls (ctypes with libc symbols)",
            e.arm.as_deref().unwrap_or("probe's")
        ),
        "scale" => format!("the --scale table failed: {raised}"),
        _ => format!("the probe failed: {raised}"),
    }
}

/// The `module:function` the plan names (the call, or its setup).
fn target_name(plan: &GilPlan) -> &str {
    match &plan.target {
        crate::probe::gil::plan::Target::Setup(s) | crate::probe::gil::plan::Target::Call(s) => s,
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
