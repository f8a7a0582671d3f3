//! The one way the runner runs a short-lived command to its end (an
//! interpreter query, `pip install`, a `--version`, the fork control, `git
//! rev-parse`): on `tokio::process`, bounded in time, with stdout and stderr
//! drained while it runs and kept up to a cap.
//!
//! Draining while waiting matters: a child that fills a pipe nobody reads
//! blocks in `write` and looks hung until the timeout. The child leads its
//! own process group (see [`crate::host::process`]); at the timeout the whole
//! group is stopped (SIGTERM, grace, SIGKILL), and so is anything the
//! command left in its group when it exited, which would otherwise hold the
//! pipes open and outlive the runner. Dropping the future mid-run stops the
//! group too.

use std::borrow::Cow;
use std::io;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::host::process::{
    group_alive, lead_own_group, stop_group, stop_group_async, StopOutcome,
};

/// How long the pipes may stay open once the command's group is gone (held
/// only by a process that left the group): what was read by then is kept.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

/// The bounds of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandBounds {
    /// From spawn to the end of the command.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL when the group is stopped.
    pub grace: Duration,
    /// Bytes kept of each of stdout and stderr; the rest is read and counted.
    pub cap_bytes: usize,
    /// Keep the last this many bytes of stderr instead of the first
    /// `cap_bytes`: where a crash's traceback is.
    pub stderr_tail_bytes: Option<usize>,
}

impl CommandBounds {
    /// `timeout`, a 200 ms grace, 1 MiB of each stream.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            grace: Duration::from_millis(200),
            cap_bytes: 1 << 20,
            stderr_tail_bytes: None,
        }
    }

    pub fn with_cap(self, cap_bytes: usize) -> Self {
        Self { cap_bytes, ..self }
    }

    pub fn with_grace(self, grace: Duration) -> Self {
        Self { grace, ..self }
    }

    /// Keeps the last `bytes` of stderr rather than its head.
    pub fn with_stderr_tail(self, bytes: usize) -> Self {
        Self {
            stderr_tail_bytes: Some(bytes),
            ..self
        }
    }
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited (or a signal ended it) within the bound.
    Exited(ExitStatus),
    /// The bound passed; its group was stopped as this says.
    TimedOut(StopOutcome),
}

/// A finished run: how it ended and what it printed (up to the cap).
#[derive(Debug, Clone)]
pub struct Finished {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bytes read past the cap, both streams together.
    pub dropped_bytes: u64,
    pub elapsed: Duration,
}

impl Finished {
    /// The exit status; `None` when the bound passed.
    pub fn status(&self) -> Option<ExitStatus> {
        match self.ending {
            Ending::Exited(s) => Some(s),
            Ending::TimedOut(_) => None,
        }
    }

    /// Exited 0 within the bound.
    pub fn success(&self) -> bool {
        self.status().is_some_and(|s| s.success())
    }

    pub fn stdout_text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stdout)
    }

    pub fn stderr_text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stderr)
    }
}

/// Stops the group if the run is dropped before it finished.
struct StopOnDrop {
    pgid: i32,
    grace: Duration,
    armed: bool,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if self.armed {
            // tokio reaps the dropped leader itself.
            stop_group(self.pgid, self.grace, &mut || {});
        }
    }
}

/// Runs `command` (stdin from /dev/null, stdout and stderr captured) to its
/// end or to `bound.timeout`, whichever comes first. `Err` only when it
/// could not be started.
pub async fn run(command: Command, bound: CommandBounds) -> io::Result<Finished> {
    run_watched(command, bound, |_| ()).await.map(|(f, ())| f)
}

/// [`run`], calling `on_spawn` with the child's pid once it is started
/// (to watch it from outside while it runs); its value comes back with the
/// run.
pub async fn run_watched<W>(
    mut command: Command,
    bound: CommandBounds,
    on_spawn: impl FnOnce(i32) -> W,
) -> io::Result<(Finished, W)> {
    let started = Instant::now();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    lead_own_group(&mut command);
    let mut child = tokio::process::Command::from(command).spawn()?;
    let pgid = child
        .id()
        .ok_or_else(|| io::Error::other("the child had no pid right after spawn"))?
        as i32;
    let watch = on_spawn(pgid);
    let mut guard = StopOnDrop {
        pgid,
        grace: bound.grace,
        armed: true,
    };
    let deadline = tokio::time::Instant::now() + bound.timeout;
    let (stdout_pipe, stderr_pipe) = (child.stdout.take(), child.stderr.take());
    let mut stdout = Capped::new(bound.cap_bytes);
    let mut stderr = match bound.stderr_tail_bytes {
        Some(tail) => Capped::tail(tail),
        None => Capped::new(bound.cap_bytes),
    };
    let ending = {
        let drains = async {
            tokio::join!(
                drain(stdout_pipe, &mut stdout),
                drain(stderr_pipe, &mut stderr)
            )
        };
        tokio::pin!(drains);
        let mut drained = false;
        let waited = loop {
            tokio::select! {
                // Child::wait is cancel safe: a turn of the loop loses nothing.
                status = child.wait() => break Some(status),
                _ = &mut drains, if !drained => drained = true,
                () = tokio::time::sleep_until(deadline) => break None,
            }
        };
        let ending = match waited {
            Some(Ok(status)) => {
                if group_alive(pgid) {
                    stop_group_async(pgid, bound.grace, &mut child).await;
                }
                Ending::Exited(status)
            }
            Some(Err(e)) => return Err(e),
            None => Ending::TimedOut(stop_group_async(pgid, bound.grace, &mut child).await),
        };
        guard.armed = false;
        if !drained {
            let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, &mut drains).await;
        }
        ending
    };
    stderr.end();
    let finished = Finished {
        ending,
        dropped_bytes: stdout.dropped + stderr.dropped,
        stdout: stdout.kept,
        stderr: stderr.kept,
        elapsed: started.elapsed(),
    };
    Ok((finished, watch))
}

