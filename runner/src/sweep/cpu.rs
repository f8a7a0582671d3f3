//! The server's CPU over a measured window, from the kernel's accounting of
//! its whole process group (`schedstat`: every task of every worker): on-CPU
//! time as a % of one core, and beside it the run-queue wait (time its
//! threads were runnable but waiting for a core), also as a % of one core.
//!
//! Why both: 100% CPU with 80% run-queue wait is a server that wanted
//! almost two cores and had one; 100% with none is a server that had all it
//! asked for. Where the accounting is missing or frozen, there are no
//! figures and the note says why (never a guessed number).

use serde::Serialize;

use crate::kernel::portable::{self, PairSampler, Reading};
use crate::kernel::schedstat::{self, GroupDelta, Snapshot};

/// The server's CPU over one window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ServerCpu {
    /// On-CPU time of every task of the group, as a % of one core.
    pub cpu_pct: f64,
    /// Run-queue wait of every task of the group, as a % of one core.
    pub run_queue_pct: f64,
    /// Tasks read, and tasks that ended inside the window (their last
    /// figures are lost with them, so both %s are then lower bounds).
    pub tasks: usize,
    pub vanished: usize,
}

/// Why there are no CPU figures here, if there are none: the accounting
/// cannot be trusted on this machine (the message says what to change).
/// With the portable witness (`--witness portable`, macOS) the run-queue
/// figure is its estimate from sampled run state.
pub fn unavailable() -> Option<String> {
    portable::reading().err()
}

/// A window being read, by the witness's reading.
pub enum Window {
    Accounting(Snapshot),
    Sampled(PairSampler),
}

/// Opens a window on the group's CPU now.
pub fn open(pgid: i32) -> Result<Window, String> {
    match portable::reading() {
        Ok(Reading::Sampled) => Ok(Window::Sampled(PairSampler::start(
            &portable::group_members(pgid),
        ))),
        _ => snapshot(pgid).map(Window::Accounting),
    }
}

/// Closes `window`: the group's figures over it.
pub fn close(window: Window, pgid: i32) -> Result<Option<ServerCpu>, String> {
    match window {
        Window::Accounting(before) => snapshot(pgid).map(|after| between(&before, &after)),
        Window::Sampled(sampler) => portable::reduce::reduce(&sampler.finish())
            .map(|delta| from_delta(&delta))
            .map_err(|why| format!("the portable witness has no reading of the window: {why:?}")),
    }
}

/// Reads the group now; None (with the reason) when `/proc` cannot be read.
pub fn snapshot(pgid: i32) -> Result<Snapshot, String> {
    Snapshot::of_group(pgid).map_err(|e| format!("cannot read /proc for process group {pgid}: {e}"))
}

/// The figures between two snapshots of one group.
pub fn between(before: &Snapshot, after: &Snapshot) -> Option<ServerCpu> {
    from_delta(&schedstat::delta(before, after))
}

/// None for a zero-length window.
pub fn from_delta(d: &GroupDelta) -> Option<ServerCpu> {
    let wall_ns = d.wall.as_nanos() as f64;
    if wall_ns <= 0.0 {
        return None;
    }
    Some(ServerCpu {
        cpu_pct: d.on_cpu_ns as f64 / wall_ns * 100.0,
        run_queue_pct: d.run_queue_ns as f64 / wall_ns * 100.0,
        tasks: d.tasks.len(),
        vanished: d.vanished,
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::kernel::schedstat::TaskTimes;

    fn task(tid: i32, on_cpu_ns: u64, run_queue_ns: u64) -> TaskTimes {
        TaskTimes {
            pid: 10,
            tid,
            on_cpu_ns,
            run_queue_ns,
            slices: 1,
        }
    }

    #[test]
    fn percent_of_one_core_summed_over_tasks() {
        let t0 = Instant::now();
        let before = Snapshot::from_tasks(t0, vec![task(1, 0, 0), task(2, 0, 0), task(3, 5, 5)]);
        // One second later: two threads each ran 0.75 s and waited 0.25 s;
        // task 3 ended (lost), task 4 started and ran 0.1 s.
        let after = Snapshot::from_tasks(
            t0 + Duration::from_secs(1),
            vec![
                task(1, 750_000_000, 250_000_000),
                task(2, 750_000_000, 250_000_000),
                task(4, 100_000_000, 0),
            ],
        );
        let cpu = between(&before, &after).unwrap();
        assert!((cpu.cpu_pct - 160.0).abs() < 1e-6, "{cpu:?}");
        assert!((cpu.run_queue_pct - 50.0).abs() < 1e-6, "{cpu:?}");
        assert_eq!(cpu.vanished, 1);
        assert!(between(&before, &before).is_none());
    }
}
