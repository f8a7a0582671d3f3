//! The portable scheduler witness: only what macOS gives an unprivileged
//! process about a process of the same user, so the path a macOS runner
//! takes can be measured on Linux too (`--witness portable`).
//!
//! Three readings, no run-queue counter:
//! - per-thread on-CPU time, read just before a pair is released and just
//!   after both replies;
//! - per-thread run state (runnable, meaning on a CPU or waiting for one,
//!   against asleep), sampled every [`SAMPLE_EVERY`] by a thread of ours
//!   while the pair runs;
//! - the host's idle time, summed over CPUs, at both ends.
//!
//! Where they come from: on Linux `/proc/PID/task/TID/schedstat` (its first
//! field, on-CPU ns, only), the state letter of `/proc/PID/task/TID/stat`
//! and `/proc/stat`'s idle columns (`linux.rs`); on macOS
//! `proc_pidinfo(PROC_PIDTHREADID64INFO)` (`pth_user_time`,
//! `pth_system_time`, `pth_run_state`) and
//! `host_processor_info(PROCESSOR_CPU_LOAD_INFO)` (`macos.rs`). `reduce.rs`
//! turns one pair's record into the counters `kernel/witness.rs` reads, so
//! one rulebook judges a pair whichever reading took it. Nothing here prints.

pub mod reduce;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as os;
/// Elsewhere there is nothing to read: every reading is None, and the
/// self-check says so.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod os {
    pub struct Task {
        pub pid: i32,
        pub tid: i32,
    }
    impl Task {
        pub fn on_cpu_ns(&self) -> Option<u64> {
            None
        }
        pub fn runnable(&self) -> Option<bool> {
            None
        }
    }
    pub fn open_tasks(_: &[i32]) -> Vec<Task> {
        Vec::new()
    }
    pub fn host_idle_ns() -> Option<u64> {
        None
    }
    pub fn group_members(_: i32) -> std::io::Result<Vec<i32>> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
    pub fn current_tid() -> Option<i32> {
        None
    }
}

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::kernel::schedstat;
pub use reduce::{PairRecord, SampledFacts, TaskRecord, Unreadable};

/// How often the sampler reads every task's run state: at most 1000 times
/// a second, so it costs a few % of one core.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(1);

/// Which reading the witness takes on this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    /// Linux's accumulated counters: on-CPU and run-queue time per thread.
    Accounting,
    /// On-CPU time, sampled run state and host idle: the portable reading.
    Sampled,
}

impl Reading {
    /// As reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Reading::Accounting => "scheduler accounting (schedstat)",
            Reading::Sampled => "portable (on-CPU time, sampled run state, host idle)",
        }
    }
}

static FORCED: OnceLock<()> = OnceLock::new();
static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();

/// `--witness portable`: take the portable reading where the accounting is
/// there too. Only the binary calls it, before anything is measured.
pub fn force_portable() {
    let _ = FORCED.set(());
}

/// Whether `--witness portable` was given.
pub fn forced() -> bool {
    FORCED.get().is_some()
}

/// Which reading the witness takes here, or why there is none (the reason
/// names the remedy). Checked once per process.
pub fn reading() -> Result<Reading, String> {
    if schedstat::forced_off() {
        return Err(schedstat::availability()
            .reason()
            .unwrap_or_else(|| "the scheduler witness is off".into()));
    }
    if forced() || !cfg!(target_os = "linux") {
        return CHECKED
            .get_or_init(self_check)
            .clone()
            .map(|()| Reading::Sampled);
    }
    match schedstat::availability().reason() {
        None => Ok(Reading::Accounting),
        Some(why) => Err(why),
    }
}

/// Whether [`reading`] may find a witness here, without the self-check:
/// for what must start before it ends (the capacity control).
pub fn may_be_available() -> bool {
    !schedstat::forced_off()
        && (cfg!(any(target_os = "linux", target_os = "macos")))
        && (forced() || cfg!(target_os = "macos") || schedstat::may_be_available())
}