/// [`run`] for the callers that are synchronous (preparing the venv, `runner
/// servers`, the sign-off fingerprint): they are called both outside any
/// runtime (the `gates` harness's discovery) and inside the CLI's
/// current-thread runtime, where a nested `block_on` panics, so rather than
/// turning those call chains async this runs the helper on a thread of its
/// own with a current-thread runtime and waits for it, blocking the caller
/// just as the old polling loops did.
pub fn run_blocking(command: Command, bound: CommandBounds) -> io::Result<Finished> {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(run(command, bound))
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("the thread running the command panicked")))
}

/// One stream's captured bytes: its head, or its tail.
struct Capped {
    kept: Vec<u8>,
    cap: usize,
    tail: bool,
    dropped: u64,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Self {
            kept: Vec::new(),
            cap,
            tail: false,
            dropped: 0,
        }
    }

    fn tail(cap: usize) -> Self {
        Self {
            tail: true,
            ..Self::new(cap)
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        if self.tail {
            self.kept.extend_from_slice(chunk);
            // Trimmed now and then, not at every chunk.
            if self.kept.len() > 2 * self.cap {
                self.end();
            }
            return;
        }
        let keep = chunk.len().min(self.cap.saturating_sub(self.kept.len()));
        self.kept.extend_from_slice(&chunk[..keep]);
        self.dropped += (chunk.len() - keep) as u64;
    }

    /// A tail trimmed to its cap.
    fn end(&mut self) {
        if self.tail && self.kept.len() > self.cap {
            let cut = self.kept.len() - self.cap;
            self.kept.drain(..cut);
            self.dropped += cut as u64;
        }
    }
}

