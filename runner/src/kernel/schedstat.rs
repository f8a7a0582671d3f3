//! The kernel's scheduler accounting of a process group, read from Linux
//! `/proc`: which processes lead or belong to a group, every task (thread)
//! of each, and per task the three counters of
//! `/proc/PID/task/TID/schedstat` (ns on a CPU, ns runnable but waiting on a
//! run queue, timeslices). This module owns reading them, snapshots taken at
//! an `Instant`, the delta between two snapshots (tasks that appear or
//! vanish in between included) and the check of whether this machine's
//! accounting can be trusted at all ([`availability`]). The figures built on
//! top (runnable parallelism, blocked time) live in `witness`.
//!
//! Why ask the kernel: a thread waiting for the GIL, or any lock, sleeps and
//! adds to neither counter; a thread waiting for a core adds run-queue time.
//! The wall clock cannot tell the two apart (docs/scheduler-witness.md).
//!
//! Why by hand: no maintained crate reads per-task schedstat (procfs reads
//! `/proc/PID/schedstat` of the leader only, and pulls in far more than the
//! three numbers we need), and the format is one line of three integers.
//!
//! Cost: a snapshot opens one `stat` file per process on the machine (to
//! find the group) and one `schedstat` file per task of the group; where the
//! group's members are known, [`Snapshot::of_pids`] skips the scan. Nothing
//! here prints.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::Serialize;

/// The three counters of one task at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TaskTimes {
    /// The process (thread group) the task belongs to.
    pub pid: i32,
    /// The task's own id: the native thread id (`threading.get_native_id()`).
    pub tid: i32,
    /// Time spent on a CPU.
    pub on_cpu_ns: u64,
    /// Time spent runnable, waiting on a run queue for a CPU.
    pub run_queue_ns: u64,
    /// Timeslices run.
    pub slices: u64,
}

/// Every readable task of a set of processes, read at `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// When the read began (both snapshots of a delta use the start, so the
    /// interval between them matches the interval each task was read over).
    pub at: Instant,
    /// How long the read took: the snapshot's own cost.
    pub took: Duration,
    /// Sorted by tid (tids are unique across the machine at one moment).
    pub tasks: Vec<TaskTimes>,
    /// Processes or tasks that vanished or could not be read mid-read.
    pub skipped: usize,
}

/// Whether a task was read in both snapshots of a delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Seen {
    /// In both: the delta is exact.
    Both,
    /// Only in the later one: it started in between, so all of its time
    /// falls inside the interval and counts.
    Appeared,
    /// Only in the earlier one: it ended in between; its last figures are
    /// lost with it, so it counts zero and the group totals are a lower bound.
    Vanished,
}

/// One task's counters over an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TaskDelta {
    pub pid: i32,
    pub tid: i32,
    pub on_cpu_ns: u64,
    pub run_queue_ns: u64,
    pub slices: u64,
    pub seen: Seen,
}

/// A group's counters over the interval between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupDelta {
    /// Between the two snapshots' starts.
    #[serde(serialize_with = "as_ns")]
    pub wall: Duration,
    /// Sorted by tid.
    pub tasks: Vec<TaskDelta>,
    /// Sums over `tasks`.
    pub on_cpu_ns: u64,
    pub run_queue_ns: u64,
    pub slices: u64,
    /// Tasks that started, or ended, between the snapshots.
    pub appeared: usize,
    pub vanished: usize,
}

fn as_ns<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl Snapshot {
    /// Every task of every process whose process group is `pgrp`. An error
    /// only when `/proc` itself cannot be listed; a process or task that
    /// vanishes mid-read is skipped (and counted in `skipped`).
    pub fn of_group(pgrp: i32) -> io::Result<Self> {
        let at = Instant::now();
        let (pids, mut skipped) = scan_group(pgrp)?;
        let (tasks, s) = read_tasks(&pids);
        skipped += s;
        Ok(Self::assemble(at, tasks, skipped))
    }

    /// Every task of the given processes (members found earlier with
    /// [`group_members`]): no scan of `/proc`, so cheaper. A process that is
    /// gone reads as no tasks.
    pub fn of_pids(pids: &[i32]) -> Self {
        let at = Instant::now();
        let (tasks, skipped) = read_tasks(pids);
        Self::assemble(at, tasks, skipped)
    }

    /// A snapshot of given figures (for tests and recorded runs).
    pub fn from_tasks(at: Instant, tasks: Vec<TaskTimes>) -> Self {
        Self::assemble(at, tasks, 0)
    }

    fn assemble(at: Instant, mut tasks: Vec<TaskTimes>, skipped: usize) -> Self {
        tasks.sort_by_key(|t| t.tid);
        tasks.dedup_by_key(|t| t.tid);
        Self {
            took: at.elapsed(),
            at,
            tasks,
            skipped,
        }
    }

    /// The task with this tid, if it was read.
    pub fn task(&self, tid: i32) -> Option<&TaskTimes> {
        self.tasks
            .binary_search_by_key(&tid, |t| t.tid)
            .ok()
            .map(|i| &self.tasks[i])
    }

    /// The distinct processes seen, sorted.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self.tasks.iter().map(|t| t.pid).collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }
}

