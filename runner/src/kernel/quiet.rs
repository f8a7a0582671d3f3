//! Waiting for a quiet moment before a pair is timed. On a shared machine
//! (a CI runner beside a neighbour's build, two burst loads) both cores are
//! busy part of the time and free part of the time; a trial timed while
//! they are busy reads "no free core" and counts for nothing, so a gate
//! spends its whole trial budget and still cannot judge. Starting each mode's
//! single-and-pair when no other task is runnable makes more of the budget's
//! trials land in a free moment. The trial itself still proves it had a free
//! core (the witness's run-queue figures, the capacity control): waiting only
//! changes when a trial starts, never how it is read, so it cannot make a
//! verdict wrong, only more often decisive.
//!
//! The reading is the kernel's count of runnable tasks (`procs_running` in
//! `/proc/stat`, which counts the reader itself), polled every millisecond.
//! Each wait is bounded, and a run that found no quiet moment in
//! [`GIVE_UP_AFTER`] waits in a row stops waiting: a machine loaded all the
//! time has no window to find, and waiting would only add time. Where there
//! is no `/proc/stat` (macOS), there is no waiting.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

/// How long one wait may last: a little more than one period of a burst
/// load (100 ms busy, 100 ms idle), so a window that comes at all is found.
pub const WAIT_AT_MOST: Duration = Duration::from_millis(250);
/// Waits in a row that found no quiet moment before a run stops waiting.
pub const GIVE_UP_AFTER: u32 = 3;
/// How often the count is read while waiting.
const POLL: Duration = Duration::from_millis(1);

/// What the waits of one run came to (in the report).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct QuietWaits {
    /// Waits that found a quiet moment (none needed counts).
    pub found: u32,
    /// Waits that ran out at [`WAIT_AT_MOST`].
    pub timed_out: u32,
    /// Time spent waiting, all waits together.
    pub waited_ms: f64,
    /// Why the run stopped waiting, or could not wait at all.
    pub stopped: Option<String>,
}

/// The waits of one run: call [`QuietWindow::wait`] before timing.
#[derive(Debug)]
pub struct QuietWindow {
    cores: usize,
    misses_in_a_row: u32,
    pub waits: QuietWaits,
}

impl QuietWindow {
    /// For a run that times pairs of two threads on `cores` cores.
    pub fn new(cores: usize) -> Self {
        let mut waits = QuietWaits::default();
        if runnable_now().is_none() {
            waits.stopped = Some("no /proc/stat on this platform: trials start at once".into());
        }
        Self {
            cores,
            misses_in_a_row: 0,
            waits,
        }
    }

    /// Waits, at most [`WAIT_AT_MOST`], until no task but the reader is
    /// runnable beyond what leaves two cores free; at once where the run
    /// has stopped waiting.
    pub async fn wait(&mut self) {
        self.wait_reading(runnable_now).await
    }

    /// [`Self::wait`], with the count from `read`.
    async fn wait_reading(&mut self, mut read: impl FnMut() -> Option<u32>) {
        if self.waits.stopped.is_some() {
            return;
        }
        let started = Instant::now();
        let found = loop {
            match read() {
                None => {
                    self.waits.stopped = Some("/proc/stat could not be read".into());
                    return;
                }
                Some(n) if quiet(n, self.cores) => break true,
                Some(_) if started.elapsed() >= WAIT_AT_MOST => break false,
                Some(_) => tokio::time::sleep(POLL).await,
            }
        };
        self.waits.waited_ms += started.elapsed().as_secs_f64() * 1e3;
        if found {
            self.waits.found += 1;
            self.misses_in_a_row = 0;
        } else {
            self.waits.timed_out += 1;
            self.misses_in_a_row += 1;
            if self.misses_in_a_row >= GIVE_UP_AFTER {
                self.waits.stopped = Some(format!(
                    "no quiet moment in {GIVE_UP_AFTER} waits of {} ms in a row: the machine stayed busy, \
                     so later trials started at once",
                    WAIT_AT_MOST.as_millis()
                ));
            }
        }
    }
}

/// Whether `running` runnable tasks (the reader among them) leave two of
/// `cores` cores to a pair: the reader yields its core once the pair starts.
pub fn quiet(running: u32, cores: usize) -> bool {
    let others = running.saturating_sub(1) as usize;
    others + 2 <= cores.max(2)
}

/// `procs_running` from `/proc/stat`: tasks runnable now, machine-wide.
fn runnable_now() -> Option<u32> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    procs_running(&text)
}

/// The `procs_running N` line of a `/proc/stat` text.
pub fn procs_running(stat: &str) -> Option<u32> {
    stat.lines()
        .find_map(|l| l.strip_prefix("procs_running "))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runnable_count_is_read_from_proc_stat() {
        let stat = "cpu  1 2 3 4\nintr 5\nctxt 6\nprocs_running 3\nprocs_blocked 0\n";
        assert_eq!(procs_running(stat), Some(3));
        // Its twins: no such line, or not a number.
        assert_eq!(procs_running("cpu 1 2\nprocs_blocked 0\n"), None);
        assert_eq!(procs_running("procs_running many\n"), None);
    }

    #[test]
    fn quiet_means_two_cores_left_for_the_pair() {
        // Two cores: only the reader runnable.
        assert!(quiet(1, 2));
        assert!(!quiet(2, 2), "one other task leaves one core");
        // Four cores: two other tasks still leave two.
        assert!(quiet(3, 4));
        assert!(!quiet(4, 4));
        // One core never has two free; it waits as a two-core machine would.
        assert!(quiet(1, 1));
        assert!(!quiet(2, 1));
    }

    #[tokio::test]
    async fn a_busy_machine_is_waited_for_a_bounded_time_then_not_at_all() {
        let mut w = QuietWindow::new(2);
        w.waits.stopped = None;
        // Quiet: no wait.
        w.wait_reading(|| Some(1)).await;
        assert_eq!((w.waits.found, w.waits.timed_out), (1, 0));
        assert!(w.waits.waited_ms < WAIT_AT_MOST.as_secs_f64() * 1e3);
        // Its twin: busy all along; each wait is bounded, and after
        // GIVE_UP_AFTER of them in a row the run stops waiting.
        for i in 1..=GIVE_UP_AFTER {
            let before = Instant::now();
            w.wait_reading(|| Some(5)).await;
            assert!(before.elapsed() >= WAIT_AT_MOST);
            assert_eq!(w.waits.stopped.is_some(), i == GIVE_UP_AFTER);
        }
        assert!(w.waits.stopped.as_deref().unwrap().contains("stayed busy"));
        let before = Instant::now();
        w.wait_reading(|| Some(5)).await;
        assert!(before.elapsed() < WAIT_AT_MOST);
        assert_eq!(w.waits.timed_out, GIVE_UP_AFTER);
    }

    #[tokio::test]
    async fn a_quiet_moment_resets_the_misses() {
        let mut w = QuietWindow::new(2);
        w.waits.stopped = None;
        w.wait_reading(|| Some(5)).await;
        w.wait_reading(|| Some(1)).await;
        for _ in 1..GIVE_UP_AFTER {
            w.wait_reading(|| Some(5)).await;
        }
        // Two misses, a find, two misses: never three in a row.
        assert!(w.waits.stopped.is_none(), "{:?}", w.waits);
        // A quiet moment that comes partway through a wait is found.
        let mut polls = 0;
        w.wait_reading(|| {
            polls += 1;
            Some(if polls < 20 { 5 } else { 1 })
        })
        .await;
        assert_eq!(w.waits.found, 2);
    }
}
