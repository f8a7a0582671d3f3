//! Child processes that die with the runner: each in its own process group,
//! stopped with SIGTERM, a grace period, then SIGKILL for the whole group.
//!
//! A server such as granian or gunicorn forks workers; killing only the
//! process we spawned leaves those workers holding the port. So every child
//! leads a new process group and every stop signals the group. [`GroupGuard`]
//! stops its group when dropped, which covers success, failure, `?`, panics
//! (unwinding) and a gate future dropped by the Ctrl-C / SIGTERM handler in
//! `main`. On Linux the leader also gets `PR_SET_PDEATHSIG`, so a runner that
//! is SIGKILLed (and so runs no destructor) still takes its leader down.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// How often a stop polls for the group to be gone.
const POLL: Duration = Duration::from_millis(10);
/// How long a SIGKILLed group gets to disappear.
const KILL_REAP: Duration = Duration::from_secs(2);

/// A spawned child leading its own process group.
#[derive(Debug)]
pub struct GroupGuard {
    child: Child,
    pgid: i32,
    grace: Duration,
    stopped: bool,
}

/// How a stop went: which signal ended the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StopOutcome {
    /// The group was already gone before any signal.
    AlreadyExited,
    /// SIGTERM ended every process in the group within the grace period.
    Terminated,
    /// Something in the group ignored SIGTERM; SIGKILL ended it.
    Killed,
}

impl GroupGuard {
    /// Spawns `command` as the leader of a new process group.
    pub fn spawn(command: &mut Command, grace: Duration) -> io::Result<Self> {
        lead_own_group(command);
        let child = command.spawn()?;
        let pgid = child.id() as i32;
        Ok(Self {
            child,
            pgid,
            grace,
            stopped: false,
        })
    }

    /// The process group id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// The leader's exit status, if it has exited (non-blocking).
    pub fn try_exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The leader's stdin, stdout (where piped), for line protocols.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Stops the whole group: SIGTERM, up to `grace` for it to go, SIGKILL.
    pub fn stop(&mut self) -> StopOutcome {
        if self.stopped {
            return StopOutcome::AlreadyExited;
        }
        self.stopped = true;
        let child = &mut self.child;
        let outcome = stop_group(self.pgid, self.grace, &mut || {
            let _ = child.try_wait();
        });
        let _ = self.child.wait();
        outcome
    }
}

/// Makes `command`'s child lead a new process group and, on Linux, die with
/// the thread that spawns it (PR_SET_PDEATHSIG).
pub fn lead_own_group(command: &mut Command) {
    command.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
}

/// Stops process group `pgid`: SIGTERM, up to `grace` for it to go, then
/// SIGKILL and a bounded moment for the kernel. `reap` collects the leader
/// if it has exited (a zombie leader still counts as alive on macOS).
/// Blocks the calling thread: an async caller uses [`stop_group_async`].
pub fn stop_group(pgid: i32, grace: Duration, reap: &mut dyn FnMut()) -> StopOutcome {
    reap();
    if !group_alive(pgid) {
        return StopOutcome::AlreadyExited;
    }
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        reap();
        if !group_alive(pgid) {
            return StopOutcome::Terminated;
        }
        std::thread::sleep(POLL);
    }
    signal_group(pgid, libc::SIGKILL);
    // SIGKILL cannot be ignored; give the kernel a bounded moment to reap.
    let deadline = Instant::now() + KILL_REAP;
    while Instant::now() < deadline {
        reap();
        if !group_alive(pgid) {
            break;
        }
        std::thread::sleep(POLL);
    }
    StopOutcome::Killed
}

/// [`stop_group`] for async callers: the same steps, sleeping on tokio's
/// clock so that the runtime goes on while the group gets its grace.
pub async fn stop_group_async(
    pgid: i32,
    grace: Duration,
    child: &mut tokio::process::Child,
) -> StopOutcome {
    let _ = child.try_wait();
    let outcome = if !group_alive(pgid) {
        StopOutcome::AlreadyExited
    } else {
        signal_group(pgid, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        let mut gone = false;
        while Instant::now() < deadline {
            let _ = child.try_wait();
            if !group_alive(pgid) {
                gone = true;
                break;
            }
            tokio::time::sleep(POLL).await;
        }
        if gone {
            StopOutcome::Terminated
        } else {
            signal_group(pgid, libc::SIGKILL);
            let deadline = Instant::now() + KILL_REAP;
            while Instant::now() < deadline {
                let _ = child.try_wait();
                if !group_alive(pgid) {
                    break;
                }
                tokio::time::sleep(POLL).await;
            }
            StopOutcome::Killed
        }
    };
    // The leader is gone (or was SIGKILLed): collect its status.
    let _ = tokio::time::timeout(KILL_REAP, child.wait()).await;
    outcome
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: killpg only sends a signal; a stale pgid yields ESRCH.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// Whether any live (non-zombie) process is still in process group `pgid`.
///
/// `kill(-pgid, 0)` also succeeds for zombies, and orphaned workers become
/// zombies of whoever adopted them; on Linux we read /proc so that a reaped-
/// by-someone-else zombie does not count as a survivor. On macOS (no /proc)
/// the signal probe is the check.
pub fn group_alive(pgid: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        if let Some(alive) = linux_group_alive(pgid) {
            return alive;
        }
    }
    // SAFETY: signal 0 only checks for existence and permission.
    let rc = unsafe { libc::killpg(pgid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Members of the process group `pgid` that are not zombies, by pid.
#[cfg(target_os = "linux")]
pub fn live_group_members(pgid: i32) -> Option<Vec<i32>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut members = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: fields start
        // after the last ')'. Then: state, ppid, pgrp.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let _ppid = fields.next();
        let pgrp = fields.next().and_then(|s| s.parse::<i32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            members.push(pid);
        }
    }
    Some(members)
}

#[cfg(target_os = "linux")]
fn linux_group_alive(pgid: i32) -> Option<bool> {
    live_group_members(pgid).map(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, grace_ms: u64) -> GroupGuard {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        GroupGuard::spawn(&mut cmd, Duration::from_millis(grace_ms)).unwrap()
    }

    #[test]
    fn a_running_group_is_seen_alive_and_then_gone() {
        // Leader plus a background grandchild: both must go.
        let mut g = sh("sleep 30 & sleep 30", 2000);
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            group_alive(g.pgid()),
            "the check must see a live group, or it proves nothing"
        );
        assert_eq!(g.stop(), StopOutcome::Terminated);
        assert!(!group_alive(g.pgid()));
    }

    #[test]
    fn a_group_that_ignores_sigterm_is_killed_after_the_grace() {
        let mut g = sh("trap '' TERM; sleep 30 & wait", 300);
        std::thread::sleep(Duration::from_millis(100));
        let started = Instant::now();
        assert_eq!(g.stop(), StopOutcome::Killed);
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert!(!group_alive(g.pgid()));
    }

    #[test]
    fn dropping_the_guard_stops_the_group() {
        let g = sh("sleep 30", 2000);
        let pgid = g.pgid();
        assert!(group_alive(pgid));
        drop(g);
        assert!(!group_alive(pgid));
    }
}
