//! One gate: a row on fresh servers. Starts a server for each distinct set
//! of server settings the row's modes need (and the capacity control where
//! the probe uses one), runs the row's probe, stops everything, and judges.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::control::CapacityControl;
use crate::event::Event;
use crate::machine_lock::MachineLock;
use crate::probe::census::{self, CensusRun};
use crate::probe::keepalive::{self, KeepaliveRun};
use crate::probe::pair_ratio::{self, Limits, PairRatioRun, Target};
use crate::process::StopOutcome;
use crate::project::Project;
use crate::pyenv::PythonEnv;
use crate::server::{self, Server, StartError, StartRequest};
use crate::spec::row::{
    CensusPlan, KeepalivePlan, PairRatioPlan, Plan, Row, ServerSettings, Trials,
};
use crate::spec::Profile;
use crate::verdict::{self, judge_census, judge_keepalive, judge_pair_ratio, Judgement, Verdict};

/// The app every gate serves.
pub const APP: &str = "app:app";

/// What a gate needs besides its row and server.
pub struct GateContext<'a> {
    pub project: &'a Project,
    pub python: &'a PythonEnv,
    pub limits: Limits,
}

/// Where the row is, for reports and annotations.
#[derive(Debug, Clone, Serialize)]
pub struct RowRef {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub probe: String,
    pub file: PathBuf,
    pub line: usize,
}

/// A server a gate ran against.
#[derive(Debug, Clone, Serialize)]
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

/// What the probe measured, by kind.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ProbeRun {
    PairRatio(PairRatioRun),
    Keepalive(KeepaliveRun),
    Census(Box<CensusRun>),
}

/// Everything a gate found.
#[derive(Debug, Clone, Serialize)]
pub struct GateResult {
    pub row: RowRef,
    /// The first server started (the mode under test's).
    pub server: ServerRun,
    /// Further servers, where the row's modes need other settings.
    pub other_servers: Vec<ServerRun>,
    #[serde(flatten)]
    pub judgement: Judgement,
    pub run: Option<ProbeRun>,
    /// The end of the (first failing, else first) server log, kept for
    /// every verdict but a pass.
    pub log_tail: Option<String>,
    pub elapsed_ms: f64,
}

impl GateResult {
    pub fn verdict(&self) -> Verdict {
        self.judgement.verdict
    }

    /// Every server the gate started.
    pub fn servers(&self) -> impl Iterator<Item = &ServerRun> {
        std::iter::once(&self.server).chain(&self.other_servers)
    }
}

/// The servers of one gate, one per distinct settings, started on demand.
struct Servers<'a> {
    ctx: &'a GateContext<'a>,
    row: &'a Row,
    profile: &'a Profile,
    running: Vec<(ServerSettings, Server)>,
    runs: Vec<ServerRun>,
}

impl<'a> Servers<'a> {
    fn log_path(&self, index: usize) -> PathBuf {
        let suffix = if index == 0 {
            String::new()
        } else {
            format!(".{}", index + 1)
        };
        self.ctx
            .project
            .logs_dir()
            .join(format!("{}.{}{suffix}.log", self.row.id, self.profile.name))
    }

