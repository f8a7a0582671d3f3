//! The portable witness's readings on Linux, from `/proc`: the first field
//! of `/proc/PID/task/TID/schedstat` (on-CPU ns; the run-queue field beside
//! it is never read), the state letter of `/proc/PID/task/TID/stat`, and
//! the idle and iowait columns of `/proc/stat`'s `cpu` line. Each task's
//! two files stay open and are read with `pread` at offset 0 (procfs
//! writes the text afresh each time), so a sampling round costs a few µs
//! a task.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;

/// One task's open files.
pub struct Task {
    pub pid: i32,
    pub tid: i32,
    schedstat: File,
    stat: File,
}

impl Task {
    /// On-CPU ns: schedstat's first field only.
    pub fn on_cpu_ns(&self) -> Option<u64> {
        let mut buf = [0u8; 96];
        let n = self.schedstat.read_at(&mut buf, 0).ok()?;
        parse_on_cpu(&buf[..n])
    }

    /// Runnable (state `R`: on a CPU or waiting for one), or not.
    pub fn runnable(&self) -> Option<bool> {
        let mut buf = [0u8; 512];
        let n = self.stat.read_at(&mut buf, 0).ok()?;
        parse_state(&buf[..n]).map(|s| s == b'R')
    }
}

/// Every task of `pids`, its files opened (a task gone mid-listing is
/// left out).
pub fn open_tasks(pids: &[i32]) -> Vec<Task> {
    let mut out = Vec::new();
    for &pid in pids {
        let Ok(entries) = fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for entry in entries.flatten() {
            let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let dir = format!("/proc/{pid}/task/{tid}");
            if let (Ok(schedstat), Ok(stat)) = (
                File::open(format!("{dir}/schedstat")),
                File::open(format!("{dir}/stat")),
            ) {
                out.push(Task {
                    pid,
                    tid,
                    schedstat,
                    stat,
                });
            }
        }
    }
    out
}

/// The host's idle time (idle + iowait, every CPU), ns.
pub fn host_idle_ns() -> Option<u64> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|&h| h > 0)?;
    parse_idle_ticks(&text).map(|ticks| ticks.saturating_mul(1_000_000_000 / hz))
}

/// The processes of a process group.
pub fn group_members(pgrp: i32) -> io::Result<Vec<i32>> {
    crate::kernel::schedstat::group_members(pgrp)
}

/// The calling thread's id, as Python's `threading.get_native_id()` gives it.
pub fn current_tid() -> Option<i32> {
    Some(crate::kernel::schedstat::current_tid())
}

fn parse_on_cpu(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text)
        .ok()?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The state letter: the first field after the command's last `)`.
fn parse_state(stat: &[u8]) -> Option<u8> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat[close + 1..]
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace())
}

/// idle + iowait ticks from the `cpu ` line (the sum over CPUs).
fn parse_idle_ticks(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_ascii_whitespace()
        .skip(1)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    Some(f.get(3)? + f.get(4).copied().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_letter_is_read_after_the_last_parenthesis() {
        assert_eq!(parse_state(b"42 (python3) R 1 42"), Some(b'R'));
        assert_eq!(parse_state(b"42 (a) R (b) S 1 7"), Some(b'S'));
        // Twin: no closing parenthesis, no letter.
        assert_eq!(parse_state(b"42 (python3"), None);
    }

    #[test]
    fn only_the_on_cpu_field_of_schedstat_is_read() {
        assert_eq!(parse_on_cpu(b"1448462 3028511 37\n"), Some(1448462));
        assert_eq!(parse_on_cpu(b"x 1 2"), None);
    }

    #[test]
    fn host_idle_is_idle_plus_iowait_of_the_cpu_line() {
        let text = "cpu  10 2 30 400 5 0 1 0 0 0\ncpu0 5 1 15 200 2 0 0 0 0 0\n";
        assert_eq!(parse_idle_ticks(text), Some(405));
        // Twin: no aggregate line.
        assert_eq!(parse_idle_ticks("cpu0 5 1 15 200 2\n"), None);
    }
}
