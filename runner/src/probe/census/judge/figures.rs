//! A census reduced to figures: the workers that served, before and after,
//! the dead runtimes, the pair-ratio half's figures and the PSS at the peak.
//! No verdict here (`rules.rs`), no words (`words.rs`).

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::Serialize;

use crate::kernel::pss::GroupPss;
use crate::probe::census::measure::{CensusRun, ForkControl};
use crate::probe::census::CensusPlan;
use crate::probe::pair_ratio::PairRatioFigures;
use crate::verdict::Judged;

/// The judged figures of a census.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CensusFigures {
    pub fork_control: Option<ForkControl>,
    /// The workers that served the first census, and any that served only
    /// the last one but were in the server's group at the start.
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

/// The census's figures, the fork control having read as designed.
pub fn reduce(
    plan: &CensusPlan,
    run: &CensusRun,
    fork: &ForkControl,
    pair: Option<&Judged<PairRatioFigures>>,
) -> CensusFigures {
    let mut replies = run.before.replies.clone();
    replies.extend(run.after.replies.iter().cloned());
    let workers_after = run.after.pids();
    // A worker that answered only at the end counts as one of the workers
    // when it was already in the server's group at the start: the census
    // did not reach it then; it was not respawned.
    let mut workers = run.before.pids();
    workers.extend(
        workers_after
            .iter()
            .filter(|&&p| i32::try_from(p).is_ok_and(|p| run.members_at_start.contains(&p))),
    );
    let mut dead = run.before.dead();
    dead.extend(run.after.dead());
    let (pss, pss_note) = census_pss(&run.pss, &workers.union(&workers_after).copied().collect());
    CensusFigures {
        pss,
        pss_note,
        workers_up_ms: run.workers_up_ms,
        fork_control: Some(fork.clone()),
        workers_at_least: plan.workers_at_least,
        import_pids: replies.iter().map(|r| r.import_pid).collect(),
        check: replies.first().map_or(String::new(), |r| r.check.clone()),
        replies: replies.len(),
        dead_runtimes: dead,
        pair_ratio: pair.and_then(|j| j.figures.clone()),
        workers,
        workers_after,
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
