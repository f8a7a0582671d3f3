//! Which rule decides a keepalive-isolation run, in order, and what could
//! still change a provisional verdict; no words here (`words.rs`).
//!
//! A check failing beyond the margin decides on its own; a closed
//! kept-alive connection without one is cannot judge.

use super::figures::{Check, KeepaliveFigures};
use crate::probe::keepalive::measure::KeepaliveRun;
use crate::probe::keepalive::KeepalivePlan;
use crate::spec::RatioBound;
use crate::verdict::{margin, Verdict};

/// The rule that decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The control mode had failed requests: it proves nothing.
    ControlFailedRequests,
    /// The server closed a kept-alive connection mid-trial and no check
    /// failed beyond the margin.
    ClosedMidTrial,
    /// The control's B was not pinned: the probe could not fail here.
    ControlDidNotSeparate,
    /// The mode under test had failed requests.
    UnderTestFailedRequests,
    /// A check of the mode under test does not hold.
    ChecksFailed,
    Pass,
}

impl Decision {
    pub fn verdict(self) -> Verdict {
        match self {
            Decision::ControlFailedRequests
            | Decision::ClosedMidTrial
            | Decision::ControlDidNotSeparate => Verdict::CannotJudge,
            Decision::UnderTestFailedRequests | Decision::ChecksFailed => Verdict::Fail,
            Decision::Pass => Verdict::Pass,
        }
    }
}

/// Whether `value` lies within the plan's margin of `bound`.
fn near(plan: &KeepalivePlan, value: f64, bound: RatioBound) -> bool {
    margin(value, bound).abs() < plan.margin
}

pub fn decide(plan: &KeepalivePlan, run: &KeepaliveRun, f: &KeepaliveFigures) -> Decision {
    let decisive = f
        .checks
        .iter()
        .any(|c| !c.holds && !near(plan, c.value, c.bound));
    if !run.control.problems.is_empty() {
        return Decision::ControlFailedRequests;
    }
    let closed = !run.control.closed.is_empty() || !run.under_test.closed.is_empty();
    if closed && !decisive {
        return Decision::ClosedMidTrial;
    }
    if !plan.control.bound.holds(f.control_ratio) {
        return Decision::ControlDidNotSeparate;
    }
    if !run.under_test.problems.is_empty() {
        Decision::UnderTestFailedRequests
    } else if f.checks.iter().any(|c| !c.holds) {
        Decision::ChecksFailed
    } else {
        Decision::Pass
    }
}

/// Why more trials could still change a provisional verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// The control's B over S lies within the margin of its bound.
    Control,
    /// This check (an index into `checks`) lies within the margin.
    Check(usize),
    /// A fail that no check decides beyond the margin.
    Ambiguous,
    /// No verdict yet.
    NoVerdict,
}

/// None when the figures decide `verdict`.
pub fn open(
    plan: &KeepalivePlan,
    run: &KeepaliveRun,
    verdict: Verdict,
    f: &KeepaliveFigures,
) -> Option<Open> {
    let control = margin(f.control_ratio, plan.control.bound) < plan.margin;
    let near_check = |failing_only: bool| {
        f.checks
            .iter()
            .enumerate()
            .filter(|(_, c): &(usize, &Check)| !failing_only || !c.holds)
            .find(|(_, c)| near(plan, c.value, c.bound))
            .map(|(i, _)| Open::Check(i))
    };
    match verdict {
        _ if verdict != Verdict::Pass && verdict != Verdict::Fail => Some(Open::NoVerdict),
        _ if control => Some(Open::Control),
        Verdict::Pass => near_check(false),
        _ => {
            let decided = f
                .checks
                .iter()
                .any(|c| !c.holds && margin(c.value, c.bound) <= -plan.margin)
                || !run.under_test.problems.is_empty();
            (!decided).then(|| near_check(true).unwrap_or(Open::Ambiguous))
        }
    }
}
