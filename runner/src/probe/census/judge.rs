//! Judging a worker census (E15). The fork control must show the detector can
//! read "dead", or the census proves nothing: cannot judge. Then every
//! request must succeed, the runtime must run in every worker, the census
//! must see enough distinct workers, the same ones at the end as at the
//! start, and (where the row asks) the cross-process pair ratio must pass.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::Serialize;

use super::measure::{CensusRun, ForkControl};
use super::CensusPlan;
use crate::probe::pair_ratio::{self, PairRatioFigures};
use crate::spec::Trials;
use crate::verdict::{Judged, Verdict};

/// The judged figures of a census.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CensusFigures {
    pub fork_control: Option<ForkControl>,
    pub workers: BTreeSet<u32>,
    pub workers_at_least: u32,
    pub workers_after: BTreeSet<u32>,
    pub dead_runtimes: BTreeSet<u32>,
    pub import_pids: BTreeSet<u32>,
    pub replies: usize,
    /// The evidence the fixture used for "alive".
    pub check: String,
    pub pair_ratio: Option<PairRatioFigures>,
}

/// Judges a census; its pair-ratio half (where the row has one) is judged
/// by that kind and decides whether more trials are wanted.
pub fn judge(plan: &CensusPlan, trials: Trials, run: &CensusRun) -> Judged<CensusFigures> {
    let fork = match &run.fork_control {
        Err(e) => {
            return Judged::bare(
                Verdict::CannotJudge,
                format!("the fork control could not run: {e}"),
            )
        }
        Ok(f) => f.clone(),
    };
    if !fork.parent.alive {
        return Judged::bare(
            Verdict::CannotJudge,
            "the fork control's parent reads its own runtime dead; the detector (fixtures/bareapp/runtime.py) is broken".into(),
        );
    }
    if fork.child.alive {
        return Judged::bare(
            Verdict::CannotJudge,
            format!(
                "the detector is blind: a forked child reads its runtime alive (check: {}), so a worker's \"alive\" would mean nothing",
                fork.child.check
            ),
        );
    }
    let mut replies = run.before.replies.clone();
    replies.extend(run.after.replies.iter().cloned());
    let workers = run.before.pids();
    let workers_after = run.after.pids();
    let mut dead = run.before.dead();
    dead.extend(run.after.dead());
    let pair = run
        .pair_ratio
        .as_ref()
        .zip(plan.pair_ratio.as_ref())
        .map(|(r, p)| pair_ratio::judge::judge(p, trials, r).concluded());
    let figures = CensusFigures {
        fork_control: Some(fork),
        workers_at_least: plan.workers_at_least,
        import_pids: replies.iter().map(|r| r.import_pid).collect(),
        check: replies.first().map_or(String::new(), |r| r.check.clone()),
        replies: replies.len(),
        dead_runtimes: dead.clone(),
        pair_ratio: pair.as_ref().and_then(|j| j.figures.clone()),
        workers: workers.clone(),
        workers_after: workers_after.clone(),
    };
    let headline = match &pair {
        Some(j) if !j.headline.is_empty() => format!("{}w {}", workers.len(), j.headline),
        _ => format!("{}w", workers.len()),
    };
    let problems: Vec<&String> = run
        .before
        .problems
        .iter()
        .chain(&run.after.problems)
        .collect();
    let mut failed = Vec::new();
    if !problems.is_empty() {
        failed.push(format!(
            "{} census request(s) failed: {}",
            problems.len(),
            problems
                .iter()
                .take(3)
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if !dead.is_empty() {
        failed.push(format!(
            "the runtime does not run in worker(s) {dead:?} (the app was imported in {:?}): the workers inherited it across fork",
            figures.import_pids
        ));
    }
    if (workers.len() as u32) < plan.workers_at_least {
        failed.push(format!(
            "only {} distinct worker(s) {workers:?} served {} requests (needs {})",
            workers.len(),
            run.before.replies.len(),
            plan.workers_at_least
        ));
    }
    if !workers_after.is_subset(&workers) {
        failed.push(format!("workers changed during the gate ({workers:?} then {workers_after:?}): they crash and respawn"));
    }
    let mut confidence = format!(
        "{} replies from {} worker(s), runtime checked by {}; fork control: parent alive, child dead",
        figures.replies,
        workers.len(),
        figures.check
    );
    let pair_warnings = pair.as_ref().map_or(Vec::new(), |j| j.warnings.clone());
    let wrap = |verdict, reason, confidence| Judged {
        verdict,
        reason,
        confidence,
        figures: Some(figures.clone()),
        warnings: pair_warnings.clone(),
        headline: headline.clone(),
        unsettled: None,
    };
    if !failed.is_empty() {
        return wrap(Verdict::Fail, failed.join("; "), confidence);
    }
    let base = format!(
        "{} workers {workers:?}, runtime alive in each, stable",
        workers.len()
    );
    match pair {
        None => wrap(Verdict::Pass, base, confidence),
        Some(j) => {
            confidence = format!("{confidence}; parallel: {}", j.confidence);
            let reason = format!("{base}; parallel across processes: {}", j.reason);
            wrap(j.verdict, reason, confidence)
        }
    }
}
