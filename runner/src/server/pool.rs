//! The servers of one gate: one fresh server per distinct set of settings
//! the row's modes need, started on demand, recorded for the report, and
//! all stopped (whole process groups) when the gate ends.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;

use crate::host::process::StopOutcome;
use crate::server::{self, Server, ServerStart, StartError};
use crate::spec::{Profile, ServerSettings};
use crate::verdict::{Stop, Verdict};

/// A server of the pool answered its readiness check.
#[derive(Debug, Clone, Copy)]
pub struct Ready {
    pub after: std::time::Duration,
    /// Its process group.
    pub pgid: i32,
}

/// A server a gate ran against.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerRun {
    pub profile: String,
    /// The settings it was started with (`threads=2`).
    pub settings: String,
    pub argv: Vec<String>,
    pub pgid: Option<i32>,
    pub log: PathBuf,
    pub ready_ms: Option<f64>,
    /// Whether any process of the server's group outlived the stop.
    pub survivors: bool,
    /// How the stop went: `terminated` (SIGTERM), `killed` (it ignored
    /// SIGTERM for the grace period), `already-exited`; None if never stopped.
    pub stopped: Option<StopOutcome>,
    /// Output past the log cap that was dropped (a flood).
    pub log_dropped_bytes: u64,
}

impl ServerRun {
    fn new(profile: &Profile, settings: &ServerSettings, log: PathBuf) -> Self {
        Self {
            profile: profile.name.clone(),
            settings: settings.describe(),
            argv: Vec::new(),
            pgid: None,
            log,
            ready_ms: None,
            survivors: false,
            stopped: None,
            log_dropped_bytes: 0,
        }
    }
}

/// A ready server: where it listens, how many workers it runs, and the
/// quirks its profile declares.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub addr: SocketAddr,
    pub workers: u32,
    /// The process group of every process of this server.
    pub pgid: i32,
    /// The server tells the app client ports with their bytes swapped.
    pub peer_port_byte_swapped: bool,
    /// How long the server took to answer its first request.
    pub ready_after: std::time::Duration,
}

/// What the pool needs to start servers.
pub struct PoolSpec {
    pub row_id: String,
    pub profile: Profile,
    pub python: PathBuf,
    pub app: String,
    pub app_dir: PathBuf,
    pub logs_dir: PathBuf,
    /// The readiness path instead of the profile's (the user's route).
    pub ready_path: Option<String>,
}

/// The servers of one gate.
pub struct ServerPool {
    spec: PoolSpec,
    running: Vec<(ServerSettings, Server, Target)>,
    runs: Vec<ServerRun>,
    /// The first server that exited on its own, and its log tail.
    exited: Option<String>,
}

impl ServerPool {
    pub fn new(spec: PoolSpec) -> Self {
        Self {
            spec,
            running: Vec::new(),
            runs: Vec::new(),
            exited: None,
        }
    }

    fn log_path(&self, index: usize) -> PathBuf {
        let suffix = if index == 0 {
            String::new()
        } else {
            format!(".{}", index + 1)
        };
        self.spec.logs_dir.join(format!(
            "{}.{}{suffix}.log",
            self.spec.row_id, self.spec.profile.name
        ))
    }

    /// A ready server with `settings`, starting one if none runs yet.
    pub async fn get(
        &mut self,
        settings: &ServerSettings,
        emit: &mut dyn FnMut(Ready),
    ) -> Result<Target, Stop> {
        if let Some((_, _, target)) = self.running.iter().find(|(s, _, _)| s == settings) {
            return Ok(*target);
        }
        let log = self.log_path(self.runs.len());
        self.start(settings, &log, emit)
            .await
            .map_err(|e| start_failure(e, &log))
    }

    async fn start(
        &mut self,
        settings: &ServerSettings,
        log: &Path,
        emit: &mut dyn FnMut(Ready),
    ) -> Result<Target, StartError> {
        self.runs.push(ServerRun::new(
            &self.spec.profile,
            settings,
            log.to_path_buf(),
        ));
        let request = ServerStart {
            profile: &self.spec.profile,
            settings,
            python: &self.spec.python,
            app: &self.spec.app,
            app_dir: &self.spec.app_dir,
            log,
            ready_path: self.spec.ready_path.as_deref(),
        };
        let starting = server::spawn(request)?;
        let run = self.runs.last_mut().expect("pushed above");
        run.argv = starting.argv().to_vec();
        run.pgid = Some(starting.pgid());
        let server = match starting.ready().await {
            Ok(server) => server,
            Err(e) => {
                // The failed server was dropped, which stopped its group.
                run.survivors = run.pgid.is_some_and(crate::host::process::group_alive);
                return Err(e);
            }
        };
        run.ready_ms = Some(server.ready_after.as_secs_f64() * 1000.0);
        emit(Ready {
            after: server.ready_after,
            pgid: server.pgid(),
        });
        let target = Target {
            addr: server.addr,
            workers: settings.workers.unwrap_or(1),
            pgid: server.pgid(),
            peer_port_byte_swapped: self.spec.profile.quirks.peer_port_byte_swapped,
            ready_after: server.ready_after,
        };
        self.running.push((settings.clone(), server, target));
        Ok(target)
    }

    /// Stops every server; returns the log tail worth showing and how the
    /// first server that exited on its own exited.
    pub fn stop_all(&mut self) -> (Option<String>, Option<String>) {
        let mut tail = None;
        for (i, (_, server, _)) in self.running.iter_mut().enumerate() {
            if let Some(status) = server.exited() {
                self.exited.get_or_insert(status);
                tail = Some(server.log_tail());
            }
            if tail.is_none() || i == 0 {
                tail = tail.or_else(|| Some(server.log_tail()));
            }
            let outcome = server.stop();
            if let Some(run) = self.runs.get_mut(i) {
                run.stopped = Some(outcome);
                run.survivors = crate::host::process::group_alive(server.pgid());
                run.log_dropped_bytes = server.log_dropped();
            }
        }
        self.running.clear();
        (tail, self.exited.clone())
    }

    /// Every server started, in order.
    pub fn into_runs(self) -> Vec<ServerRun> {
        self.runs
    }

    pub fn runs(&self) -> &[ServerRun] {
        &self.runs
    }
}

fn start_failure(e: StartError, log: &Path) -> Stop {
    match e {
        StartError::NotApplicable(na) => Stop {
            verdict: Verdict::NotApplicable,
            reason: na.to_string(),
            log_tail: None,
        },
        e => Stop {
            verdict: Verdict::CannotJudge,
            reason: format!("server would not start: {e}"),
            log_tail: Some(crate::host::logtail::tail(log, server::LOG_TAIL_LINES)),
        },
    }
}