/// Reads `pipe` to its end (or to a read error), keeping up to the cap.
async fn drain(pipe: Option<impl AsyncRead + Unpin>, into: &mut Capped) {
    let Some(mut pipe) = pipe else { return };
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => into.push(&chunk[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    /// Whether `pid` is a live (non-zombie) process.
    fn alive(pid: i32) -> bool {
        // SAFETY: signal 0 only checks for existence.
        let exists = unsafe { libc::kill(pid, 0) } == 0;
        #[cfg(target_os = "linux")]
        {
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    s.rfind(')')
                        .is_some_and(|i| s[i + 1..].trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            exists && !zombie
        }
        #[cfg(not(target_os = "linux"))]
        exists
    }

    /// 2 MiB on stdout and 2 MiB on stderr, interleaved in 64 KiB blocks.
    const CHATTY: &str =
        "for i in $(seq 32); do head -c 65536 /dev/zero; head -c 65536 /dev/zero >&2; done";

    #[tokio::test]
    async fn a_chatty_child_finishes_promptly_with_all_its_output() {
        let f = run(
            sh(CHATTY),
            CommandBounds::new(Duration::from_secs(60)).with_cap(4 << 20),
        )
        .await
        .unwrap();
        assert!(f.success(), "{:?}", f.ending);
        assert_eq!((f.stdout.len(), f.stderr.len()), (2 << 20, 2 << 20));
        assert_eq!(f.dropped_bytes, 0);
        // Far inside the bound: nothing waited on a full pipe.
        assert!(f.elapsed < Duration::from_secs(20), "{:?}", f.elapsed);
    }

    #[test]
    fn the_same_child_stalls_when_nobody_drains_its_pipes() {
        // The twin of the test above: waiting without reading (the old
        // polling loops) leaves it blocked on a full pipe, so "finished
        // promptly" is a check that can fail.
        let mut child = sh(CHATTY)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(2));
        let still_running = child.try_wait().unwrap().is_none();
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            still_running,
            "the child ended without anyone reading its pipes"
        );
    }

    #[tokio::test]
    async fn output_past_the_cap_is_read_and_counted_not_kept() {
        let f = run(
            sh(CHATTY),
            CommandBounds::new(Duration::from_secs(60)).with_cap(1000),
        )
        .await
        .unwrap();
        assert!(f.success());
        assert_eq!((f.stdout.len(), f.stderr.len()), (1000, 1000));
        assert_eq!(f.dropped_bytes, 2 * ((2 << 20) - 1000));
    }

    #[tokio::test]
    async fn a_tail_keeps_the_last_bytes_of_stderr_and_the_pid_is_seen() {
        // 2 MiB of zeros, then the words a crash would end with.
        let script = format!("{CHATTY}; echo Traceback: the end >&2");
        let bound = CommandBounds::new(Duration::from_secs(60))
            .with_cap(4 << 20)
            .with_stderr_tail(100);
        let (f, pid) = run_watched(sh(&script), bound, |pid| pid).await.unwrap();
        assert!(f.success());
        assert_eq!(f.stderr.len(), 100);
        assert!(f.stderr_text().ends_with("Traceback: the end\n"));
        // What was cut from stderr is counted (stdout, under its cap, whole).
        assert_eq!(f.dropped_bytes, (2 << 20) + 19 - 100);
        assert!(pid > 0);
        // Its twin: without the tail, the head is kept, the words lost.
        let head = run(
            sh(&script),
            CommandBounds::new(Duration::from_secs(60)).with_cap(100),
        )
        .await
        .unwrap();
        assert_eq!(head.stderr, vec![0u8; 100]);
    }

    #[tokio::test]
    async fn a_hanging_child_is_stopped_at_the_timeout_with_its_grandchildren() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // A grandchild that ignores SIGTERM, so the group needs SIGKILL; the
        // leader writes both pids where the test can read them mid-run.
        let script = format!(
            "sh -c 'trap \"\" TERM; sleep 60' & echo $$ $! > {}; wait",
            pids.display()
        );
        let bound =
            CommandBounds::new(Duration::from_millis(1500)).with_grace(Duration::from_millis(300));
        let task = tokio::spawn(run(sh(&script), bound));
        // While it runs, both are seen alive: the check below can fail.
        let started = Instant::now();
        let (leader, grandchild) = loop {
            if let Some((a, b)) = std::fs::read_to_string(&pids).ok().and_then(|t| {
                let mut it = t.split_whitespace().map(|p| p.parse::<i32>().ok());
                Some((it.next()??, it.next()??))
            }) {
                break (a, b);
            }
            assert!(started.elapsed() < Duration::from_secs(20), "no pids");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert!(alive(leader) && alive(grandchild));
        let f = task.await.unwrap().unwrap();
        assert_eq!(f.ending, Ending::TimedOut(StopOutcome::Killed));
        assert!(f.elapsed >= Duration::from_millis(1500), "{:?}", f.elapsed);
        assert!(f.elapsed < Duration::from_secs(10), "{:?}", f.elapsed);
        assert!(!alive(leader), "the leader survived");
        assert!(!alive(grandchild), "the grandchild survived");
        assert!(!group_alive(leader));
    }

    #[tokio::test]
    async fn a_failing_childs_status_and_stderr_come_back() {
        let f = run(
            sh("echo partial; echo 'no such thing' >&2; exit 3"),
            CommandBounds::new(Duration::from_secs(30)),
        )
        .await
        .unwrap();
        assert_eq!(f.status().and_then(|s| s.code()), Some(3));
        assert!(!f.success());
        assert_eq!(f.stderr_text(), "no such thing\n");
        assert_eq!(f.stdout_text(), "partial\n");
        // Its twin: the same command exiting 0 reads as a success.
        let ok = run(sh("echo fine"), CommandBounds::new(Duration::from_secs(30)))
            .await
            .unwrap();
        assert!(ok.success());
        assert_eq!(ok.stderr, b"");
    }

    #[tokio::test]
    async fn what_the_command_leaves_in_its_group_is_stopped_when_it_exits() {
        // The leader exits at once; its background child would hold the
        // pipes open for a minute.
        let f = run(
            sh("sleep 60 & echo $!"),
            CommandBounds::new(Duration::from_secs(30)),
        )
        .await
        .unwrap();
        assert!(f.success());
        let pid: i32 = f.stdout_text().trim().parse().unwrap();
        assert!(f.elapsed < Duration::from_secs(10), "{:?}", f.elapsed);
        assert!(!alive(pid), "the background child survived");
    }

    #[tokio::test]
    async fn the_blocking_form_works_inside_a_runtime_too() {
        let f = run_blocking(
            sh("echo inside"),
            CommandBounds::new(Duration::from_secs(30)),
        )
        .unwrap();
        assert_eq!(f.stdout_text(), "inside\n");
        let missing = run_blocking(
            Command::new("/nonexistent/program"),
            CommandBounds::new(Duration::from_secs(5)),
        );
        assert!(missing.is_err());
    }
}
