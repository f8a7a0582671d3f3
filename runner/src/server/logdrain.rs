//! A server's stdout and stderr, drained by the runner into its log file up
//! to a cap.
//!
//! Handing the server the log file itself lets a server that floods its
//! output fill the disk: measured with fixtures/faultserver's flood-stdout,
//! 175 MB in the 1.2 s of a two-trial gate, so gigabytes for a full one. So
//! the server writes into a pipe and a thread of ours copies it to the file:
//! the first `cap` bytes verbatim, then only the last few KiB are kept (in
//! memory), counted, and appended with a note when the pipe closes. The
//! thread always keeps reading, so a chatty server never blocks on a full
//! pipe (which would change what is measured).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::FromRawFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// How much of a server's output its log keeps verbatim.
pub const LOG_CAP_BYTES: u64 = 8 * 1024 * 1024;
/// How much of the end of the output is kept once the cap is reached.
const TAIL_KEEP_BYTES: usize = 16 * 1024;

#[derive(Default)]
struct State {
    written: u64,
    dropped: u64,
    tail: VecDeque<u8>,
}

/// The reading end.
pub struct LogDrain {
    state: Arc<Mutex<State>>,
    cap: u64,
    /// Closed when the copying thread has written everything.
    finished: Mutex<mpsc::Receiver<()>>,
}

/// The writing ends, for the child's stdout and stderr.
pub struct ChildOutput {
    pub stdout: Stdio,
    pub stderr: Stdio,
}

impl LogDrain {
    /// Creates `log` and a pipe into it; a thread copies the pipe to the file
    /// until every writer has closed it. Drop the `Command` holding the
    /// returned ends once the child is spawned, or the pipe never closes.
    pub fn start(log: &Path, cap: u64) -> io::Result<(Self, ChildOutput)> {
        let mut file = File::create(log)?;
        let (mut reader, writer) = pipe()?;
        let child = ChildOutput {
            stderr: Stdio::from(writer.try_clone()?),
            stdout: Stdio::from(writer),
        };
        let (done, finished) = mpsc::channel::<()>();
        let drain = Self {
            state: Arc::new(Mutex::new(State::default())),
            cap,
            finished: Mutex::new(finished),
        };
        let state = drain.state.clone();
        std::thread::Builder::new()
            .name("log-drain".into())
            .spawn(move || {
                // Dropped when this thread ends: `wait` returns.
                let _done = done;
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match reader.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    };
                    let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                    let room = cap.saturating_sub(s.written).min(n as u64) as usize;
                    if room > 0 && file.write_all(&buf[..room]).is_ok() {
                        s.written += room as u64;
                    }
                    let over = &buf[room..n];
                    if !over.is_empty() {
                        s.dropped += over.len() as u64;
                        s.tail.extend(over);
                        let excess = s.tail.len().saturating_sub(TAIL_KEEP_BYTES);
                        s.tail.drain(..excess);
                    }
                }
                let s = state.lock().unwrap_or_else(|p| p.into_inner());
                if s.dropped > 0 {
                    let (a, b) = s.tail.as_slices();
                    let _ = write!(file, "\n{}\n", note(cap, s.dropped));
                    let _ = file.write_all(a);
                    let _ = file.write_all(b);
                }
            })?;
        Ok((drain, child))
    }

    /// Waits up to `limit` for the copy to finish (every writer gone and the
    /// note, if any, written); true if it did.
    pub fn wait(&self, limit: Duration) -> bool {
        match self.finished.lock() {
            Ok(rx) => matches!(
                rx.recv_timeout(limit),
                Err(mpsc::RecvTimeoutError::Disconnected)
            ),
            Err(_) => false,
        }
    }

    /// Bytes of output beyond the cap, not in the log file.
    pub fn dropped(&self) -> u64 {
        self.state.lock().map(|s| s.dropped).unwrap_or(0)
    }

    /// The last `lines` lines of output past the cap, after a note saying
    /// how much was dropped; None while the output is within the cap (the
    /// file has it all).
    pub fn overflow_tail(&self, lines: usize) -> Option<String> {
        let s = self.state.lock().ok()?;
        if s.dropped == 0 {
            return None;
        }
        let bytes: Vec<u8> = s.tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let all: Vec<&str> = text.lines().collect();
        let last = all[all.len().saturating_sub(lines)..].join("\n");
        Some(format!("{}\n{last}", note(self.cap, s.dropped)))
    }
}

fn note(cap: u64, dropped: u64) -> String {
    format!(
        "[runner: the server wrote {dropped} bytes more than the log keeps ({cap} bytes); \
         a server this busy writing output is measuring its logging; the end of its output follows]"
    )
}

/// A pipe whose ends are closed on exec (the child gets its own copies as
/// stdout and stderr, which exec keeps).
fn pipe() -> io::Result<(File, File)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe writes two descriptors into the array we own.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    for fd in fds {
        // SAFETY: fcntl on descriptors we just created.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors are fresh and owned by nothing else.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn run(script: &str, cap: u64) -> (LogDrain, std::path::PathBuf, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let (drain, out) = LogDrain::start(&log, cap).unwrap();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script])
            .stdout(out.stdout)
            .stderr(out.stderr);
        let status = cmd.status().unwrap();
        drop(cmd);
        assert!(status.success());
        (drain, log, dir)
    }

    #[test]
    fn output_within_the_cap_is_kept_whole() {
        let (drain, log, _dir) = run("echo out; echo err >&2", 1024);
        assert!(drain.wait(Duration::from_secs(10)));
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("out\n") && text.contains("err\n"), "{text}");
        assert_eq!(drain.dropped(), 0);
        assert!(drain.overflow_tail(5).is_none());
    }

    #[test]
    fn a_flood_is_capped_and_its_end_kept() {
        // 200 KB through a 4 KiB cap, ending with a line we must still see.
        let (drain, log, _dir) = run(
            "i=0; while [ $i -lt 4000 ]; do echo flood-line-of-fifty-bytes-xxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done; echo LAST",
            4096,
        );
        assert!(
            drain.wait(Duration::from_secs(10)),
            "the copy never finished"
        );
        let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
        assert!(
            text.len() < 4096 + TAIL_KEEP_BYTES + 512,
            "log is {} bytes",
            text.len()
        );
        assert!(
            text.contains("bytes more than the log keeps"),
            "{}",
            &text[..200]
        );
        assert!(text.trim_end().ends_with("LAST"));
        assert!(drain.dropped() > 190_000, "dropped {}", drain.dropped());
        let tail = drain.overflow_tail(3).unwrap();
        assert!(
            tail.starts_with("[runner:") && tail.ends_with("LAST"),
            "{tail}"
        );
    }
}
