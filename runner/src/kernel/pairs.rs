//! One mode's witnessed pairs reduced to spreads, once: the figures E19's
//! judge and advise both read (`probe/pair_ratio/rulebook.rs` applies the
//! rules to their medians). Pure functions over [`Witness`]es.

use schemars::JsonSchema;
use serde::Serialize;

use crate::kernel::witness::{ThreadFigures, Witness};
use crate::stats::Spread;

/// Which pairs count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// Every pair whose serving threads were all read, one thread or two: a
    /// gate's. A server that ran both requests on one thread must read
    /// about 1 and fail, so its pairs are evidence.
    EveryServed,
    /// Only pairs served by two threads, all read: advise's, which asks
    /// about the view, not the server (the server was told two threads; a
    /// pair one thread served says nothing of the view).
    TwoThreads,
}

/// One mode's witness over its pairs (medians and extremes per pair).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PairsReading {
    /// Pairs read.
    pub pairs: usize,
    /// Runnable parallelism of the serving threads per pair: the figure the
    /// rules judge by.
    pub parallelism: Spread,
    /// The same with the blocked time that run-queue waits of other tasks
    /// of the same process could explain (a lock holder waiting for a core)
    /// counted as runnable: the most noise could have hidden.
    pub unconvoyed: Spread,
    /// Runnable parallelism of the server's whole process group (a
    /// library's own threads count).
    pub group_parallelism: Option<Spread>,
    /// Σ on-CPU of the serving threads over the pair's wall: above 1 only
    /// when they ran on two CPUs at once.
    pub on_cpu_parallelism: Option<Spread>,
    /// The same over the whole group.
    pub group_on_cpu_parallelism: Option<Spread>,
    /// The serving threads' blocked share (neither running nor waiting for
    /// a core: the GIL, a lock, a join, a syscall).
    pub blocked: Spread,
    /// The serving threads' run-queue share (waiting for a core).
    pub run_queue: Spread,
    /// The serving threads' on-CPU share of the wall (each thread's share,
    /// averaged): near 1 computing, near 0 asleep.
    pub on_cpu: Spread,
    /// From the run state sampled beside either reading (`kernel/portable`):
    /// the share of samples in which both serving threads were runnable at
    /// once ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub together: Option<Spread>,
    /// ... and the unconvoyed P with only the group's *other* tasks' core
    /// waits counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unconvoyed_third: Option<Spread>,
    /// The host's idle time over each pair's wall, in cores (sampled beside
    /// either reading). Reported, not judged: a serving thread done with its
    /// own reply idles its core too (quiet, a releasing pair read 0.65-0.78),
    /// so it is no free-core witness by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_idle_cores: Option<Spread>,
    /// Each counted pair's own figures, in the order measured: which pairs
    /// read what, where the spreads above only bound them.
    pub each: Vec<PairPoint>,
}

/// One counted pair's figures.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PairPoint {
    pub parallelism: Option<f64>,
    pub unconvoyed: Option<f64>,
    /// The share of samples with both serving threads runnable.
    pub together: Option<f64>,
    pub host_idle_cores: Option<f64>,
    /// 1 + the serving threads' run-queue time over the pair's wall
    /// ([`Witness::core_wait_ratio`]): about 1 when a core was free for
    /// them whenever they were runnable.
    pub core_wait: Option<f64>,
    /// Σ on-CPU of the serving threads over the pair's wall.
    pub on_cpu: Option<f64>,
    /// The pair's wall and the whole group's on-CPU and run-queue time
    /// over it, beside each serving thread's own: which thread waited, and
    /// for what.
    pub wall_ns: u64,
    pub group_on_cpu_ns: u64,
    pub group_run_queue_ns: u64,
    pub threads: Vec<ThreadFigures>,
}

/// The pairs of `witnesses` that `counted` keeps.
pub fn counted(witnesses: &[Option<Witness>], counted: Counted) -> Vec<&Witness> {
    witnesses
        .iter()
        .flatten()
        .filter(|w| w.unseen.is_empty() && w.wall_ns > 0)
        .filter(|w| match counted {
            Counted::EveryServed => !w.threads.is_empty(),
            Counted::TwoThreads => w.threads.len() == 2,
        })
        .collect()
}