    /// The address of a ready server with `settings`, starting one if needed.
    async fn get(
        &mut self,
        settings: &ServerSettings,
        emit: &mut dyn FnMut(Event<'_>),
    ) -> Result<Target, Early> {
        if let Some((s, server)) = self.running.iter().find(|(s, _)| s == settings) {
            return Ok(Target {
                addr: server.addr,
                workers: s.workers.unwrap_or(1),
            });
        }
        let log = self.log_path(self.runs.len());
        self.start(settings, &log, emit)
            .await
            .map_err(|e| start_failure(e, &log))
    }

    /// Starts a fresh server with `settings`, logging to `log`.
    async fn start(
        &mut self,
        settings: &ServerSettings,
        log: &std::path::Path,
        emit: &mut dyn FnMut(Event<'_>),
    ) -> Result<Target, StartError> {
        let log = log.to_path_buf();
        let app_dir = self.ctx.project.app_dir();
        self.runs
            .push(ServerRun::new(self.profile, settings, log.clone()));
        let request = StartRequest {
            profile: self.profile,
            settings,
            python: &self.ctx.python.python,
            app: APP,
            app_dir: &app_dir,
            log: &log,
        };
        let starting = server::spawn(request)?;
        let run = self.runs.last_mut().expect("pushed above");
        run.argv = starting.argv().to_vec();
        run.pgid = Some(starting.pgid());
        let server = match starting.ready().await {
            Ok(server) => server,
            Err(e) => {
                // The failed server was dropped, which stopped its group.
                run.survivors = run.pgid.is_some_and(crate::process::group_alive);
                return Err(e);
            }
        };
        run.ready_ms = Some(server.ready_after.as_secs_f64() * 1000.0);
        emit(Event::ServerReady {
            row: &self.row.id,
            after: server.ready_after,
            pgid: server.pgid(),
        });
        let target = Target {
            addr: server.addr,
            workers: settings.workers.unwrap_or(1),
        };
        self.running.push((settings.clone(), server));
        Ok(target)
    }

    /// Stops every server; returns the log tail worth showing and whether
    /// any server had exited on its own.
    fn stop_all(&mut self) -> (Option<String>, Option<String>) {
        let mut tail = None;
        let mut exited = None;
        for (i, (_, server)) in self.running.iter_mut().enumerate() {
            if let Some(status) = server.exited() {
                exited.get_or_insert(status);
                tail = Some(server.log_tail());
            }
            if tail.is_none() || i == 0 {
                tail = tail.or_else(|| Some(server.log_tail()));
            }
            let outcome = server.stop();
            if let Some(run) = self.runs.get_mut(i) {
                run.stopped = Some(outcome);
                run.survivors = crate::process::group_alive(server.pgid());
                run.log_dropped_bytes = server.log_dropped();
            }
        }
        self.running.clear();
        (tail, exited)
    }
}

/// A gate that ended before its probe ran: the judgement, and the log tail
/// worth showing.
type Early = (Judgement, Option<String>);

fn start_failure(e: StartError, log: &std::path::Path) -> Early {
    match e {
        StartError::NotApplicable(na) => (
            Judgement::bare(Verdict::NotApplicable, na.to_string()),
            None,
        ),
        e => {
            let tail = Some(crate::logtail::tail(log, server::LOG_TAIL_LINES));
            (
                Judgement::bare(Verdict::CannotJudge, format!("server would not start: {e}")),
                tail,
            )
        }
    }
}

/// Runs `row` against fresh servers from `profile`.
pub async fn run_gate(
    ctx: &GateContext<'_>,
    row: &Row,
    profile: &Profile,
    emit: &mut dyn FnMut(Event<'_>),
) -> GateResult {
    let started = Instant::now();
    let row_ref = RowRef {
        id: row.id.clone(),
        title: row.title.clone(),
        claim: row.claim.clone(),
        probe: row.probe.name().into(),
        file: row.file.clone(),
        line: row.line,
    };
    let mut servers = Servers {
        ctx,
        row,
        profile,
        running: Vec::new(),
        runs: Vec::new(),
    };
    // The lock is held until every server of this gate is stopped: a server
    // shutting down still burns CPU, which the next gate would measure.
    let lock = MachineLock::acquire(
        &ctx.project.state_dir().join("measure.lock"),
        ctx.limits.machine_wait,
    )
    .await;
    let outcome = match &lock {
        Ok(Some(_)) => run_probe(ctx, row, &mut servers, emit).await,
        Ok(None) => Err((
            Judgement::bare(
                Verdict::CannotJudge,
                format!(
                    "another gate held .gates/measure.lock for {} s; wait for it, or raise --machine-wait-ms",
                    ctx.limits.machine_wait.as_secs()
                ),
            ),
            None,
        )),
        Err(e) => Err((Judgement::bare(Verdict::CannotJudge, format!("cannot lock .gates/measure.lock: {e}")), None)),
    };
    let (tail, exited) = servers.stop_all();
    drop(lock);
    let (mut judgement, run, tail) = match outcome {
        Ok((j, run)) => (j, Some(run), tail),
        Err((j, early_tail)) => (j, None, early_tail.or(tail)),
    };
    if let (Some(status), Verdict::CannotJudge | Verdict::Fail) = (exited, judgement.verdict) {
        judgement.reason = format!(
            "{} (a server exited during the gate: {status})",
            judgement.reason
        );
    }
    if let Some(flood) = servers.runs.iter().find(|r| r.log_dropped_bytes > 0) {
        // A server this busy writing output is measuring its logging.
        judgement.verdict = Verdict::CannotJudge;
        judgement.reason = format!(
            "the server wrote {} bytes of output past its {} MiB log cap during the gate ({}); a server this busy \
             writing output is measuring its logging, not the claim. Quiet its logging (`argv` or `env` in the profile); \
             the figures would have read: {}",
            flood.log_dropped_bytes,
            crate::logdrain::LOG_CAP_BYTES / (1024 * 1024),
            flood.log.display(),
            judgement.reason
        );
    }
    let mut runs = servers.runs.into_iter();
    let first = runs.next().unwrap_or_else(|| {
        ServerRun::new(
            profile,
            &row.server,
            ctx.project
                .logs_dir()
                .join(format!("{}.{}.log", row.id, profile.name)),
        )
    });
    GateResult {
        row: row_ref,
        server: first,
        other_servers: runs.collect(),
        log_tail: if judgement.verdict == Verdict::Pass {
            None
        } else {
            tail
        },
        judgement,
        run,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    }
}

async fn run_probe(
    ctx: &GateContext<'_>,
    row: &Row,
    servers: &mut Servers<'_>,
    emit: &mut dyn FnMut(Event<'_>),
) -> Result<(Judgement, ProbeRun), Early> {
    match &row.plan {
        Plan::PairRatio(plan) => {
            let (j, run) = pair_ratio_gate(ctx, row, plan, row.trials, 2, servers, emit).await?;
            Ok((j, ProbeRun::PairRatio(run)))
        }
        Plan::KeepaliveIsolation(plan) => keepalive_gate(ctx, row, plan, servers, emit).await,
        Plan::WorkerCensus(plan) => census_gate(ctx, row, plan, servers, emit).await,
    }
}

/// Starts the servers of both modes, under test first.
async fn mode_targets(
    servers: &mut Servers<'_>,
    settings: [&ServerSettings; 2],
    emit: &mut dyn FnMut(Event<'_>),
) -> Result<[Target; 2], Early> {
    let mut out = Vec::new();
    for s in settings {
        out.push(servers.get(s, emit).await?);
    }
    Ok([out[0], out[1]])
}

async fn pair_ratio_gate(
    ctx: &GateContext<'_>,
    row: &Row,
    plan: &PairRatioPlan,
    trials: Trials,
    connections_cap: u32,
    servers: &mut Servers<'_>,
    emit: &mut dyn FnMut(Event<'_>),
) -> Result<(Judgement, PairRatioRun), Early> {
    // The control process starts while the servers boot: both are waits.
    let control = CapacityControl::start(&ctx.python.python, &ctx.project.app_dir());
    let targets = mode_targets(
        servers,
        [&plan.under_test.server, &plan.control.server],
        emit,
    )
    .await?;
    let mut control =
        control.map_err(|e| (Judgement::bare(Verdict::CannotJudge, e.to_string()), None))?;
    let run = pair_ratio::run(
        targets,
        plan,
        trials,
        connections_cap,
        &mut control,
        ctx.limits,
        &|run| verdict::settled(plan, trials, run),
        &mut |p| {
            emit(Event::Trial {
                row: &row.id,
                progress: p,
            })
        },
    )
    .await;
    Ok((judge_pair_ratio(plan, trials, &run, true), run))
}

async fn keepalive_gate(
    ctx: &GateContext<'_>,
    row: &Row,
    plan: &KeepalivePlan,
    servers: &mut Servers<'_>,
    emit: &mut dyn FnMut(Event<'_>),
) -> Result<(Judgement, ProbeRun), Early> {
    let targets = mode_targets(
        servers,
        [&plan.under_test.server, &plan.control.server],
        emit,
    )
    .await?;
    let addrs: [SocketAddr; 2] = [targets[0].addr, targets[1].addr];
    let run = keepalive::run(
        addrs,
        plan,
        row.trials,
        ctx.limits,
        &|run| verdict::keepalive::settled(plan, run),
        &mut |p| {
            emit(Event::Trial {
                row: &row.id,
                progress: p,
            })
        },
    )
    .await;
    Ok((judge_keepalive(plan, &run, true), ProbeRun::Keepalive(run)))
}

async fn census_gate(
    ctx: &GateContext<'_>,
    row: &Row,
    plan: &CensusPlan,
    servers: &mut Servers<'_>,
    emit: &mut dyn FnMut(Event<'_>),
) -> Result<(Judgement, ProbeRun), Early> {
    let target = servers.get(&row.server, emit).await?;
    let fork_control = census::fork_control(&ctx.python.python, &ctx.project.app_dir()).await;
    let before = census::census(target.addr, &plan.runtime_path, plan.requests, ctx.limits).await;
    let pair_ratio = match &plan.pair_ratio {
        Some(p) => Some(
            pair_ratio_gate(
                ctx,
                row,
                p,
                row.trials,
                plan.connections_at_most,
                servers,
                emit,
            )
            .await?
            .1,
        ),
        None => None,
    };
    let after = census::census(target.addr, &plan.runtime_path, plan.requests, ctx.limits).await;
    let run = CensusRun {
        fork_control,
        before,
        after,
        pair_ratio,
    };
    Ok((
        judge_census(plan, row.trials, &run),
        ProbeRun::Census(Box::new(run)),
    ))
}