/// The counters from `before` to `after`. A tid in both whose counters went
/// backwards, or that moved to another process, is a reused tid: the old
/// task vanished and a new one appeared.
pub fn delta(before: &Snapshot, after: &Snapshot) -> GroupDelta {
    let mut tasks = Vec::with_capacity(after.tasks.len().max(before.tasks.len()));
    let vanished = |t: &TaskTimes| TaskDelta {
        pid: t.pid,
        tid: t.tid,
        on_cpu_ns: 0,
        run_queue_ns: 0,
        slices: 0,
        seen: Seen::Vanished,
    };
    let appeared = |t: &TaskTimes| TaskDelta {
        pid: t.pid,
        tid: t.tid,
        on_cpu_ns: t.on_cpu_ns,
        run_queue_ns: t.run_queue_ns,
        slices: t.slices,
        seen: Seen::Appeared,
    };
    let (mut i, mut j) = (0, 0);
    let (b, a) = (&before.tasks, &after.tasks);
    while i < b.len() || j < a.len() {
        match (b.get(i), a.get(j)) {
            (Some(x), Some(y)) if x.tid == y.tid => {
                let reused = x.pid != y.pid
                    || y.on_cpu_ns < x.on_cpu_ns
                    || y.run_queue_ns < x.run_queue_ns
                    || y.slices < x.slices;
                if reused {
                    tasks.push(vanished(x));
                    tasks.push(appeared(y));
                } else {
                    tasks.push(TaskDelta {
                        pid: y.pid,
                        tid: y.tid,
                        on_cpu_ns: y.on_cpu_ns - x.on_cpu_ns,
                        run_queue_ns: y.run_queue_ns - x.run_queue_ns,
                        slices: y.slices - x.slices,
                        seen: Seen::Both,
                    });
                }
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.tid < y.tid => {
                tasks.push(vanished(x));
                i += 1;
            }
            (Some(_), Some(y)) | (None, Some(y)) => {
                tasks.push(appeared(y));
                j += 1;
            }
            (Some(x), None) => {
                tasks.push(vanished(x));
                i += 1;
            }
            (None, None) => unreachable!("loop condition"),
        }
    }
    let count = |s: Seen| tasks.iter().filter(|t| t.seen == s).count();
    GroupDelta {
        wall: after.at.saturating_duration_since(before.at),
        on_cpu_ns: tasks.iter().map(|t| t.on_cpu_ns).sum(),
        run_queue_ns: tasks.iter().map(|t| t.run_queue_ns).sum(),
        slices: tasks.iter().map(|t| t.slices).sum(),
        appeared: count(Seen::Appeared),
        vanished: count(Seen::Vanished),
        tasks,
    }
}

impl GroupDelta {
    /// The task with this tid, if it was read in either snapshot.
    pub fn task(&self, tid: i32) -> Option<&TaskDelta> {
        // A reused tid has two entries; the live (later) one is the last.
        self.tasks.iter().rev().find(|t| t.tid == tid)
    }
}

/// The processes whose process group is `pgrp`, sorted. An error only when
/// `/proc` cannot be listed (not Linux, or no procfs mounted).
pub fn group_members(pgrp: i32) -> io::Result<Vec<i32>> {
    scan_group(pgrp).map(|(pids, _)| pids)
}

/// The calling thread's own counters (`/proc/thread-self/schedstat`).
pub fn thread_self() -> io::Result<TaskTimes> {
    let (on_cpu_ns, run_queue_ns, slices) =
        read_schedstat(Path::new("/proc/thread-self/schedstat"))?;
    Ok(TaskTimes {
        pid: std::process::id() as i32,
        tid: current_tid(),
        on_cpu_ns,
        run_queue_ns,
        slices,
    })
}

/// The calling thread's native id (what Python's `threading.get_native_id()`
/// reports for its own threads).
pub fn current_tid() -> i32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid takes no arguments and cannot fail.
        unsafe { libc::gettid() }
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

fn scan_group(pgrp: i32) -> io::Result<(Vec<i32>, usize)> {
    let mut pids = Vec::new();
    let mut skipped = 0;
    for entry in fs::read_dir("/proc")? {
        let Ok(entry) = entry else {
            skipped += 1;
            continue;
        };
        let Some(pid) = numeric_name(&entry.file_name()) else {
            continue;
        };
        match fs::read(entry.path().join("stat")) {
            Ok(stat) => {
                if parse_stat_pgrp(&stat) == Some(pgrp) {
                    pids.push(pid);
                }
            }
            // Gone between the listing and the read.
            Err(_) => skipped += 1,
        }
    }
    pids.sort_unstable();
    Ok((pids, skipped))
}

fn read_tasks(pids: &[i32]) -> (Vec<TaskTimes>, usize) {
    let mut tasks = Vec::new();
    let mut skipped = 0;
    for &pid in pids {
        let dir = format!("/proc/{pid}/task");
        let Ok(entries) = fs::read_dir(&dir) else {
            skipped += 1;
            continue;
        };
        for entry in entries {
            let Some(tid) = entry.ok().and_then(|e| numeric_name(&e.file_name())) else {
                skipped += 1;
                continue;
            };
            match read_schedstat(Path::new(&format!("{dir}/{tid}/schedstat"))) {
                Ok((on_cpu_ns, run_queue_ns, slices)) => tasks.push(TaskTimes {
                    pid,
                    tid,
                    on_cpu_ns,
                    run_queue_ns,
                    slices,
                }),
                Err(_) => skipped += 1,
            }
        }
    }
    (tasks, skipped)
}

fn numeric_name(name: &std::ffi::OsStr) -> Option<i32> {
    let s = name.to_str()?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The process group (field 5) of a `/proc/PID/stat` line. The command name
/// (field 2) sits in parentheses and may itself hold spaces, parentheses or
/// bytes that are not UTF-8, so the fields are counted after the last `)`.
fn parse_stat_pgrp(stat: &[u8]) -> Option<i32> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    // state, ppid, pgrp
    rest.split_ascii_whitespace().nth(2)?.parse().ok()
}

fn read_schedstat(path: &Path) -> io::Result<(u64, u64, u64)> {
    let text = fs::read_to_string(path)?;
    parse_schedstat(&text).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: expected three integers, read {text:?}", path.display()),
        )
    })
}