/// `witnesses` with only the pairs whose serving threads found a free core
/// whenever they were runnable (core-wait ratio at most `at_most`, E19's
/// `capacity_at_most`); the rest None, so the order stays the trials'.
pub fn with_free_core(witnesses: &[Option<Witness>], at_most: f64) -> Vec<Option<Witness>> {
    witnesses
        .iter()
        .map(|w| {
            w.clone()
                .filter(|w| w.core_wait_ratio().is_some_and(|c| c <= at_most))
        })
        .collect()
}

/// `witnesses` with only the less-loaded half of the pairs `which` counts:
/// the ⌈n/2⌉ whose serving threads waited for a core least (core-wait
/// ratio; ties kept); the rest None.
pub fn less_loaded_half(witnesses: &[Option<Witness>], which: Counted) -> Vec<Option<Witness>> {
    let mut waits: Vec<f64> = counted(witnesses, which)
        .iter()
        .filter_map(|w| w.core_wait_ratio())
        .collect();
    waits.sort_by(f64::total_cmp);
    match waits.get(waits.len().div_ceil(2).saturating_sub(1)) {
        Some(&cut) => with_free_core(witnesses, cut),
        None => vec![None; witnesses.len()],
    }
}

/// The serving threads' share of the wall in one figure, taken together.
fn share(w: &Witness, f: fn(&ThreadFigures) -> u64) -> f64 {
    let sum: u64 = w.threads.iter().map(f).sum();
    sum as f64 / (w.threads.len() as f64 * w.wall_ns as f64)
}

