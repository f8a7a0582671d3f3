//! The capacity control: the releasing work twice at once with no server in
//! the path, so a trial can tell "the server serialised the pair" from "the
//! machine had no second core to give" (docs/two-threads.md).
//!
//! Measured on a 2-core machine with one core kept busy by another process,
//! the releasing view reads 2.00x through granian with two threads, exactly
//! like the holding view; no statistic separates them. So each trial also
//! asks `fixtures/bareapp/capacity.py` (one long-lived plain Python process,
//! two threads, the fixture's own work function) for a single and a pair.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use crate::digest::WorkDigest;
use crate::host::process::GroupGuard;

/// Why a control sample could not be taken.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ControlError {
    #[error("cannot start the capacity control ({0}); it runs fixtures/bareapp/capacity.py with the same --python")]
    Start(String),
    #[error("the capacity control did not answer within {0} ms")]
    Timeout(u64),
    #[error("the capacity control failed: {0}")]
    Broken(String),
    #[error("the capacity control's work gave digest {got}, expected {expected}")]
    Digest { got: String, expected: String },
}

/// One control trial: the same work alone, then twice at once.
#[derive(Debug, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
pub struct ControlSample {
    pub single_ms: f64,
    pub pair_ms: f64,
}

#[derive(Deserialize)]
struct Line {
    single_ms: f64,
    pair_ms: f64,
    digest: String,
}

/// The running control process.
pub struct CapacityControl {
    // Declared first so the pipes close before the group is signalled.
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    _guard: GroupGuard,
}

impl CapacityControl {
    /// Starts `python capacity.py` in `app_dir`.
    pub fn start(python: &Path, app_dir: &Path) -> Result<Self, ControlError> {
        let mut command = Command::new(python);
        command
            .arg("capacity.py")
            .current_dir(app_dir)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut guard = GroupGuard::spawn(&mut command, Duration::from_millis(500))
            .map_err(|e| ControlError::Start(format!("{}: {e}", python.display())))?;
        let child = guard.child_mut();
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| ControlError::Start("no stdin pipe".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| ControlError::Start("no stdout pipe".into()))?;
        let stdin = ChildStdin::from_std(stdin).map_err(|e| ControlError::Start(e.to_string()))?;
        let stdout =
            ChildStdout::from_std(stdout).map_err(|e| ControlError::Start(e.to_string()))?;
        Ok(Self {
            stdin,
            stdout: BufReader::new(stdout),
            _guard: guard,
        })
    }

    /// Times one single and one pair of `kib` KiB of releasing work.
    pub async fn sample(
        &mut self,
        kib: u32,
        seed: u64,
        digest: &WorkDigest,
        timeout: Duration,
    ) -> Result<ControlSample, ControlError> {
        let exchange = async {
            self.stdin
                .write_all(format!("{kib} {seed}\n").as_bytes())
                .await
                .map_err(|e| ControlError::Broken(e.to_string()))?;
            self.stdin
                .flush()
                .await
                .map_err(|e| ControlError::Broken(e.to_string()))?;
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .await
                .map_err(|e| ControlError::Broken(e.to_string()))?;
            if n == 0 {
                return Err(ControlError::Broken("it exited".into()));
            }
            Ok(line)
        };
        let line = tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| ControlError::Timeout(timeout.as_millis() as u64))??;
        let parsed: Line = serde_json::from_str(&line)
            .map_err(|e| ControlError::Broken(format!("{e}: {line:?}")))?;
        let expected = digest.expected(seed);
        if parsed.digest != expected {
            return Err(ControlError::Digest {
                got: parsed.digest,
                expected,
            });
        }
        Ok(ControlSample {
            single_ms: parsed.single_ms,
            pair_ms: parsed.pair_ms,
        })
    }
}
