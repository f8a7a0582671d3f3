//! Measuring a worker census (E15): which worker processes serve, and does
//! the app's runtime (a thread started at import, with a heartbeat) really
//! run in each of them?
//!
//! The detector's own control comes first: the runner imports the fixture
//! in a plain Python process, forks without exec, and asks both sides
//! (`forkcheck.py` in the app's folder: fixtures/bareapp's stand-in thread,
//! fixtures/modelapp's tokenizers pool). The parent must read alive and the
//! child dead; if the child reads alive, the detector is blind and nothing it
//! says about workers counts. Then `requests` census requests, each on a
//! fresh connection so they spread over the workers, and the same census
//! again at the end to see whether the worker pids stayed the same (a crash-
//! and-respawn loop shows as new pids).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::host::bounded::{self, Bound, Ending};
use crate::host::limits::Limits;
use crate::http;
use crate::kernel::pss::GroupPss;
use crate::probe::pair_ratio::PairRatioRun;

/// What `/runtime` says about one worker.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
pub struct RuntimeStatus {
    pub pid: u32,
    pub import_pid: u32,
    pub alive: bool,
    pub heartbeat_advanced: bool,
    pub tid_listed: Option<bool>,
    /// Python's own bookkeeping (`Thread.is_alive()`), where the runtime is
    /// a Python thread; None for a native pool (the model app's).
    #[serde(default)]
    pub python_says_alive: Option<bool>,
    /// The fixture's evidence in a sentence (the model app's: pool threads,
    /// the watched batch, the pool's run time).
    #[serde(default)]
    pub note: Option<String>,
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

/// Runs the fork control with `python` in `app_dir`, without holding up
/// the runtime while it runs.
pub async fn fork_control(python: &Path, app_dir: &Path) -> Result<ForkControl, String> {
    let mut command = Command::new(python);
    command.arg("forkcheck.py").current_dir(app_dir);
    let finished = bounded::run(command, Bound::new(FORK_CONTROL_LIMIT))
        .await
        .map_err(|e| {
            format!(
                "cannot run {}/forkcheck.py with {}: {e}",
                app_dir.display(),
                python.display()
            )
        })?;
    match finished.ending {
        Ending::TimedOut(_) => {
            return Err(format!(
                "forkcheck.py did not finish within {} s",
                FORK_CONTROL_LIMIT.as_secs()
            ))
        }
        Ending::Exited(status) if !status.success() => {
            return Err(format!(
                "forkcheck.py failed ({status}): {}",
                finished.stderr_text().trim()
            ))
        }
        Ending::Exited(_) => {}
    }
    serde_json::from_slice(&finished.stdout).map_err(|e| {
        format!(
            "forkcheck.py printed something else ({e}): {}",
            finished.stdout_text()
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
    /// The server group's PSS at its peak over the gate's samples (after
    /// readiness, after each census and the pair ratio), or why none.
    pub pss: Result<GroupPss, String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bareapp() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bareapp")
    }

    #[tokio::test]
    async fn the_fork_control_reads_the_parent_alive_and_the_forked_child_dead() {
        let fc = fork_control(Path::new("python3"), &bareapp())
            .await
            .unwrap();
        assert!(fc.parent.alive, "{fc:?}");
        assert!(!fc.child.alive, "{fc:?}");
        assert_ne!(fc.parent.pid, fc.child.pid);
    }

    #[tokio::test]
    async fn a_fork_control_that_cannot_run_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let e = fork_control(Path::new("python3"), dir.path())
            .await
            .unwrap_err();
        assert!(e.starts_with("forkcheck.py failed (exit status: 2)"), "{e}");
        assert!(e.contains("forkcheck.py"), "{e}");
        let e = fork_control(Path::new("/nonexistent/python"), &bareapp())
            .await
            .unwrap_err();
        assert!(
            e.starts_with("cannot run ") && e.contains("fixtures/bareapp/forkcheck.py"),
            "{e}"
        );
    }
}
