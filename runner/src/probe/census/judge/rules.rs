//! Which rule decides a census, in order; no words here (`words.rs`).
//!
//! The fork control must show the detector can read "dead", or the census
//! proves nothing. Then each failure below fails the gate; with none, the
//! pair-ratio half (where the row has one) decides.

use super::figures::CensusFigures;
use crate::probe::census::measure::{CensusRun, ForkControl};
use crate::probe::census::CensusPlan;
use crate::probe::pair_ratio::PairRatioFigures;
use crate::verdict::{Judged, Verdict};

/// Why the fork control proves nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkProblem {
    /// It could not run.
    DidNotRun,
    /// Its parent reads its own runtime dead: the detector is broken.
    ParentDead,
    /// A forked child reads its runtime alive: the detector is blind.
    ChildAlive,
}

/// The fork control, or why it proves nothing.
pub fn fork_control(run: &CensusRun) -> Result<&ForkControl, ForkProblem> {
    let fork = run
        .fork_control
        .as_ref()
        .map_err(|_| ForkProblem::DidNotRun)?;
    if !fork.parent.alive {
        return Err(ForkProblem::ParentDead);
    }
    if fork.child.alive {
        return Err(ForkProblem::ChildAlive);
    }
    Ok(fork)
}

/// A failure of the mode under test, in reporting order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    RequestsFailed,
    /// The runtime does not run in some worker.
    DeadRuntimes,
    TooFewWorkers,
    /// The workers at the end are not the ones at the start.
    WorkersChanged,
}

/// Every failure the figures show.
pub fn failures(plan: &CensusPlan, run: &CensusRun, f: &CensusFigures) -> Vec<Failure> {
    let requests = !run.before.problems.is_empty() || !run.after.problems.is_empty();
    [
        (requests, Failure::RequestsFailed),
        (!f.dead_runtimes.is_empty(), Failure::DeadRuntimes),
        (
            (f.workers.len() as u32) < plan.workers_at_least,
            Failure::TooFewWorkers,
        ),
        (
            !f.workers_after.is_subset(&f.workers),
            Failure::WorkersChanged,
        ),
    ]
    .into_iter()
    .filter_map(|(failed, failure)| failed.then_some(failure))
    .collect()
}

/// The verdict: fail on any failure, else the pair-ratio half's (pass
/// without one).
pub fn verdict(failures: &[Failure], pair: Option<&Judged<PairRatioFigures>>) -> Verdict {
    match pair {
        _ if !failures.is_empty() => Verdict::Fail,
        None => Verdict::Pass,
        Some(j) => j.verdict,
    }
}