/// `on_cpu_ns run_queue_ns slices`.
fn parse_schedstat(text: &str) -> Option<(u64, u64, u64)> {
    let mut it = text.split_ascii_whitespace().map(str::parse::<u64>);
    let v = (it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?);
    it.next().is_none().then_some(v)
}

/// Whether this machine's scheduler accounting can be trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reason", rename_all = "kebab-case")]
pub enum Availability {
    /// Both counters move as a spinning thread and a queued thread must.
    Available,
    /// There is nothing to read.
    Missing(Missing),
    /// The file is there but a counter does not move when it provably must.
    Frozen(Frozen),
}

/// Why there is no accounting to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Missing {
    /// Not Linux (macOS and the BSDs have no per-thread run-queue time).
    NotLinux,
    /// Linux, but `/proc/thread-self/schedstat` could not be read.
    NoFile { error: String },
    /// Turned off for this run (`--witness off`): the path a platform
    /// without the accounting (macOS) takes, forced where it has it.
    Off,
}

/// Which counter stood still.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Frozen {
    /// A thread spun `spun_ns` of CPU time (by its own CPU clock) and its
    /// on-CPU counter advanced only `read_ns`.
    OnCpu { spun_ns: u64, read_ns: u64 },
    /// Two threads pinned to one CPU spun in turn, so each provably waited
    /// for it, yet their run-queue counters read at most `read_ns` in all
    /// over every run of the check.
    RunQueue { read_ns: u64 },
}

