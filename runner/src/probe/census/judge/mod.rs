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
use crate::kernel::pss::GroupPss;
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
    /// Each process's PSS at the group's peak, workers named; None where
    /// it could not be read (`pss_note` says why). Reported, never judged.
    pub pss: Option<CensusPss>,
    pub pss_note: Option<String>,
    /// Milliseconds from readiness until enough workers answered (None:
    /// not within the bound).
    pub workers_up_ms: Option<u64>,
}

/// The server's memory at its peak: what each worker's copy of the app
/// costs (PSS: shared pages count in part to each sharer).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CensusPss {
    /// The group's summed PSS at its peak, KiB.
    pub peak_kib: u64,
    /// Each process at that peak, by pid.
    pub processes: Vec<ProcessPss>,
    pub samples: u32,
}

/// One process of the server's group at the peak.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ProcessPss {
    pub pid: i32,
    pub pss_kib: u64,
    /// Whether the census saw this process serve (a worker), or it is
    /// another process of the group (the master, a helper).
    pub worker: bool,
}

/// The PSS figures named by the census's workers, and a note where some
/// worker has no figure or none could be read.
pub fn census_pss(
    pss: &Result<GroupPss, String>,
    workers: &BTreeSet<u32>,
) -> (Option<CensusPss>, Option<String>) {
    let group = match pss {
        Err(e) => return (None, Some(format!("no PSS figures: {e}"))),
        Ok(g) => g,
    };
    let processes: Vec<ProcessPss> = group
        .per_process_kib
        .iter()
        .map(|&(pid, kib)| ProcessPss {
            pid,
            pss_kib: kib,
            worker: u32::try_from(pid).is_ok_and(|p| workers.contains(&p)),
        })
        .collect();
    let unseen: Vec<u32> = workers
        .iter()
        .copied()
        .filter(|w| !processes.iter().any(|p| p.worker && p.pid as u32 == *w))
        .collect();
    let note = (!unseen.is_empty()).then(|| {
        format!(
            "worker(s) {unseen:?} are not in the server's process group at the PSS peak \
             (they serve from another group, or ended): their PSS is not counted"
        )
    });
    let figures = CensusPss {
        peak_kib: group.peak_kib,
        processes,
        samples: group.samples,
    };
    (Some(figures), note)
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
            format!(
                "the fork control's parent reads its own runtime dead ({}); the detector (runtime.py in the app's folder) is broken",
                fork.parent.note.as_deref().unwrap_or(&fork.parent.check)
            ),
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
    let (pss, pss_note) = census_pss(&run.pss, &workers.union(&workers_after).copied().collect());
    let figures = CensusFigures {
        pss,
        pss_note,
        workers_up_ms: run.workers_up_ms,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn group(per: Vec<(i32, u64)>) -> Result<GroupPss, String> {
        Ok(GroupPss {
            peak_kib: per.iter().map(|p| p.1).sum(),
            per_process_kib: per,
            samples: 4,
        })
    }

    #[test]
    fn each_worker_is_named_and_the_master_is_not() {
        let workers = BTreeSet::from([11, 12]);
        let (p, note) = census_pss(
            &group(vec![(10, 17_000), (11, 220_000), (12, 218_000)]),
            &workers,
        );
        let p = p.unwrap();
        assert_eq!(p.peak_kib, 455_000);
        let named: Vec<(i32, bool)> = p.processes.iter().map(|q| (q.pid, q.worker)).collect();
        assert_eq!(named, vec![(10, false), (11, true), (12, true)]);
        assert_eq!(note, None);
    }

    #[test]
    fn a_worker_missing_from_the_group_or_an_unreadable_group_is_a_note_not_a_figure() {
        // The twin: a census worker absent at the peak is said, not counted.
        let workers = BTreeSet::from([11, 12]);
        let (p, note) = census_pss(&group(vec![(10, 17_000), (11, 220_000)]), &workers);
        assert_eq!(p.unwrap().processes.iter().filter(|q| q.worker).count(), 1);
        assert!(note.unwrap().contains("[12]"));
        let (p, note) = census_pss(
            &Err("cannot read PSS of process group 10: permission denied".into()),
            &workers,
        );
        assert_eq!(p, None);
        assert!(note.unwrap().contains("permission denied"));
    }
}