/// The processes of a process group (empty where they cannot be listed).
pub fn group_members(pgrp: i32) -> Vec<i32> {
    os::group_members(pgrp).unwrap_or_default()
}

/// Every task of `pids` and its on-CPU ns now: two readings give the tasks
/// that ran between them ([`reduce::tasks_that_ran`]).
pub fn on_cpu_now(pids: &[i32]) -> reduce::OnCpuNs {
    os::open_tasks(pids)
        .iter()
        .filter_map(|t| Some(((t.pid, t.tid), t.on_cpu_ns()?)))
        .collect()
}

/// A pair being read: on-CPU times and host idle taken, the sampler running.
pub struct PairSampler {
    started: Instant,
    before: BTreeMap<(i32, i32), u64>,
    idle_before: Option<u64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Sampled>>,
}

/// What the sampling thread hands back.
struct Sampled {
    tasks: Vec<os::Task>,
    /// Per round, per task: runnable, asleep, or unread.
    states: Vec<Vec<Option<bool>>>,
}

impl PairSampler {
    /// Reads every task of `pids` (on-CPU time) and the host's idle time,
    /// then starts sampling their run state. Call right before the pair.
    pub fn start(pids: &[i32]) -> Self {
        let tasks = os::open_tasks(pids);
        let idle_before = os::host_idle_ns();
        let started = Instant::now();
        let before = tasks
            .iter()
            .filter_map(|t| Some(((t.pid, t.tid), t.on_cpu_ns()?)))
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("witness-sampler".into())
            .spawn(move || sample(tasks, &flag))
            .ok();
        Self {
            started,
            before,
            idle_before,
            stop,
            thread,
        }
    }

    /// Stops sampling and reads the ends again: the pair's record. Call
    /// right after both replies.
    pub fn finish(mut self) -> PairRecord {
        self.stop.store(true, Ordering::Relaxed);
        let sampled = self.thread.take().and_then(|t| t.join().ok());
        let Some(s) = sampled else {
            return PairRecord {
                wall: self.started.elapsed(),
                tasks: Vec::new(),
                rounds: 0,
                host_idle_ns: None,
            };
        };
        let mut tasks = Vec::with_capacity(s.tasks.len());
        for (i, t) in s.tasks.iter().enumerate() {
            let states: Vec<Option<bool>> = s.states.iter().map(|round| round[i]).collect();
            tasks.push(TaskRecord {
                pid: t.pid,
                tid: t.tid,
                on_cpu_before_ns: self.before.get(&(t.pid, t.tid)).copied(),
                on_cpu_after_ns: t.on_cpu_ns(),
                runnable: states.iter().filter(|s| **s == Some(true)).count() as u32,
                samples: states.iter().filter(|s| s.is_some()).count() as u32,
                states,
            });
        }
        let wall = self.started.elapsed();
        let idle_after = os::host_idle_ns();
        PairRecord {
            wall,
            tasks,
            rounds: s.states.len() as u32,
            host_idle_ns: self.idle_before.zip(idle_after),
        }
    }
}

impl Drop for PairSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The sampling loop: every task's run state, every [`SAMPLE_EVERY`],
/// until `stop`.
fn sample(tasks: Vec<os::Task>, stop: &AtomicBool) -> Sampled {
    let mut states = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        states.push(tasks.iter().map(os::Task::runnable).collect());
        std::thread::sleep(SAMPLE_EVERY);
    }
    Sampled { tasks, states }
}

/// One reading of one thread, on the clock Python's `time.perf_counter()`
/// reads (so the gil-probe's round edges fall on it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ThreadSample {
    pub at_ns: u64,
    pub runnable: bool,
    pub on_cpu_ns: u64,
}