impl Availability {
    /// Why the witness cannot be used, with the remedy; None when available.
    pub fn reason(&self) -> Option<String> {
        const FALLBACK: &str =
            "the scheduler witness is unavailable and the wall-clock rules apply";
        match self {
            Availability::Available => None,
            Availability::Missing(Missing::NotLinux) => Some(format!(
                "no per-thread scheduler accounting on this platform (/proc/PID/task/TID/schedstat is Linux only): {FALLBACK}"
            )),
            Availability::Missing(Missing::Off) => Some(format!(
                "the scheduler witness is off (--witness off), as where the platform has no such accounting (macOS): {FALLBACK}"
            )),
            Availability::Missing(Missing::NoFile { error }) => Some(format!(
                "cannot read /proc/thread-self/schedstat ({error}); a kernel built without CONFIG_SCHED_INFO, or /proc not mounted: {FALLBACK}"
            )),
            Availability::Frozen(Frozen::OnCpu { spun_ns, read_ns }) => Some(format!(
                "schedstat on-CPU time is frozen: a thread spun {:.1} ms of CPU and it read {:.1} ms: {FALLBACK}",
                *spun_ns as f64 / 1e6,
                *read_ns as f64 / 1e6
            )),
            Availability::Frozen(Frozen::RunQueue { read_ns }) => Some(format!(
                "schedstat run-queue time is frozen: two threads sharing one CPU read at most {:.1} ms of waiting in all, in {SELF_CHECK_QUEUE_RUNS} runs; enable scheduler statistics (sysctl kernel.sched_schedstats=1, or boot with schedstats=enable): {FALLBACK}",
                *read_ns as f64 / 1e6
            )),
        }
    }
}

/// How much CPU time each self-check thread spins.
#[cfg(target_os = "linux")]
const SELF_CHECK_SPIN: Duration = Duration::from_millis(10);
/// The self-check gives up spinning after this much wall time (a machine
/// so loaded that a thread gets no 10 ms of CPU in it reads as is).
#[cfg(target_os = "linux")]
const SELF_CHECK_DEADLINE: Duration = Duration::from_millis(500);
/// The least run-queue time two threads sharing one CPU must show.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const SELF_CHECK_MIN_QUEUE: Duration = Duration::from_millis(1);
/// How many times the run-queue check runs before the counter reads as
/// frozen. A counter that is on reads 8-20 ms in one run; one run under the
/// minimum is a machine that ran the two threads one after the other
/// (beside two burst loads, 2 of 50 advise runs at 60219d6 read frozen on
/// a single run, docs/scheduler-witness.md), and a frozen counter reads under
/// it every time, so only the frozen case pays for the repeats (about 60 ms).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const SELF_CHECK_QUEUE_RUNS: usize = 3;

/// The process's answer to [`availability`], fixed once.
static CHECKED: OnceLock<Availability> = OnceLock::new();

/// This machine's accounting, checked once per process (the check spins
/// about 10 ms on one thread, then about 20 ms on two threads sharing a CPU,
/// three times where that reads frozen).
pub fn availability() -> &'static Availability {
    CHECKED.get_or_init(self_check)
}

/// Turns the witness off for this process (`--witness off`): every reader
/// then takes the path of a platform without the accounting, saying so.
/// Only the binary calls it, once, before anything is measured; false when
/// the accounting was already checked (nothing changes then).
pub fn force_off() -> bool {
    CHECKED.set(Availability::Missing(Missing::Off)).is_ok()
}

/// Whether [`availability`] could find the accounting here: on Linux,
/// unless [`force_off`] turned it off. A quick answer for what must start
/// before the self-check ends (the capacity control, where there is none).
pub fn may_be_available() -> bool {
    cfg!(target_os = "linux") && !forced_off()
}

/// Whether [`force_off`] turned the witness off.
pub fn forced_off() -> bool {
    CHECKED.get() == Some(&Availability::Missing(Missing::Off))
}

/// The check behind [`availability`], uncached.
pub fn self_check() -> Availability {
    #[cfg(target_os = "linux")]
    {
        linux_check::run()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Availability::Missing(Missing::NotLinux)
    }
}

