//! The rules of a GIL probe's verdict, in order, each a reason to stop short
//! of an answer; no words here (`words.rs` says why).

use super::figures::{ControlCheck, ControlFigures, Designed, GilFigures};
use crate::probe::gil::instrument::Instrument;
use crate::probe::gil::plan::{Expect, GilBounds, GilPlan};
use crate::verdict::Verdict;

/// Which rule decided, with the facts its words need.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The worker spent less than `busy_at_least` of each round inside the
    /// call: the reading is about the Python loop around it.
    TooShort,
    /// A free-threaded interpreter: no lock to release or hold.
    NoGil,
    /// The spinner waited for a core more than `runqueue_at_most`.
    Saturated { runqueue: f64 },
    /// An arm (by name) had a reading in too few rounds.
    Unreadable {
        arm: String,
        read: usize,
        needed: usize,
    },
    /// A control did not read as designed (`figures.control_checks`).
    ControlsOff,
    /// The call's reading lies between the two bounds.
    Ambiguous { value: f64 },
    /// Lost iterations read a hold, but the call alone keeps `cores` busy,
    /// or the process runs `threads` Python did not start (a library's own
    /// pool): it may have taken the spinner's core.
    FillsTheCores {
        value: f64,
        cores: Option<f64>,
        threads: Option<u32>,
    },
    /// An answer: `side` rounds on its side of the bound, the median's
    /// `margin` past it; the verdict follows `expect`.
    Answer {
        answer: Expect,
        verdict: Verdict,
        side: usize,
        margin: f64,
    },
}

impl Decision {
    pub fn verdict(&self) -> Verdict {
        match self {
            Decision::Answer { verdict, .. } => *verdict,
            _ => Verdict::CannotJudge,
        }
    }
}

/// The most cores the call may keep busy alone for lost iterations to
/// read a hold. A call that computes while it releases the GIL needs a
/// core of its own and the spinner another; on a shared machine (a CI
/// runner beside a neighbour's build) the second is not there for certain,
/// and lost iterations read its absence as a hold. Measured here at load
/// average 7-10 from other work: numpy's product, its pool capped to one
/// thread (0.98 cores alone), read "holds" in 14 of 20 runs. So a call
/// that computes more than half its time reads no hold this way (cannot
/// judge); one that mostly waits holding the GIL (a C sleep, 0.0 cores)
/// still can. A BLAS pool on two cores reads about 2.
pub const LOST_ITERATIONS_ALONE_CORES_AT_MOST: f64 = 0.5;

/// The cores the call keeps busy alone (process CPU over wall, timed
/// before the spinner started); None where the instrument did not time it.
fn alone_cores(f: &GilFigures) -> Option<f64> {
    let a = f.alone.as_ref()?;
    (a.call_us > 0.0).then(|| a.cpu_us / a.call_us)
}

/// Rounds with a reading each arm needs: a majority, and at least three.
pub fn readable_needed(rounds: u32) -> usize {
    (rounds as usize / 2 + 1).max(3)
}

/// The rule that decides `figures` (the controls already judged).
pub fn decide(plan: &GilPlan, figures: &GilFigures) -> Decision {
    let b = plan.bounds;
    let call = &figures.call;
    if call.busy < b.busy_at_least {
        return Decision::TooShort;
    }
    if figures.python.gil_enabled == Some(false) {
        return Decision::NoGil;
    }
    if let Some(runqueue) = figures.runqueue.filter(|&rq| rq > b.runqueue_at_most) {
        return Decision::Saturated { runqueue };
    }
    let needed = readable_needed(figures.rounds);
    let arms = [
        &figures.call,
        &figures.controls.releases,
        &figures.controls.holds_half,
        &figures.controls.holds_all,
    ];
    if let Some(short) = arms.iter().find(|a| a.rounds.len() < needed) {
        return Decision::Unreadable {
            arm: short.arm.clone(),
            read: short.rounds.len(),
            needed,
        };
    }
    if figures.control_checks.iter().any(|c| !c.as_designed) {
        return Decision::ControlsOff;
    }
    let value = call.reading.median;
    let (answer, side, margin) = if value <= b.releases_at_most {
        let side = call.rounds.iter().filter(|&&r| r <= b.releases_at_most);
        (Expect::Releases, side.count(), b.releases_at_most - value)
    } else if value >= b.holds_at_least {
        let side = call.rounds.iter().filter(|&&r| r >= b.holds_at_least);
        (Expect::Holds, side.count(), value - b.holds_at_least)
    } else {
        return Decision::Ambiguous { value };
    };
    // Lost iterations cannot tell a busy core from a held GIL: a call that
    // keeps more than a core busy on its own takes the spinner's core, and
    // the spinner loses what it would lose to a held lock. A release
    // stands (noise only takes iterations away).
    // Under load the call alone gets less than the cores its pool asks
    // for (measured here at load average 14: a two-thread BLAS product read
    // 0.15-0.45 cores alone), so the pool's threads count too.
    if let (Instrument::Iterations, Expect::Holds) = (figures.instrument, answer) {
        let cores = alone_cores(figures);
        let threads = figures.library_threads.filter(|&n| n > 0);
        if cores.is_some_and(|c| c > LOST_ITERATIONS_ALONE_CORES_AT_MOST) || threads.is_some() {
            return Decision::FillsTheCores {
                value,
                cores,
                threads,
            };
        }
    }
    let verdict = match plan.expect {
        Some(e) if e != answer => Verdict::Fail,
        _ => Verdict::Pass,
    };
    Decision::Answer {
        answer,
        verdict,
        side,
        margin,
    }
}

/// Each control against the bound it is designed to read (releases,
/// holds-half, holds-all): the one place the controls are judged.
pub fn control_checks(c: &ControlFigures, b: GilBounds) -> Vec<ControlCheck> {
    [
        (&c.releases, Designed::AtMost(b.control_releases_at_most)),
        (&c.holds_half, Designed::AtLeast(b.control_half_at_least)),
        (&c.holds_all, Designed::AtLeast(b.control_all_at_least)),
    ]
    .into_iter()
    .map(|(arm, designed)| ControlCheck {
        designed,
        as_designed: designed.holds(arm.reading.median),
    })
    .collect()
}
