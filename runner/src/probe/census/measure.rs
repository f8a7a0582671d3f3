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
//! fresh connection, with the workers reached so far kept busy by the row's
//! own slow request until every worker is reached (`probe/spread.rs`: some
//! servers hand every fresh connection to one idle worker), and the same census
//! again at the end to see whether the worker pids stayed the same (a crash-
//! and-respawn loop shows as new pids).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::host::bounded::{self, CommandBounds, Ending};
use crate::host::limits::Limits;
use crate::kernel::pss::GroupPss;
use crate::probe::pair_ratio::PairRatioRun;
use crate::probe::spread::Spread;

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
    let finished = bounded::run(command, CommandBounds::new(FORK_CONTROL_LIMIT))
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

/// How long the census waits for the other workers to answer before
/// counting them. A server is ready when its first worker answers; the
/// others import the same app at the same time, so they answer within
/// about the first one's time (seconds for a model, fixtures/modelapp, tens
/// of seconds on a busy machine). The wait is twice the server's
/// readiness time plus two seconds, at most two minutes: a server that
/// runs fewer workers than asked fails in seconds, not minutes.
pub fn workers_up_bound(ready_after: Duration) -> Duration {
    (ready_after * 2 + Duration::from_secs(2)).min(Duration::from_secs(120))
}

/// How the census reaches the workers: the server, how many workers it
/// runs, the row's own slow request to keep the reached ones busy with
/// (`probe/spread.rs`), and the limits.
#[derive(Debug, Clone)]
pub struct Reach {
    pub addr: SocketAddr,
    pub workers: u32,
    pub busy: Option<String>,
    pub limits: Limits,
}

impl Reach {
    fn spread(&self) -> Spread {
        Spread::new(
            self.addr,
            self.busy.clone(),
            self.workers as usize,
            self.limits,
        )
    }
}

/// Asks `path` on fresh connections, a tenth of a second apart, until
/// `workers` distinct pids have answered or `bound` passes. Returns the
/// milliseconds it took, or None if the bound passed (the census then
/// counts what it finds, and says too few).
pub async fn await_workers(
    reach: &Reach,
    path: &str,
    workers: u32,
    bound: Duration,
) -> Option<u64> {
    let started = std::time::Instant::now();
    let mut spread = reach.spread();
    while started.elapsed() < bound {
        if let Ok((conn, r)) = spread.ask(path).await {
            if let Ok(s) = serde_json::from_slice::<RuntimeStatus>(&r.body) {
                spread.keep(s.pid, conn);
            }
        }
        if spread.reached() as u32 >= workers {
            return Some(started.elapsed().as_millis() as u64);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// `requests` census requests, each on a fresh connection, every worker
/// reached so far kept busy until all are reached.
pub async fn census(reach: &Reach, path: &str, requests: u32) -> Census {
    let mut c = Census::default();
    let mut spread = reach.spread();
    for i in 0..requests {
        match spread.ask(path).await {
            Ok((conn, r)) if r.status == 200 => {
                match serde_json::from_slice::<RuntimeStatus>(&r.body) {
                    Ok(s) => {
                        spread.keep(s.pid, conn);
                        c.replies.push(s);
                    }
                    Err(e) => c.problems.push(format!(
                        "request {}: {path} answered something else ({e})",
                        i + 1
                    )),
                }
            }
            Ok((_, r)) => {
                c.problems
                    .push(format!("request {}: HTTP {} for {path}", i + 1, r.status))
            }
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
    /// Milliseconds from readiness until `workers_at_least` workers had
    /// answered; None if they had not within [`workers_up_bound`].
    pub workers_up_ms: Option<u64>,
    /// That bound, in milliseconds.
    pub workers_up_bound_ms: u64,
    /// The processes of the server's group once the other workers had had
    /// their chance to answer (empty where the group cannot be listed): a
    /// worker that answers only at the end but was one of them was
    /// unreached at the start, not respawned.
    #[serde(default)]
    pub members_at_start: Vec<i32>,
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

    #[test]
    fn the_wait_for_the_other_workers_follows_the_first_ones_readiness_capped() {
        assert_eq!(
            workers_up_bound(Duration::from_millis(500)),
            Duration::from_secs(3)
        );
        assert_eq!(
            workers_up_bound(Duration::from_secs(15)),
            Duration::from_secs(32)
        );
        // A readiness near the profile's longest bound does not wait minutes more.
        assert_eq!(
            workers_up_bound(Duration::from_secs(180)),
            Duration::from_secs(120)
        );
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