/// The run-queue check's ruling over up to [`SELF_CHECK_QUEUE_RUNS`] runs
/// of `run` (the ns two threads sharing one CPU read waiting, or None where
/// they could not share one): frozen only where every run read under
/// [`SELF_CHECK_MIN_QUEUE`], with the most any run read; unrefuted where a
/// run could not pin. Stops at the first run that settles it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn run_queue_verdict(mut run: impl FnMut() -> Option<u64>) -> Option<Frozen> {
    let min_ns = SELF_CHECK_MIN_QUEUE.as_nanos() as u64;
    let mut most_ns = 0;
    for _ in 0..SELF_CHECK_QUEUE_RUNS {
        match run() {
            None => return None,
            Some(ns) if ns >= min_ns => return None,
            Some(ns) => most_ns = most_ns.max(ns),
        }
    }
    Some(Frozen::RunQueue { read_ns: most_ns })
}

#[cfg(target_os = "linux")]
mod linux_check {
    use super::*;
    use std::sync::{Arc, Barrier};

    pub(super) fn run() -> Availability {
        if let Err(e) = thread_self() {
            return Availability::Missing(Missing::NoFile {
                error: e.to_string(),
            });
        }
        // On-CPU: one thread spins a known amount of its own CPU time.
        match std::thread::spawn(|| spin_and_read(None)).join() {
            Ok(Ok((spun, read))) => {
                if spun.on_cpu_ns > 0 && read.on_cpu_ns < spun.on_cpu_ns / 2 {
                    return Availability::Frozen(Frozen::OnCpu {
                        spun_ns: spun.on_cpu_ns,
                        read_ns: read.on_cpu_ns,
                    });
                }
            }
            Ok(Err(e)) => {
                return Availability::Missing(Missing::NoFile {
                    error: e.to_string(),
                })
            }
            Err(_) => unreachable!("the spin thread does not panic"),
        }
        // Run queue: two threads pinned to one CPU each spin while the other
        // holds it, so each must wait on the run queue.
        let Some(cpu) = first_allowed_cpu() else {
            // Cannot pin: the run-queue counter stays unproven but unrefuted.
            return Availability::Available;
        };
        match run_queue_verdict(|| queued_on(cpu)) {
            Some(frozen) => Availability::Frozen(frozen),
            None => Availability::Available,
        }
    }

    /// One run of the run-queue check: two threads pinned to `cpu` meet at
    /// a barrier, then each reads its counters and spins. Meeting first
    /// matters on a loaded machine: spawned one after the other, the
    /// second thread could start only after the first had spun alone, and
    /// neither would have waited. The run-queue ns both read, or None where
    /// a thread could not pin itself.
    fn queued_on(cpu: usize) -> Option<u64> {
        let met = Arc::new(Barrier::new(2));
        let spinners: Vec<_> = (0..2)
            .map(|_| {
                let met = Arc::clone(&met);
                std::thread::spawn(move || spin_and_read(Some((cpu, &met))))
            })
            .collect();
        let mut queued_ns = Some(0u64);
        for s in spinners {
            match s.join() {
                Ok(Ok((_, read))) => queued_ns = queued_ns.map(|q| q + read.run_queue_ns),
                Ok(Err(_)) => queued_ns = None,
                Err(_) => unreachable!("the spin thread does not panic"),
            }
        }
        queued_ns
    }

    /// (spun by the thread CPU clock, read by schedstat), both as deltas in
    /// `on_cpu_ns` (and `run_queue_ns` for the read). When given a CPU and
    /// a barrier, pins the calling thread to the CPU (an error if that
    /// fails) and waits at the barrier before reading anything.
    fn spin_and_read(pinned: Option<(usize, &Barrier)>) -> io::Result<(TaskTimes, TaskTimes)> {
        if let Some((cpu, met)) = pinned {
            // Every thread reaches the barrier, pinned or not, or its
            // partner would wait for ever.
            let pin = pin_to(cpu);
            met.wait();
            pin?;
        }
        let before = thread_self()?;
        let clock0 = thread_cpu_ns();
        let deadline = Instant::now() + SELF_CHECK_DEADLINE;
        let target = SELF_CHECK_SPIN.as_nanos() as u64;
        let mut spun = 0;
        while spun < target && Instant::now() < deadline {
            for _ in 0..1000 {
                std::hint::spin_loop();
            }
            spun = thread_cpu_ns().saturating_sub(clock0);
        }
        let after = thread_self()?;
        let d = |a: u64, b: u64| a.saturating_sub(b);
        Ok((
            TaskTimes {
                on_cpu_ns: spun,
                run_queue_ns: 0,
                slices: 0,
                ..before
            },
            TaskTimes {
                on_cpu_ns: d(after.on_cpu_ns, before.on_cpu_ns),
                run_queue_ns: d(after.run_queue_ns, before.run_queue_ns),
                slices: d(after.slices, before.slices),
                ..before
            },
        ))
    }

