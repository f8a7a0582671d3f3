//! One pair's portable readings reduced to the counters the witness reads
//! (`kernel/witness.rs`), so the same figures and the same rulebook judge a
//! pair whichever reading took it. Pure functions over recorded samples.
//!
//! What the portable reading has, per task: on-CPU time at both ends of
//! the pair (exact), and its run state sampled at a bounded rate in between
//! (runnable, meaning on a CPU or waiting for one, against asleep). What it
//! lacks is the run-queue counter. So:
//!
//! - runnable time ≈ (runnable samples / samples) × wall, never under the
//!   on-CPU time actually counted;
//! - run-queue time ≈ runnable time − on-CPU time (waiting for a core);
//! - blocked time = wall − runnable time (asleep: a lock, the GIL, I/O).
//!
//! The samples also keep their order, which the counters do not: the share
//! of sampling rounds in which both serving threads read runnable at once
//! ([`together`]). Two threads behind one lock almost never are (the
//! waiter sleeps while the holder runs or waits for a core); two computing
//! at once nearly always are, with or without a free core.
//!
//! The accounting's reading (Linux's `on` witness) samples run state
//! beside its exact counters too, so the order facts ([`facts`]) come from
//! the same function whichever reading took the counters, and the rulebook
//! has one "took turns" rule for both.
//!
//! Host idle (every CPU's idle time over the pair, in cores) is a second,
//! independent reading of "was a core free": threads read as waiting for a
//! core while the host idled a core or more contradict each other, and
//! such a pair has no reading rather than a guessed one.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::kernel::schedstat::{self, GroupDelta, Snapshot, TaskTimes};
pub use crate::kernel::witness::SampledFacts;
use crate::kernel::witness::Witness;

/// The fewest state samples a pair needs (about 1 ms apart, so a pair of
/// at least 8 ms, the shortest any row times, has them quiet).
pub const SAMPLES_AT_LEAST: u32 = 8;
/// The group's estimated wait for a core, in cores over the pair, above
/// which ...
pub const CORE_WAIT_CONTRADICTS: f64 = 0.5;
/// ... host idle of at least this many cores contradicts it (a runnable
/// thread is given an idle core within a scheduler tick). Host idle counts
/// in ticks (10 ms on Linux and macOS), so this leaves a tick of slack on a
/// 20 ms pair.
pub const HOST_IDLE_CONTRADICTS: f64 = 1.0;

/// One task's readings over one pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskRecord {
    pub pid: i32,
    pub tid: i32,
    /// On-CPU ns at the first and the last read; None where the task was
    /// not there (it started or ended in between).
    pub on_cpu_before_ns: Option<u64>,
    pub on_cpu_after_ns: Option<u64>,
    /// Samples that read it runnable (on a CPU or waiting for one).
    pub runnable: u32,
    /// Samples that read it at all.
    pub samples: u32,
    /// Each sampling round's reading of it, in order (None: unread).
    pub states: Vec<Option<bool>>,
}

/// Everything one pair's portable reading recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairRecord {
    /// Between the first and the last on-CPU read.
    #[serde(serialize_with = "as_ns")]
    pub wall: Duration,
    pub tasks: Vec<TaskRecord>,
    /// Sampling rounds taken (each reads every task once).
    pub rounds: u32,
    /// The host's idle time summed over CPUs, ns, at both ends; None where
    /// it could not be read.
    pub host_idle_ns: Option<(u64, u64)>,
}

fn as_ns<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The fewest sampling rounds that read both serving threads for
/// [`together`] to be read.
pub const TOGETHER_ROUNDS_AT_LEAST: usize = 8;