/// The reading of `witnesses`; None with no pair that counts.
pub fn reduce(witnesses: &[Option<Witness>], which: Counted) -> Option<PairsReading> {
    let pairs = counted(witnesses, which);
    let spread = |f: &dyn Fn(&Witness) -> Option<f64>| {
        Spread::of(&pairs.iter().filter_map(|w| f(w)).collect::<Vec<_>>())
    };
    Some(PairsReading {
        pairs: pairs.len(),
        parallelism: spread(&Witness::serving_parallelism)?,
        unconvoyed: spread(&Witness::serving_parallelism_unconvoyed)?,
        group_parallelism: spread(&|w| w.parallelism),
        on_cpu_parallelism: spread(&Witness::serving_on_cpu_parallelism),
        group_on_cpu_parallelism: spread(&Witness::group_on_cpu_parallelism),
        blocked: spread(&|w| Some(share(w, |t| t.blocked_ns)))?,
        run_queue: spread(&|w| Some(share(w, |t| t.run_queue_ns)))?,
        on_cpu: spread(&|w| Some(share(w, |t| t.on_cpu_ns)))?,
        together: spread(&|w| w.sampled.and_then(|s| s.together)),
        unconvoyed_third: spread(&|w| w.sampled.and_then(|s| s.unconvoyed_third)),
        host_idle_cores: spread(&|w| w.sampled.and_then(|s| s.host_idle_cores)),
        each: pairs
            .iter()
            .map(|w| PairPoint {
                parallelism: w.serving_parallelism(),
                unconvoyed: w.serving_parallelism_unconvoyed(),
                together: w.sampled.and_then(|s| s.together),
                host_idle_cores: w.sampled.and_then(|s| s.host_idle_cores),
                core_wait: w.core_wait_ratio(),
                on_cpu: w.serving_on_cpu_parallelism(),
                wall_ns: w.wall_ns,
                group_on_cpu_ns: w.on_cpu_ns,
                group_run_queue_ns: w.run_queue_ns,
                threads: w.threads.clone(),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn pair(threads: &[(u64, u64)], unseen: Vec<i32>) -> Witness {
        let wall = 40 * MS;
        Witness {
            wall_ns: wall,
            parallelism: Some(1.0),
            on_cpu_ns: threads.iter().map(|t| t.0 * MS).sum(),
            run_queue_ns: 0,
            threads: threads
                .iter()
                .enumerate()
                .map(|(i, &(on, rq))| ThreadFigures {
                    tid: i as i32,
                    on_cpu_ns: on * MS,
                    run_queue_ns: rq * MS,
                    blocked_ns: wall - (on + rq) * MS,
                    others_run_queue_ns: 0,
                })
                .collect(),
            unseen,
            appeared: 0,
            vanished: 0,
            sampled: None,
        }
    }

    #[test]
    fn a_gate_counts_one_thread_pairs_and_advise_does_not() {
        let ws = vec![
            Some(pair(&[(40, 0), (40, 0)], vec![])),
            Some(pair(&[(40, 0)], vec![])),
            None,
            Some(pair(&[(40, 0)], vec![7])),
        ];
        let gate = reduce(&ws, Counted::EveryServed).unwrap();
        assert_eq!(gate.pairs, 2);
        assert_eq!((gate.parallelism.min, gate.parallelism.max), (1.0, 2.0));
        // Twin: advise keeps only the pair two threads served.
        let advise = reduce(&ws, Counted::TwoThreads).unwrap();
        assert_eq!(advise.pairs, 1);
        assert_eq!(advise.parallelism.median, 2.0);
        assert_eq!(advise.on_cpu_parallelism.unwrap().median, 2.0);
        assert_eq!(advise.on_cpu.median, 1.0);
        assert_eq!(reduce(&ws[1..], Counted::TwoThreads), None);
    }

    #[test]
    fn shares_are_of_the_serving_threads_together() {
        let ws = vec![Some(pair(&[(20, 10), (10, 0)], vec![]))];
        let r = reduce(&ws, Counted::EveryServed).unwrap();
        assert!((r.on_cpu.median - 30.0 / 80.0).abs() < 1e-9);
        assert!((r.run_queue.median - 10.0 / 80.0).abs() < 1e-9);
        assert!((r.blocked.median - 40.0 / 80.0).abs() < 1e-9);
        assert!((r.parallelism.median - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_less_loaded_half_keeps_the_pairs_that_waited_least() {
        // Core-wait ratios 1.5, 1.0, 1.25, 1.75 (run-queue ms per thread
        // 10, 0, 5, 15 over 40 ms): the half is the 1.0 and the 1.25.
        let ws: Vec<_> = [10, 0, 5, 15]
            .iter()
            .map(|&rq| Some(pair(&[(20, rq), (20, rq)], vec![])))
            .collect();
        let half = less_loaded_half(&ws, Counted::TwoThreads);
        let kept: Vec<bool> = half.iter().map(Option::is_some).collect();
        assert_eq!(kept, [false, true, true, false]);
        // Twin: with one pair more (1.1) the half is three pairs.
        let mut ws = ws;
        ws.push(Some(pair(&[(20, 2), (20, 2)], vec![])));
        let half = less_loaded_half(&ws, Counted::TwoThreads);
        assert_eq!(half.iter().flatten().count(), 3);
        assert!(half[0].is_none() && half[4].is_some());
    }

    #[test]
    fn the_hosts_idle_cores_are_read_from_the_sampled_pairs_only() {
        let sampled = |idle: Option<f64>| {
            let mut w = pair(&[(40, 0), (40, 0)], vec![]);
            w.sampled = Some(crate::kernel::witness::SampledFacts {
                samples: 40,
                host_idle_cores: idle,
                together: None,
                unconvoyed_third: None,
            });
            Some(w)
        };
        let ws = vec![sampled(Some(0.0)), sampled(Some(0.8)), sampled(None)];
        let r = reduce(&ws, Counted::TwoThreads).unwrap();
        let idle = r.host_idle_cores.unwrap();
        assert_eq!((idle.min, idle.max), (0.0, 0.8));
        // Each pair keeps its own, in the order measured.
        let each: Vec<_> = r.each.iter().map(|p| p.host_idle_cores).collect();
        assert_eq!(each, [Some(0.0), Some(0.8), None]);
        assert_eq!(r.each[0].parallelism, Some(2.0));
        // Twin: pairs with no sampled run state report no idle figure.
        let unsampled = vec![Some(pair(&[(40, 0), (40, 0)], vec![]))];
        assert_eq!(
            reduce(&unsampled, Counted::TwoThreads)
                .unwrap()
                .host_idle_cores,
            None
        );
    }
}