    fn thread_cpu_ns() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid, writable timespec.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        if rc != 0 {
            return 0;
        }
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    fn first_allowed_cpu() -> Option<usize> {
        // SAFETY: an all-zero cpu_set_t is a valid empty set; the kernel
        // writes at most size_of::<cpu_set_t>() bytes into it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return None;
            }
            (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set))
        }
    }

    fn pin_to(cpu: usize) -> io::Result<()> {
        // SAFETY: as above; pid 0 is the calling thread only.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(pid: i32, tid: i32, on: u64, rq: u64, slices: u64) -> TaskTimes {
        TaskTimes {
            pid,
            tid,
            on_cpu_ns: on,
            run_queue_ns: rq,
            slices,
        }
    }

    #[test]
    fn schedstat_lines_parse_and_garbage_does_not() {
        assert_eq!(
            parse_schedstat("1448462 3028511 37\n"),
            Some((1448462, 3028511, 37))
        );
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_schedstat("1 2"), None);
        assert_eq!(parse_schedstat("1 2 3 4"), None);
        assert_eq!(parse_schedstat("1 -2 3"), None);
        assert_eq!(parse_schedstat("1 2 x"), None);
    }

    #[test]
    fn stat_pgrp_is_counted_after_the_last_parenthesis() {
        assert_eq!(parse_stat_pgrp(b"42 (python3) S 1 42 42 0 -1"), Some(42));
        assert_eq!(parse_stat_pgrp(b"42 (a) b (c) S 1 7 42 0"), Some(7));
        assert_eq!(parse_stat_pgrp(b"42 (\xff\xfe) R 1 9 9"), Some(9));
        assert_eq!(parse_stat_pgrp(b"42 (x"), None);
        assert_eq!(parse_stat_pgrp(b"42 (x) S 1"), None);
    }

    #[test]
    fn a_delta_sums_tasks_in_both_and_counts_new_and_gone_ones() {
        let at = Instant::now();
        let before = Snapshot::from_tasks(
            at,
            vec![
                t(10, 11, 100, 50, 3),
                t(10, 10, 1000, 0, 1),
                t(10, 12, 7, 7, 7),
            ],
        );
        let after = Snapshot::from_tasks(
            at + Duration::from_millis(20),
            vec![
                t(10, 10, 1500, 200, 4),
                t(10, 11, 100, 50, 3),
                t(10, 13, 30, 5, 2),
            ],
        );
        let d = delta(&before, &after);
        assert_eq!(d.wall, Duration::from_millis(20));
        assert_eq!(d.tasks.len(), 4);
        assert_eq!(
            d.task(10)
                .map(|x| (x.on_cpu_ns, x.run_queue_ns, x.slices, x.seen)),
            Some((500, 200, 3, Seen::Both))
        );
        assert_eq!(
            d.task(11).map(|x| (x.on_cpu_ns, x.seen)),
            Some((0, Seen::Both))
        );
        assert_eq!(
            d.task(12).map(|x| (x.on_cpu_ns, x.seen)),
            Some((0, Seen::Vanished))
        );
        assert_eq!(
            d.task(13).map(|x| (x.on_cpu_ns, x.run_queue_ns, x.seen)),
            Some((30, 5, Seen::Appeared))
        );
        assert_eq!((d.on_cpu_ns, d.run_queue_ns, d.slices), (530, 205, 5));
        assert_eq!((d.appeared, d.vanished), (1, 1));
    }

    #[test]
    fn a_reused_tid_is_a_task_gone_and_a_new_one() {
        let at = Instant::now();
        let before = Snapshot::from_tasks(at, vec![t(10, 20, 900, 90, 9)]);
        let moved = Snapshot::from_tasks(at, vec![t(30, 20, 950, 95, 10)]);
        let backwards = Snapshot::from_tasks(at, vec![t(10, 20, 40, 4, 1)]);
        for after in [moved, backwards] {
            let d = delta(&before, &after);
            assert_eq!((d.appeared, d.vanished), (1, 1));
            let live = d.task(20).unwrap();
            assert_eq!(
                (live.seen, live.on_cpu_ns),
                (Seen::Appeared, after.tasks[0].on_cpu_ns)
            );
        }
    }

    #[test]
    fn an_empty_pair_of_snapshots_is_an_empty_delta() {
        let at = Instant::now();
        let d = delta(
            &Snapshot::from_tasks(at, vec![]),
            &Snapshot::from_tasks(at, vec![]),
        );
        assert!(d.tasks.is_empty());
        assert_eq!(
            (d.on_cpu_ns, d.run_queue_ns, d.wall),
            (0, 0, Duration::ZERO)
        );
    }

    #[test]
    fn the_run_queue_reads_frozen_only_where_every_run_reads_under_the_minimum() {
        const MS: u64 = 1_000_000;
        // Replays recorded runs, counting how many the check asked for.
        let replay = |runs: &[Option<u64>]| {
            let mut asked = 0;
            let verdict = run_queue_verdict(|| {
                asked += 1;
                runs[asked - 1]
            });
            (verdict, asked)
        };
        // A counter that is on: one run settles it.
        assert_eq!(replay(&[Some(14 * MS)]), (None, 1));
        // A loaded machine that ran the two threads one after the other in
        // the first two runs, then shared the CPU.
        assert_eq!(replay(&[Some(0), Some(MS / 5), Some(12 * MS)]), (None, 3));
        // The twin: a frozen counter reads under the minimum every run.
        assert_eq!(
            replay(&[Some(0), Some(MS / 5), Some(MS / 10)]),
            (Some(Frozen::RunQueue { read_ns: MS / 5 }), 3)
        );
        // Just under the minimum is under it; at it is not.
        assert_eq!(
            replay(&[Some(MS - 1), Some(MS - 1), Some(MS - 1)]).0,
            Some(Frozen::RunQueue { read_ns: MS - 1 })
        );
        assert_eq!(replay(&[Some(0), Some(MS)]), (None, 2));
        // Threads that could not pin leave the counter unrefuted.
        assert_eq!(replay(&[Some(0), None]), (None, 2));
    }

    #[test]
    fn every_unavailable_state_names_its_remedy() {
        let states = [
            Availability::Missing(Missing::NotLinux),
            Availability::Missing(Missing::Off),
            Availability::Missing(Missing::NoFile {
                error: "No such file".into(),
            }),
            Availability::Frozen(Frozen::OnCpu {
                spun_ns: 10_000_000,
                read_ns: 0,
            }),
            Availability::Frozen(Frozen::RunQueue { read_ns: 0 }),
        ];
        for s in states {
            let r = s.reason().unwrap();
            assert!(r.contains("wall-clock rules apply"), "{r}");
        }
        assert!(Availability::Frozen(Frozen::RunQueue { read_ns: 0 })
            .reason()
            .unwrap()
            .contains("sched_schedstats"));
        assert_eq!(Availability::Available.reason(), None);
    }

    #[cfg(target_os = "linux")]
    mod on_this_machine {
        use super::super::*;
        use std::os::unix::process::CommandExt;
        use std::process::Command;

        #[test]
        fn this_machine_keeps_accounting() {
            assert_eq!(
                availability(),
                &Availability::Available,
                "{:?}",
                availability().reason()
            );
        }

        #[test]
        fn a_group_scan_finds_a_child_group_and_a_gone_group_is_empty() {
            let mut child = Command::new("sleep")
                .arg("30")
                .process_group(0)
                .spawn()
                .unwrap();
            let pgrp = child.id() as i32;
            let snap = Snapshot::of_group(pgrp).unwrap();
            let members = group_members(pgrp).unwrap();
            child.kill().unwrap();
            child.wait().unwrap();
            assert_eq!(members, vec![pgrp]);
            assert_eq!(snap.pids(), vec![pgrp]);
            assert_eq!(snap.task(pgrp).map(|t| t.pid), Some(pgrp));
            assert!(Snapshot::of_group(pgrp).unwrap().tasks.is_empty());
            assert!(Snapshot::of_pids(&[pgrp]).tasks.is_empty());
        }

        #[test]
        fn the_own_process_group_holds_this_thread() {
            // SAFETY: getpgrp cannot fail.
            let pgrp = unsafe { libc::getpgrp() };
            let me = thread_self().unwrap();
            let snap = Snapshot::of_group(pgrp).unwrap();
            assert_eq!(
                snap.task(me.tid).map(|t| t.pid),
                Some(std::process::id() as i32)
            );
        }
    }
}
