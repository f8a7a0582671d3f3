//! The words of a census judgement: why the fork control proves nothing,
//! each failure (`rules.rs`), the reason, the confidence, the headline.

use super::figures::CensusFigures;
use super::rules::{Failure, ForkProblem};
use crate::probe::census::measure::CensusRun;
use crate::probe::census::CensusPlan;
use crate::probe::pair_ratio::PairRatioFigures;
use crate::verdict::Judged;

/// Why the fork control proves nothing.
pub fn fork_problem(run: &CensusRun, problem: ForkProblem) -> String {
    let fork = match &run.fork_control {
        Err(e) => return format!("the fork control could not run: {e}"),
        Ok(f) => f,
    };
    match problem {
        ForkProblem::DidNotRun => "the fork control could not run".into(),
        ForkProblem::ParentDead => format!(
            "the fork control's parent reads its own runtime dead ({}); the detector (runtime.py in the app's folder) is broken",
            fork.parent.note.as_deref().unwrap_or(&fork.parent.check)
        ),
        ForkProblem::ChildAlive => format!(
            "the detector is blind: a forked child reads its runtime alive (check: {}), so a worker's \"alive\" would mean nothing",
            fork.child.check
        ),
    }
}

/// `2w 1.02/1.98`: the workers, then the pair-ratio half's headline.
pub fn headline(f: &CensusFigures, pair: Option<&Judged<PairRatioFigures>>) -> String {
    match pair {
        Some(j) if !j.headline.is_empty() => format!("{}w {}", f.workers.len(), j.headline),
        _ => format!("{}w", f.workers.len()),
    }
}

fn failure(plan: &CensusPlan, run: &CensusRun, f: &CensusFigures, failure: Failure) -> String {
    let (workers, workers_after) = (&f.workers, &f.workers_after);
    match failure {
        Failure::RequestsFailed => {
            let problems: Vec<&str> = run
                .before
                .problems
                .iter()
                .chain(&run.after.problems)
                .map(String::as_str)
                .collect();
            format!(
                "{} census request(s) failed: {}",
                problems.len(),
                problems[..problems.len().min(3)].join("; ")
            )
        }
        Failure::DeadRuntimes => format!(
            "the runtime does not run in worker(s) {:?} (the app was imported in {:?}): the workers inherited it across fork",
            f.dead_runtimes, f.import_pids
        ),
        Failure::TooFewWorkers => format!(
            "only {} distinct worker(s) {workers:?} served {} requests (needs {}){}",
            workers.len(),
            run.before.replies.len(),
            plan.workers_at_least,
            if run.workers_up_ms.is_none() {
                format!(
                    "; no more had answered within {} ms after the fork control (twice the server's readiness time plus 2 s)",
                    run.workers_up_bound_ms
                )
            } else {
                String::new()
            }
        ),
        Failure::WorkersChanged => format!(
            "workers changed during the gate ({workers:?} then {workers_after:?}): they crash and respawn"
        ),
    }
}

/// The reason and the confidence.
pub fn reason(
    plan: &CensusPlan,
    run: &CensusRun,
    f: &CensusFigures,
    failures: &[Failure],
    pair: Option<&Judged<PairRatioFigures>>,
) -> (String, String) {
    let confidence = format!(
        "{} replies from {} worker(s), runtime checked by {}; fork control: parent alive, child dead",
        f.replies,
        f.workers.len(),
        f.check
    );
    if !failures.is_empty() {
        let failed: Vec<String> = failures.iter().map(|&x| failure(plan, run, f, x)).collect();
        return (failed.join("; "), confidence);
    }
    let base = format!(
        "{} workers {:?}, runtime alive in each, stable",
        f.workers.len(),
        f.workers
    );
    match pair {
        None => (base, confidence),
        Some(j) => (
            format!("{base}; parallel across processes: {}", j.reason),
            format!("{confidence}; parallel: {}", j.confidence),
        ),
    }
}
