//! The gil-probe's portable reading (`--witness portable`; the default on
//! macOS): the spinner's run state and on-CPU time, sampled from outside
//! its process by `kernel/portable` while the rounds run, reduced here to
//! each round's figures. Pure functions.
//!
//! Over a round's span (`t0`..`t1`, the instrument's perf_counter edges):
//! - on-CPU share: the spinner's on-CPU time between the round's first and
//!   last sample, over the time between them (exact counters);
//! - runnable share: samples that read it runnable (on a CPU or waiting
//!   for one), over all;
//! - waiting for a core = runnable − on-CPU; asleep = 1 − runnable (the
//!   spinner waiting for the GIL sleeps on a condition variable);
//! - the reading, as the schedstat instrument's: asleep / (1 − waiting for
//!   a core), with no reading for a round the spinner spent more than
//!   `max_runqueue` waiting for a core, or with too few samples.
//!
//! A BLAS pool that takes the spinner's core shows here as waiting for a
//! core, not as asleep: the case lost iterations cannot tell from a held GIL.

use super::instrument::{InstrumentReport, RoundFigure};
use crate::kernel::portable::ThreadSample;

/// The fewest samples a round needs (about 1 ms apart; a round is 60 ms).
pub const SAMPLES_PER_ROUND_AT_LEAST: usize = 10;

/// One round's shares of its span.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundShares {
    pub on_cpu: f64,
    pub run_queue: f64,
    pub asleep: f64,
    pub samples: usize,
}

/// The spinner's shares over `[t0_ns, t1_ns]`; None with too few samples.
pub fn shares(samples: &[ThreadSample], t0_ns: u64, t1_ns: u64) -> Option<RoundShares> {
    let inside: Vec<&ThreadSample> = samples
        .iter()
        .filter(|s| s.at_ns >= t0_ns && s.at_ns <= t1_ns)
        .collect();
    if inside.len() < SAMPLES_PER_ROUND_AT_LEAST {
        return None;
    }
    let (first, last) = (inside[0], inside[inside.len() - 1]);
    let span = last.at_ns.saturating_sub(first.at_ns);
    if span == 0 {
        return None;
    }
    let on_cpu = (last.on_cpu_ns.saturating_sub(first.on_cpu_ns) as f64 / span as f64).min(1.0);
    let runnable = inside.iter().filter(|s| s.runnable).count() as f64 / inside.len() as f64;
    let runnable = runnable.max(on_cpu);
    Some(RoundShares {
        on_cpu,
        run_queue: runnable - on_cpu,
        asleep: 1.0 - runnable,
        samples: inside.len(),
    })
}

/// Fills every round of `report` with the sampled reading, and names the
/// instrument's reading in the note.
pub fn fill(report: &mut InstrumentReport, samples: &[ThreadSample], max_runqueue: f64) {
    for r in &mut report.rounds_figures {
        fill_round(r, samples, max_runqueue);
    }
}

fn fill_round(r: &mut RoundFigure, samples: &[ThreadSample], max_runqueue: f64) {
    let ns = |s: f64| (s * 1e9) as u64;
    let read = match (r.t0, r.t1) {
        (Some(t0), Some(t1)) if t1 > t0 && t0 >= 0.0 => shares(samples, ns(t0), ns(t1)),
        _ => None,
    };
    r.settled = Some(read.is_some());
    let Some(s) = read else {
        r.blocked = None;
        return;
    };
    r.oncpu = Some(s.on_cpu);
    r.runqueue = Some(s.run_queue);
    r.blocked_of_wall = Some(s.asleep);
    let had = 1.0 - s.run_queue;
    r.blocked = (s.run_queue <= max_runqueue && had > 0.0).then(|| (s.asleep / had).min(1.0));
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A 60 ms round sampled every ms from t = 1000 ms: `runnable(i)` says
    /// whether sample i read runnable; the spinner gains `on_cpu` ms of CPU
    /// per ms.
    fn round(runnable: impl Fn(u64) -> bool, on_cpu: f64) -> Vec<ThreadSample> {
        (0..=60)
            .map(|i| ThreadSample {
                at_ns: 1000 * MS + i * MS,
                runnable: runnable(i),
                on_cpu_ns: (i as f64 * on_cpu * MS as f64) as u64,
            })
            .collect()
    }

    fn read(samples: &[ThreadSample]) -> RoundFigure {
        let mut r = RoundFigure {
            round: 0,
            arm: "call".into(),
            position: 0,
            wall_s: 0.06,
            calls: 10,
            busy: 0.99,
            call_us: Some(6000.0),
            cpu_us: None,
            calls_per_s: 166.0,
            iterations: 0,
            iterations_per_s: 0.0,
            blocked: None,
            blocked_of_wall: None,
            runqueue: None,
            oncpu: None,
            loss: None,
            settled: None,
            t0: Some(1.0),
            t1: Some(1.06),
        };
        fill_round(&mut r, samples, 0.7);
        r
    }

    #[test]
    fn a_spinner_waiting_for_the_gil_reads_blocked() {
        // Holding half the time (bytecode): asleep every other 5 ms.
        let r = read(&round(|i| (i / 5) % 2 == 0, 0.5));
        assert!((r.blocked.unwrap() - 0.5).abs() < 0.1, "{r:?}");
        // Twin: a spinner waiting for a core (a BLAS pool took it) loses
        // as much CPU but reads runnable all along: not blocked.
        let r = read(&round(|_| true, 0.5));
        assert!(r.blocked.unwrap() < 0.02, "{r:?}");
        assert!((r.runqueue.unwrap() - 0.5).abs() < 0.02, "{r:?}");
    }

    #[test]
    fn a_free_spinner_reads_nothing_blocked() {
        let r = read(&round(|_| true, 1.0));
        assert_eq!(r.blocked, Some(0.0));
        assert_eq!(r.settled, Some(true));
    }

    #[test]
    fn a_round_mostly_queued_for_a_core_or_hardly_sampled_has_no_reading() {
        // Waiting for a core 90% of the round: too little left to read.
        let r = read(&round(|_| true, 0.1));
        assert_eq!(r.blocked, None, "{r:?}");
        // Too few samples (the sampler itself was starved).
        let sparse: Vec<ThreadSample> = round(|_| true, 1.0).into_iter().step_by(10).collect();
        let r = read(&sparse);
        assert_eq!((r.blocked, r.settled), (None, Some(false)));
        // Twin: enough samples, a reading.
        let r = read(
            &round(|_| true, 1.0)
                .into_iter()
                .step_by(5)
                .collect::<Vec<_>>(),
        );
        assert_eq!(r.blocked, Some(0.0));
    }
}
