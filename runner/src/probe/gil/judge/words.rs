//! The words of a GIL probe's judgement: the reason and confidence for each
//! rule's decision (`rules.rs`), the headline, and why a run that never
//! reported, or reported an error, has no figures to judge.

use super::figures::GilFigures;
use super::rules::Decision;
use crate::probe::gil::instrument::Instrument;
use crate::probe::gil::instrument::{GilRun, InstrumentReport, RunOutcome};
use crate::probe::gil::plan::{Expect, GilPlan};
use crate::verdict::Verdict;

/// The reason and the confidence for `decision` over `f`.
pub fn reason(plan: &GilPlan, f: &GilFigures, decision: &Decision) -> (String, String) {
    let b = plan.bounds;
    let reading = f.instrument.reading();
    let call = &f.call;
    let c = &f.controls;
    let controls_line = format!(
        "controls {:.2}/{:.2}/{:.2}",
        c.releases.reading.median, c.holds_half.reading.median, c.holds_all.reading.median
    );
    let saturated = || "no verdict: the machine was saturated".to_string();
    match decision {
        Decision::TooShort => (
            format!(
                "the call is too fast for the instrument: the worker was inside it {:.2} of each \
                 round (needs >= {:.2}; {} per call), so the reading measures the Python loop \
                 around it, not the call; give each call more work (a bigger argument, or a setup \
                 returning a callable that loops)",
                call.busy,
                b.busy_at_least,
                call.call_us
                    .map_or("unknown time".into(), |us| format!("{us:.2} µs"))
            ),
            "no verdict: the call is too short".into(),
        ),
        Decision::NoGil => (
            format!(
                "{} runs without a GIL (a free-threaded build, sys._is_gil_enabled() is False): \
                 there is no lock for the call to release or hold",
                f.python.executable
            ),
            "no verdict: no GIL".into(),
        ),
        Decision::Saturated { runqueue } => (
            format!(
                "no free core: the spinner waited for a CPU {runqueue:.2} of the time (at most \
                 {:.2}), too little left to read the lock from; run it on a quieter machine",
                b.runqueue_at_most
            ),
            saturated(),
        ),
        Decision::Unreadable { arm, read, needed } => (
            format!(
                "no free core: only {read} of {} rounds of {arm} had a reading (needs {needed}): \
                 the spinner hardly left the run queue, or was still queued for a core at a \
                 round's edge; the machine had no core to spare, run it on a quieter one",
                f.rounds_run,
            ),
            saturated(),
        ),
        Decision::ControlsOff => {
            let off: Vec<String> = [&c.releases, &c.holds_half, &c.holds_all]
                .into_iter()
                .zip(&f.control_checks)
                .filter(|(_, check)| !check.as_designed)
                .map(|(arm, check)| {
                    format!(
                        "{} read {reading} {:.3}, designed {}",
                        arm.arm, arm.reading.median, check.designed
                    )
                })
                .collect();
            (
                format!(
                    "a control did not read as designed ({}), so the instrument could not have \
                     told a release from a hold here ({}); a busy machine or an interpreter that \
                     changes the GIL's rules does this",
                    off.join("; "),
                    f.instrument_note
                ),
                format!(
                    "no verdict: controls as designed in {}",
                    control_agreement(f)
                ),
            )
        }
        Decision::Ambiguous { value } => (
            format!(
                "the call reads {reading} {value:.3}, between releases (<= {:.2}) and holds (>= \
                 {:.2}): it may release for part of each call; {controls_line} read as designed",
                b.releases_at_most, b.holds_at_least
            ),
            "no verdict: the reading is ambiguous".into(),
        ),
        Decision::Answer {
            answer,
            verdict,
            side,
            margin,
        } => {
            let value = call.reading.median;
            let bound = match answer {
                Expect::Releases => format!("<= {:.2}", b.releases_at_most),
                Expect::Holds => format!(">= {:.2}", b.holds_at_least),
            };
            let what = match answer {
                Expect::Releases => "other threads ran while the call ran",
                Expect::Holds => "other threads waited while the call ran",
            };
            let facts = format!(
                "the spinner {} {value:.2} of its time ({} {bound}); {controls_line} read as designed",
                match f.instrument {
                    Instrument::Schedstat => "was blocked",
                    Instrument::Iterations => "lost",
                },
                answer.name()
            );
            let reason = match (plan.expect, verdict) {
                (None, _) => format!("{}: {what}; {facts}", answer.name()),
                (Some(e), Verdict::Fail) => format!(
                    "expected {}, but the call {}: {what}; {facts}",
                    e.name(),
                    answer.name()
                ),
                (Some(_), _) => format!("{}, as expected: {what}; {facts}", answer.name()),
            };
            let confidence = format!(
                "{side} of {} rounds {bound} alone, median margin {margin:+.2}; controls as \
                 designed in {}; {}",
                f.rounds_run,
                control_agreement(f),
                match f.instrument {
                    Instrument::Schedstat => "kernel accounting (schedstat)",
                    Instrument::Iterations =>
                        "fallback instrument (lost iterations), trusted because the controls separated",
                }
            );
            (reason, confidence)
        }
    }
}

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

/// `5/5/4 of 5 rounds`: rounds in which each control alone read as designed.
fn control_agreement(f: &GilFigures) -> String {
    let c = &f.controls;
    let counts: Vec<String> = [&c.releases, &c.holds_half, &c.holds_all]
        .into_iter()
        .zip(&f.control_checks)
        .map(|(arm, check)| {
            arm.rounds
                .iter()
                .filter(|&&r| check.designed.holds(r))
                .count()
                .to_string()
        })
        .collect();
    format!("{} of {} rounds", counts.join("/"), f.rounds_run)
}