/// Samples one thread of another process, every [`SAMPLE_EVERY`], from the
/// moment its id appears in `tid_file` (written by that process) until
/// stopped: the gil-probe's spinner, read from outside its process (a
/// sampler inside would need the GIL, and read the spinner asleep).
pub struct ThreadWatch {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Vec<ThreadSample>>>,
}

impl ThreadWatch {
    pub fn start(pid: i32, tid_file: std::path::PathBuf) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("witness-watch".into())
            .spawn(move || watch(pid, &tid_file, &flag))
            .ok();
        Self { stop, thread }
    }

    /// Stops and hands back the samples, oldest first.
    pub fn finish(mut self) -> Vec<ThreadSample> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for ThreadWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn watch(pid: i32, tid_file: &std::path::Path, stop: &AtomicBool) -> Vec<ThreadSample> {
    let mut task = None;
    let mut out = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match &task {
            None => {
                task = std::fs::read_to_string(tid_file)
                    .ok()
                    .and_then(|t| t.trim().parse::<i32>().ok())
                    .and_then(|tid| os::open_tasks(&[pid]).into_iter().find(|t| t.tid == tid));
                if task.is_none() {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            Some(t) => {
                if let (Some(runnable), Some(on_cpu_ns)) = (t.runnable(), t.on_cpu_ns()) {
                    out.push(ThreadSample {
                        at_ns: monotonic_ns(),
                        runnable,
                        on_cpu_ns,
                    });
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
        }
    }
    out
}

/// The clock Python's `time.perf_counter()` reads, ns: CLOCK_MONOTONIC on
/// Linux, mach_absolute_time's (CLOCK_UPTIME_RAW) on macOS.
pub fn monotonic_ns() -> u64 {
    #[cfg(target_os = "macos")]
    const CLOCK: libc::clockid_t = libc::CLOCK_UPTIME_RAW;
    #[cfg(not(target_os = "macos"))]
    const CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    if unsafe { libc::clock_gettime(CLOCK, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Whether the readings move as they must here: a spinning thread of ours
/// gains on-CPU time and reads runnable, a sleeping one reads asleep.
fn self_check() -> Result<(), String> {
    const FALLBACK: &str = "the wall-clock rules apply";
    let me = std::process::id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    let spinner = std::thread::spawn(move || {
        let _ = tx.send(os::current_tid());
        while !flag.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    });
    let tid = rx.recv().ok().flatten();
    let mut verdict = Err(format!(
        "cannot read this process's own threads for the portable witness: {FALLBACK}"
    ));
    if let Some(task) = tid.and_then(|tid| os::open_tasks(&[me]).into_iter().find(|t| t.tid == tid))
    {
        let first = task.on_cpu_ns();
        let deadline = Instant::now() + Duration::from_millis(500);
        let mut ran = false;
        let mut runnable = false;
        while Instant::now() < deadline && !(ran && runnable) {
            std::thread::sleep(Duration::from_millis(2));
            ran = matches!((first, task.on_cpu_ns()), (Some(a), Some(b)) if b > a);
            runnable |= task.runnable() == Some(true);
        }
        verdict = match (ran, runnable) {
            (true, true) => Ok(()),
            (false, _) => Err(format!(
                "a spinning thread's on-CPU time did not move for the portable witness: {FALLBACK}"
            )),
            (true, false) => Err(format!(
                "a spinning thread never read runnable for the portable witness: {FALLBACK}"
            )),
        };
    }
    done.store(true, Ordering::Relaxed);
    let _ = spinner.join();
    verdict
}

#[cfg(test)]
mod on_this_machine {
    use super::*;

    /// Two threads of this process: one spinning, one parked, until ended.
    struct SpinnerAndParked {
        spinner: i32,
        parked: i32,
        stop: Arc<AtomicBool>,
        handles: Vec<std::thread::JoinHandle<()>>,
    }

    impl SpinnerAndParked {
        fn start() -> Self {
            let stop = Arc::new(AtomicBool::new(false));
            let mut tids = Vec::new();
            let mut handles = Vec::new();
            for spin in [true, false] {
                let (tx, rx) = std::sync::mpsc::channel();
                let flag = Arc::clone(&stop);
                handles.push(std::thread::spawn(move || {
                    let _ = tx.send(os::current_tid());
                    // The sleeper parks until told to end: a thread woken
                    // mid-window would queue for a core on a loaded machine
                    // (measured: 18 ms), and rightly read runnable.
                    while !flag.load(Ordering::Relaxed) {
                        if spin {
                            std::hint::spin_loop();
                        } else {
                            std::thread::park();
                        }
                    }
                }));
                tids.push(rx.recv().unwrap().unwrap());
            }
            Self {
                spinner: tids[0],
                parked: tids[1],
                stop,
                handles,
            }
        }

        fn end(self) {
            self.stop.store(true, Ordering::Relaxed);
            self.handles.iter().for_each(|h| h.thread().unpark());
            self.handles.into_iter().for_each(|h| h.join().unwrap());
        }
    }

    /// The real readers: a spinning thread reads runnable and gains on-CPU
    /// time; its twin, a sleeping thread, reads asleep and gains none.
    #[test]
    fn a_spinner_reads_runnable_and_a_sleeper_asleep() {
        assert_eq!(self_check(), Ok(()));
        let me = std::process::id() as i32;
        let threads = SpinnerAndParked::start();
        let tids = [threads.spinner, threads.parked];
        // 200 ms: on a machine loaded several times over (load average 15
        // on 2 cores here) the sampler and the spinner still get their share.
        let pair = PairSampler::start(&[me]);
        std::thread::sleep(Duration::from_millis(200));
        let record = pair.finish();
        threads.end();
        let find = |tid| record.tasks.iter().find(|t| t.tid == tid).unwrap();
        let (spinner, sleeper) = (find(tids[0]), find(tids[1]));
        assert!(record.rounds >= reduce::SAMPLES_AT_LEAST, "{record:?}");
        assert!(spinner.runnable * 10 >= spinner.samples * 7, "{spinner:?}");
        assert!(sleeper.runnable * 10 <= sleeper.samples, "{sleeper:?}");
        let on = |t: &TaskRecord| t.on_cpu_after_ns.unwrap() - t.on_cpu_before_ns.unwrap();
        assert!(on(spinner) > 1_000_000, "{spinner:?}");
        assert!(on(sleeper) < 2_000_000, "{sleeper:?}");
        assert!(record.host_idle_ns.is_some());
    }

    /// The warm-up's count of tasks that ran, read here: a spinning thread
    /// of ours is one; its twin, a parked thread, is not.
    #[test]
    fn a_spinning_thread_is_a_task_that_ran() {
        let me = std::process::id() as i32;
        let threads = SpinnerAndParked::start();
        let (spinner, parked) = (threads.spinner, threads.parked);
        let only = |m: &reduce::OnCpuNs, tid: i32| -> reduce::OnCpuNs {
            m.iter()
                .filter(|(k, _)| k.1 == tid)
                .map(|(k, v)| (*k, *v))
                .collect()
        };
        // The parked thread runs on after sending its id until it parks:
        // the first reading waits (at most 1 s) until it reads asleep.
        let parked_task = os::open_tasks(&[me])
            .into_iter()
            .find(|t| t.tid == parked)
            .unwrap();
        let asleep_by = Instant::now() + Duration::from_secs(1);
        while parked_task.runnable() != Some(false) && Instant::now() < asleep_by {
            std::thread::sleep(Duration::from_millis(1));
        }
        let before = on_cpu_now(&[me]);
        std::thread::sleep(Duration::from_millis(100));
        let after = on_cpu_now(&[me]);
        threads.end();
        assert_eq!(
            reduce::tasks_that_ran(&only(&before, spinner), &only(&after, spinner)),
            1
        );
        assert_eq!(
            reduce::tasks_that_ran(&only(&before, parked), &only(&after, parked)),
            0
        );
    }
}