/// The share of sampling rounds in which every one of the (two or more)
/// `serving` tasks read runnable at once; None with fewer than two, or too
/// few rounds that read them all.
pub fn together(record: &PairRecord, serving: &[i32]) -> Option<f64> {
    let mut unique = serving.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let tasks: Vec<&TaskRecord> = unique
        .iter()
        .filter_map(|tid| record.tasks.iter().find(|t| t.tid == *tid))
        .collect();
    if tasks.len() < 2 || tasks.len() != unique.len() {
        return None;
    }
    let rounds = tasks.iter().map(|t| t.states.len()).min()?;
    let (mut read, mut both) = (0usize, 0usize);
    for i in 0..rounds {
        let states: Option<Vec<bool>> = tasks.iter().map(|t| t.states[i]).collect();
        if let Some(states) = states {
            read += 1;
            both += usize::from(states.iter().all(|&r| r));
        }
    }
    (read >= TOGETHER_ROUNDS_AT_LEAST).then(|| both as f64 / read as f64)
}

/// [`SampledFacts::unconvoyed_third`] of a witness read from `delta`.
pub fn unconvoyed_third(delta: &GroupDelta, w: &Witness) -> Option<f64> {
    if w.threads.is_empty() || w.wall_ns == 0 {
        return None;
    }
    let serving: Vec<i32> = w.threads.iter().map(|t| t.tid).collect();
    let third: u64 = delta
        .tasks
        .iter()
        .filter(|t| !serving.contains(&t.tid))
        .map(|t| t.run_queue_ns)
        .sum();
    let runnable: u64 = w
        .threads
        .iter()
        .map(|t| {
            t.on_cpu_ns
                .saturating_add(t.run_queue_ns)
                .saturating_add(t.blocked_ns.min(third))
        })
        .sum();
    Some(runnable as f64 / w.wall_ns as f64)
}

/// On-CPU ns per (pid, tid) at one moment ([`super::on_cpu_now`]).
pub type OnCpuNs = std::collections::BTreeMap<(i32, i32), u64>;

/// The tasks that ran between two readings of on-CPU time: those whose
/// time grew, or that appeared with some (a task that started and ran in
/// between). What the accounting's "on-CPU delta > 0" counts, from the one
/// figure the portable reading has exactly.
pub fn tasks_that_ran(before: &OnCpuNs, after: &OnCpuNs) -> usize {
    after
        .iter()
        .filter(|(task, &now)| now > before.get(task).copied().unwrap_or(0))
        .count()
}

/// Why a pair has no portable reading.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unreadable {
    /// Fewer than [`SAMPLES_AT_LEAST`] sampling rounds.
    TooFewSamples { samples: u32 },
    /// The threads read as waiting for a core while the host idled: the
    /// samples and the host disagree.
    Contradicts { core_wait: f64, host_idle: f64 },
}

/// The host's idle time over the pair, in cores; None where it was not
/// read or the pair has no wall.
pub fn host_idle_cores(record: &PairRecord) -> Option<f64> {
    let wall_ns = record.wall.as_nanos() as f64;
    record
        .host_idle_ns
        .filter(|_| wall_ns > 0.0)
        .map(|(a, b)| b.saturating_sub(a) as f64 / wall_ns)
}

/// What the samples add to a pair's witness `w`, whichever reading took
/// the counters (`delta`: the accounting's exact one, or [`reduce`]'s
/// estimate): the rounds, host idle, the serving threads' [`together`]
/// share and the [`unconvoyed_third`] figure.
pub fn facts(
    record: &PairRecord,
    delta: &GroupDelta,
    w: &Witness,
    serving: &[i32],
) -> SampledFacts {
    SampledFacts {
        samples: record.rounds,
        host_idle_cores: host_idle_cores(record),
        together: together(record, serving),
        unconvoyed_third: unconvoyed_third(delta, w),
    }
}

