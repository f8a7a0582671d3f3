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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::census::judge::figures;
    use crate::probe::census::measure::{Census, RuntimeStatus};

    fn status(pid: u32, alive: bool) -> RuntimeStatus {
        RuntimeStatus {
            pid,
            import_pid: pid,
            alive,
            heartbeat_advanced: alive,
            tid_listed: Some(alive),
            python_says_alive: Some(alive),
            note: None,
            check: "heartbeat+proc-task".into(),
        }
    }

    fn census(pids: &[u32]) -> Census {
        Census {
            replies: pids.iter().map(|&p| status(p, true)).collect(),
            problems: Vec::new(),
        }
    }

    fn plan() -> CensusPlan {
        CensusPlan {
            runtime_path: "/runtime".into(),
            requests: 4,
            workers_at_least: 2,
            connections_at_most: 16,
            pair_ratio: None,
            app: None,
            requires: Vec::new(),
        }
    }

    fn failures_of(before: &[u32], after: &[u32], members_at_start: &[i32]) -> Vec<Failure> {
        let run = CensusRun {
            fork_control: Ok(ForkControl {
                parent: status(1, true),
                child: status(2, false),
            }),
            workers_up_ms: None,
            workers_up_bound_ms: 2_000,
            members_at_start: members_at_start.to_vec(),
            before: census(before),
            after: census(after),
            pair_ratio: None,
            pss: Err("not read".into()),
        };
        let fork = fork_control(&run).unwrap().clone();
        let f = figures::reduce(&plan(), &run, &fork, None);
        failures(&plan(), &run, &f)
    }

    #[test]
    fn a_worker_unreached_at_the_start_but_in_the_group_then_is_neither_missing_nor_respawned() {
        // uvicorn on a two-core CI runner: the first census reached one
        // worker of two, the last both; both were in the group at the start.
        assert_eq!(failures_of(&[11, 11], &[11, 12], &[10, 11, 12]), vec![]);
        // The twin: the worker answering at the end was not in the group at
        // the start (a respawn), so the census says too few and changed.
        assert_eq!(
            failures_of(&[11, 11], &[11, 12], &[10, 11]),
            vec![Failure::TooFewWorkers, Failure::WorkersChanged]
        );
        // Where the group could not be listed, a new pid is a change.
        assert_eq!(
            failures_of(&[11, 12], &[11, 13], &[]),
            vec![Failure::WorkersChanged]
        );
        assert_eq!(failures_of(&[11, 12], &[12, 11], &[]), vec![]);
    }
}
