//! Measuring a worker census (E15): which worker processes serve, and does
//! the app's runtime (a thread started at import, with a heartbeat) really
//! run in each of them?
//!
//! The detector's own control comes first: the runner imports the fixture
//! in a plain Python process, forks without exec, and asks both sides
//! (`fixtures/bareapp/forkcheck.py`). The parent must read alive and the
//! child dead; if the child reads alive, the detector is blind and nothing it
//! says about workers counts. Then `requests` census requests, each on a
//! fresh connection so they spread over the workers, and the same census
//! again at the end to see whether the worker pids stayed the same (a crash-
//! and-respawn loop shows as new pids).

use std::collections::BTreeSet;
use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::http;
use crate::limits::Limits;
use crate::probe::pair_ratio::PairRatioRun;
use crate::process::GroupGuard;

/// What `/runtime` says about one worker.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
pub struct RuntimeStatus {
    pub pid: u32,
    pub import_pid: u32,
    pub alive: bool,
    pub heartbeat_advanced: bool,
    pub tid_listed: Option<bool>,
    pub python_says_alive: bool,
    /// Which evidence the fixture used: `heartbeat+proc-task` or `heartbeat`.
    pub check: String,
}

/// The fork control's two readings.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ForkControl {
    pub parent: RuntimeStatus,
    pub child: RuntimeStatus,
}

/// One census pass.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Census {
    pub replies: Vec<RuntimeStatus>,
    pub problems: Vec<String>,
}

impl Census {
    pub fn pids(&self) -> BTreeSet<u32> {
        self.replies.iter().map(|r| r.pid).collect()
    }

    /// Workers whose runtime does not run, by pid.
    pub fn dead(&self) -> BTreeSet<u32> {
        self.replies
            .iter()
            .filter(|r| !r.alive)
            .map(|r| r.pid)
            .collect()
    }
}

/// How long the fork control may take.
const FORK_CONTROL_LIMIT: Duration = Duration::from_secs(30);

/// Runs the fork control with `python` in `app_dir`.
pub fn fork_control(python: &Path, app_dir: &Path) -> Result<ForkControl, String> {
    let mut command = Command::new(python);
    command
        .arg("forkcheck.py")
        .current_dir(app_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut guard = GroupGuard::spawn(&mut command, Duration::from_millis(200)).map_err(|e| {
        format!(
            "cannot run fixtures/bareapp/forkcheck.py with {}: {e}",
            python.display()
        )
    })?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = guard.try_exit_status() {
            break status;
        }
        if started.elapsed() >= FORK_CONTROL_LIMIT {
            return Err(format!(
                "forkcheck.py did not finish within {} s",
                FORK_CONTROL_LIMIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let child = guard.child_mut();
    let mut stdout = Vec::new();
    let mut stderr = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_end(&mut stdout);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut stderr);
    }
    if !status.success() {
        return Err(format!("forkcheck.py failed ({status}): {}", stderr.trim()));
    }
    serde_json::from_slice(&stdout).map_err(|e| {
        format!(
            "forkcheck.py printed something else ({e}): {}",
            String::from_utf8_lossy(&stdout)
        )
    })
}

/// `requests` census requests, each on a fresh connection.
pub async fn census(addr: SocketAddr, path: &str, requests: u32, limits: Limits) -> Census {
    let mut c = Census::default();
    for i in 0..requests {
        match http::get_once(addr, path, limits.request).await {
            Ok(r) if r.status == 200 => match serde_json::from_slice::<RuntimeStatus>(&r.body) {
                Ok(s) => c.replies.push(s),
                Err(e) => c.problems.push(format!(
                    "request {}: {path} answered something else ({e})",
                    i + 1
                )),
            },
            Ok(r) => c
                .problems
                .push(format!("request {}: HTTP {} for {path}", i + 1, r.status)),
            Err(e) => c.problems.push(format!("request {}: {e}", i + 1)),
        }
    }
    c
}

/// Everything the census probe saw.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CensusRun {
    /// The fork control, or why it could not run.
    pub fork_control: Result<ForkControl, String>,
    /// The census at the start and at the end of the gate.
    pub before: Census,
    pub after: Census,
    /// The cross-process pair ratio, where the row asks for one.
    pub pair_ratio: Option<PairRatioRun>,
}