/// The pair's counters as the schedstat reading would give them (run-queue
/// time estimated from the samples); [`facts`] adds what only samples have.
pub fn reduce(record: &PairRecord) -> Result<GroupDelta, Unreadable> {
    if record.rounds < SAMPLES_AT_LEAST {
        return Err(Unreadable::TooFewSamples {
            samples: record.rounds,
        });
    }
    let wall_ns = u64::try_from(record.wall.as_nanos()).unwrap_or(u64::MAX);
    let at = Instant::now();
    let mut before = Vec::new();
    let mut after = Vec::new();
    for t in &record.tasks {
        let times = |on_cpu_ns: u64, run_queue_ns: u64| TaskTimes {
            pid: t.pid,
            tid: t.tid,
            on_cpu_ns,
            run_queue_ns,
            slices: 0,
        };
        if let Some(on) = t.on_cpu_before_ns {
            before.push(times(on, 0));
        }
        if let Some(on) = t.on_cpu_after_ns {
            let on_cpu = on.saturating_sub(t.on_cpu_before_ns.unwrap_or(0));
            let share = if t.samples == 0 {
                0.0
            } else {
                f64::from(t.runnable) / f64::from(t.samples)
            };
            let runnable = ((share * wall_ns as f64) as u64)
                .max(on_cpu)
                .min(wall_ns.max(on_cpu));
            // The run-queue estimate rides on the later read (the earlier
            // one's is 0), so the delta carries it.
            after.push(times(on, runnable - on_cpu));
        }
    }
    let delta = schedstat::delta(
        &Snapshot::from_tasks(at, before),
        &Snapshot::from_tasks(at + record.wall, after),
    );
    if let Some(idle) = host_idle_cores(record) {
        let core_wait = if wall_ns == 0 {
            0.0
        } else {
            delta.run_queue_ns as f64 / wall_ns as f64
        };
        if core_wait >= CORE_WAIT_CONTRADICTS && idle >= HOST_IDLE_CONTRADICTS {
            return Err(Unreadable::Contradicts {
                core_wait,
                host_idle: idle,
            });
        }
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::pairs::{self, Counted};
    use crate::kernel::witness::witness;
    use crate::probe::pair_ratio::rulebook::{rule, Medians, Rules, Ruling};

    const MS: u64 = 1_000_000;

    /// A recorded pair of `wall_ms`: per task (tid, on-CPU ms, runnable
    /// samples of `rounds`, the round its runnable run starts at), and the
    /// host's idle ms over it.
    fn record(
        wall_ms: u64,
        rounds: u32,
        tasks: &[(i32, u64, u32, u32)],
        idle_ms: u64,
    ) -> PairRecord {
        PairRecord {
            wall: Duration::from_millis(wall_ms),
            tasks: tasks
                .iter()
                .map(|&(tid, on, runnable, from)| TaskRecord {
                    pid: 100,
                    tid,
                    on_cpu_before_ns: Some(1_000 * MS),
                    on_cpu_after_ns: Some(1_000 * MS + on * MS),
                    runnable,
                    samples: rounds,
                    states: (0..rounds)
                        .map(|i| Some(i >= from && i < from + runnable))
                        .collect(),
                })
                .collect(),
            rounds,
            host_idle_ns: Some((5_000 * MS, 5_000 * MS + idle_ms * MS)),
        }
    }

    fn read(r: &PairRecord, serving: &[i32]) -> Witness {
        let delta = reduce(r).unwrap();
        let mut w = witness(&delta, serving);
        w.sampled = Some(facts(r, &delta, &w, serving));
        w
    }

    /// The rulebook's call (E19's rules) on five pairs like `view`
    /// against five like `control`.
    fn ruling(view: &Witness, control: &Witness) -> Ruling {
        let five = |w: &Witness| vec![Some(w.clone()); 5];
        let v = pairs::reduce(&five(view), Counted::EveryServed).unwrap();
        let c = pairs::reduce(&five(control), Counted::EveryServed).unwrap();
        rule(&Medians::of(&v), &Medians::of(&c), &e19())
    }

    /// E19's rules, from the row itself.
    fn e19() -> Rules {
        let row = crate::spec::row::parse_row(
            std::path::Path::new("specs/E19.yaml"),
            include_str!("../../../../specs/E19.yaml"),
        )
        .unwrap();
        match row.plan {
            crate::probe::Plan::PairRatio(p) => Rules::of_plan(&p).unwrap(),
            _ => unreachable!("E19 is a pair-ratio row"),
        }
    }

    // Pairs of the shape the Linux reader gave on this machine (2 cores):
    // granian or the fault server, two threads, E19's 24 MiB views; tids 1
    // and 2 serve, 3 is the server's I/O thread.

    /// Releasing, quiet: both threads on a CPU nearly all of a 21 ms pair.
    fn releasing_quiet() -> PairRecord {
        record(21, 20, &[(1, 19, 19, 0), (2, 19, 20, 0), (3, 1, 1, 0)], 1)
    }
    /// Holding, quiet: the two take turns; each runnable about half.
    fn holding_quiet() -> PairRecord {
        record(40, 38, &[(1, 20, 20, 0), (2, 20, 19, 19), (3, 1, 1, 0)], 38)
    }
    /// Releasing with one core spinning elsewhere: each thread is runnable
    /// all along, on a CPU half of it (waiting for the one free core).
    fn releasing_one_core() -> PairRecord {
        record(40, 36, &[(1, 20, 36, 0), (2, 19, 35, 0), (3, 1, 2, 0)], 0)
    }
    /// A server that serialises every view behind one lock, one core busy
    /// elsewhere: the waiter sleeps on the lock (not runnable).
    fn serialised_one_core() -> PairRecord {
        record(44, 40, &[(1, 20, 21, 0), (2, 20, 20, 20), (3, 1, 1, 0)], 2)
    }
    /// The same server on a machine loaded several times over: the lock's
    /// holder waits for a core half its time, so the waiter's sleep could
    /// be a convoy by the counters alone; the samples show the two were
    /// never runnable at once.
    fn serialised_loaded() -> PairRecord {
        record(80, 76, &[(1, 20, 38, 0), (2, 20, 38, 38), (3, 1, 1, 0)], 0)
    }
    /// A releasing pair on that machine: both runnable together all along.
    fn releasing_loaded() -> PairRecord {
        record(80, 76, &[(1, 40, 70, 0), (2, 40, 70, 3), (3, 1, 2, 0)], 0)
    }

    #[test]
    fn sampled_state_tells_a_core_wait_from_a_lock_wait() {
        let hold = read(&holding_quiet(), &[1, 2]);
        // Waiting for a core reads runnable: about 2, a pass ...
        let rel = read(&releasing_one_core(), &[1, 2]);
        assert!(rel.serving_parallelism().unwrap() > 1.9, "{rel:?}");
        assert_eq!(ruling(&rel, &hold), Ruling::AtOnce);
        // ... its twin, waiting for a lock, reads asleep: about 1, turns.
        let ser = read(&serialised_one_core(), &[1, 2]);
        assert!(ser.serving_parallelism().unwrap() < 1.1, "{ser:?}");
        assert_eq!(ruling(&ser, &hold), Ruling::TookTurns);
    }

    #[test]
    fn on_cpu_time_proves_parallelism_the_samples_need_not() {
        // Quiet: the exact on-CPU sum over the wall passes 1.3, which only
        // two CPUs at once can give.
        let hold = read(&holding_quiet(), &[1, 2]);
        let rel = read(&releasing_quiet(), &[1, 2]);
        assert!(rel.serving_on_cpu_parallelism().unwrap() > 1.8);
        assert_eq!(ruling(&rel, &hold), Ruling::OnTwoCpus);
        // Twin: the holding control itself is on one CPU at a time.
        assert!(hold.serving_on_cpu_parallelism().unwrap() < 1.01);
    }

    #[test]
    fn the_estimate_never_reads_less_runnable_than_on_cpu() {
        // Samples that missed the running moments: runnable is at least
        // the counted on-CPU time, so no negative run-queue time ...
        let r = record(20, 10, &[(1, 18, 2, 0)], 0);
        let d = reduce(&r).unwrap();
        assert_eq!((d.on_cpu_ns, d.run_queue_ns), (18 * MS, 0));
        // ... and its twin: runnable samples past on-CPU time are the wait.
        let r = record(20, 10, &[(1, 10, 10, 0)], 0);
        let d = reduce(&r).unwrap();
        assert_eq!((d.on_cpu_ns, d.run_queue_ns), (10 * MS, 10 * MS));
    }

    #[test]
    fn never_runnable_together_is_turns_where_the_counters_cannot_tell() {
        let hold = read(&holding_quiet(), &[1, 2]);
        let ser = read(&serialised_loaded(), &[1, 2]);
        let facts = ser.sampled.unwrap();
        assert_eq!(facts.together, Some(0.0));
        // By the counters alone the holder's core wait could explain the
        // waiter's sleep: the unconvoyed figure reads past E19's 1.4.
        assert!(ser.serving_parallelism_unconvoyed().unwrap() > 1.4);
        assert_eq!(ruling(&ser, &hold), Ruling::TookTurns);
        // Twin: a releasing pair on the same machine, runnable together,
        // is never turns.
        let rel = read(&releasing_loaded(), &[1, 2]);
        assert!(rel.sampled.unwrap().together.unwrap() > 0.8);
        assert_eq!(ruling(&rel, &hold), Ruling::AtOnce);
    }

    /// Exact counters as Linux's accounting gives them: (tid, on-CPU ms,
    /// run-queue ms) per task over `wall_ms`.
    fn accounting(wall_ms: u64, tasks: &[(i32, u64, u64)]) -> GroupDelta {
        let at = Instant::now();
        let times = |tid, on: u64, rq: u64| TaskTimes {
            pid: 100,
            tid,
            on_cpu_ns: on * MS,
            run_queue_ns: rq * MS,
            slices: 1,
        };
        schedstat::delta(
            &Snapshot::from_tasks(at, tasks.iter().map(|&(t, _, _)| times(t, 0, 0)).collect()),
            &Snapshot::from_tasks(
                at + Duration::from_millis(wall_ms),
                tasks.iter().map(|&(t, on, rq)| times(t, on, rq)).collect(),
            ),
        )
    }

    /// The `on` witness: the accounting's exact counters, with the facts
    /// of the run-state samples taken beside them.
    fn read_accounting(delta: &GroupDelta, samples: Option<&PairRecord>) -> Witness {
        let mut w = witness(delta, &[1, 2]);
        w.sampled = samples.map(|r| facts(r, delta, &w, &[1, 2]));
        w
    }

    #[test]
    fn the_accountings_counters_take_the_samples_order_too() {
        // A server serialising behind one lock on a loaded machine, read by
        // the accounting: the holder waits for a core 30 of its 50 ms, so
        // the waiter's 50 ms asleep could be a convoy behind it; by the
        // counters alone the unconvoyed P reads 1.6, past E19's 1.4.
        let hold = read(&holding_quiet(), &[1, 2]);
        let delta = accounting(100, &[(1, 20, 30), (2, 20, 30), (3, 1, 0)]);
        let alone = read_accounting(&delta, None);
        assert!(alone.serving_parallelism_unconvoyed().unwrap() > 1.4);
        assert_eq!(ruling(&alone, &hold), Ruling::Between);
        // The samples beside it: never runnable at once. Same rule as the
        // portable reading's: took turns.
        let turns = record(100, 95, &[(1, 20, 47, 0), (2, 20, 47, 48), (3, 1, 1, 0)], 0);
        let w = read_accounting(&delta, Some(&turns));
        assert_eq!(w.sampled.unwrap().together, Some(0.0));
        assert_eq!(ruling(&w, &hold), Ruling::TookTurns);
        // Twin: the same counters with samples that read the two runnable
        // together stay unjudged; the order, not the counters, decided.
        let at_once = record(100, 95, &[(1, 20, 90, 0), (2, 20, 90, 2), (3, 1, 1, 0)], 0);
        let w = read_accounting(&delta, Some(&at_once));
        assert!(w.sampled.unwrap().together.unwrap() > 0.8);
        assert_eq!(ruling(&w, &hold), Ruling::Between);
    }

    #[test]
    fn a_starved_third_task_keeps_turns_unproven() {
        // Never together, but the I/O thread (3) waited for a core as long
        // as the pair: it may have handed the second request over late.
        let mut r = serialised_loaded();
        r.tasks[2].states = vec![Some(true); 76];
        r.tasks[2].runnable = 76;
        let hold = read(&holding_quiet(), &[1, 2]);
        let w = read(&r, &[1, 2]);
        assert!(w.sampled.unwrap().unconvoyed_third.unwrap() > 1.4);
        assert_eq!(ruling(&w, &hold), Ruling::Between);
    }

    #[test]
    fn together_needs_two_serving_threads_read_often_enough() {
        let r = releasing_quiet();
        assert_eq!(together(&r, &[1]), None);
        assert_eq!(together(&r, &[1, 1]), None);
        assert_eq!(together(&r, &[1, 9]), None);
        let mut short = r.clone();
        for t in &mut short.tasks {
            t.states.truncate(TOGETHER_ROUNDS_AT_LEAST - 1);
        }
        assert_eq!(together(&short, &[1, 2]), None);
        // Twin: read in full, about all rounds together.
        assert!(together(&r, &[1, 2]).unwrap() > 0.9);
    }

    #[test]
    fn a_task_ran_when_its_on_cpu_time_grew() {
        let before: OnCpuNs = [((100, 1), 5 * MS), ((100, 2), 7 * MS), ((100, 3), 0)].into();
        // 1 ran, 2 did not, 3 ran from zero, 4 started and ran, 5 started
        // and never ran; a task gone since is not counted.
        let after: OnCpuNs = [
            ((100, 1), 6 * MS),
            ((100, 2), 7 * MS),
            ((100, 3), 1),
            ((100, 4), MS),
            ((100, 5), 0),
        ]
        .into();
        assert_eq!(tasks_that_ran(&before, &after), 3);
        // Twin: nothing moved, nothing ran.
        assert_eq!(tasks_that_ran(&before, &before), 0);
    }

    #[test]
    fn too_few_samples_is_no_reading() {
        let mut r = releasing_quiet();
        r.rounds = SAMPLES_AT_LEAST - 1;
        assert_eq!(
            reduce(&r).map(|_| ()),
            Err(Unreadable::TooFewSamples {
                samples: SAMPLES_AT_LEAST - 1
            })
        );
        // Twin: at the floor it reads.
        r.rounds = SAMPLES_AT_LEAST;
        assert!(reduce(&r).is_ok());
    }

    #[test]
    fn a_core_wait_beside_an_idle_host_is_no_reading() {
        // The samples say both threads waited for a core half the pair,
        // yet the host idled more than a core: they cannot both be right.
        let r = record(40, 36, &[(1, 20, 36, 0), (2, 19, 35, 0)], 45);
        assert!(matches!(reduce(&r), Err(Unreadable::Contradicts { .. })));
        // Twin: the same samples with the host busy are a core wait.
        let r = record(40, 36, &[(1, 20, 36, 0), (2, 19, 35, 0)], 2);
        assert!(reduce(&r).is_ok());
        assert!((host_idle_cores(&r).unwrap() - 0.05).abs() < 1e-9);
    }

    #[test]
    fn a_task_that_came_or_went_mid_pair_counts_as_the_accounting_would() {
        let mut r = releasing_quiet();
        r.tasks[2].on_cpu_before_ns = None;
        r.tasks[1].on_cpu_after_ns = None;
        let d = reduce(&r).unwrap();
        assert_eq!((d.appeared, d.vanished), (1, 1));
    }
}
