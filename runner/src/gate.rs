//! One gate: a row on a fresh server. Starts the server and the capacity
//! control, runs the row's probe, stops everything, and judges.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::control::CapacityControl;
use crate::event::Event;
use crate::machine_lock::MachineLock;
use crate::probe::pair_ratio::{self, Limits, PairRatioRun};
use crate::project::Project;
use crate::pyenv::PythonEnv;
use crate::server::{self, StartError, StartRequest};
use crate::spec::row::{Plan, Row};
use crate::spec::Profile;
use crate::verdict::{judge_pair_ratio, settled, Judgement, Verdict};

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

/// The server a gate ran against.
#[derive(Debug, Clone, Serialize)]
pub struct ServerRun {
    pub profile: String,
    pub argv: Vec<String>,
    pub pgid: Option<i32>,
    pub log: PathBuf,
    pub ready_ms: Option<f64>,
    /// Whether any process of the server's group outlived the stop.
    pub survivors: bool,
}

/// Everything a gate found.
#[derive(Debug, Clone, Serialize)]
pub struct GateResult {
    pub row: RowRef,
    pub server: ServerRun,
    #[serde(flatten)]
    pub judgement: Judgement,
    pub run: Option<PairRatioRun>,
    /// The end of the server log, kept for every verdict but a pass.
    pub log_tail: Option<String>,
    pub elapsed_ms: f64,
}

impl GateResult {
    pub fn verdict(&self) -> Verdict {
        self.judgement.verdict
    }
}

/// Runs `row` against a fresh server from `profile`.
pub async fn run_gate(
    ctx: &GateContext<'_>,
    row: &Row,
    profile: &Profile,
    emit: &mut dyn FnMut(Event<'_>),
) -> GateResult {
    let started = Instant::now();
    let log = ctx
        .project
        .logs_dir()
        .join(format!("{}.{}.log", row.id, profile.name));
    let mut server_run = ServerRun {
        profile: profile.name.clone(),
        argv: Vec::new(),
        pgid: None,
        log: log.clone(),
        ready_ms: None,
        survivors: false,
    };
    let row_ref = RowRef {
        id: row.id.clone(),
        title: row.title.clone(),
        claim: row.claim.clone(),
        probe: row.probe.name().into(),
        file: row.file.clone(),
        line: row.line,
    };
    let finish = |judgement: Judgement, run, server: ServerRun, tail| GateResult {
        row: row_ref.clone(),
        server,
        log_tail: if judgement.verdict == Verdict::Pass {
            None
        } else {
            tail
        },
        judgement,
        run,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    };
    let no_verdict = |verdict, reason: String| Judgement {
        verdict,
        reason,
        confidence: "no verdict".into(),
        figures: None,
        warnings: Vec::new(),
    };

    let lock_path = ctx.project.state_dir().join("measure.lock");
    let _machine = match MachineLock::acquire(&lock_path, ctx.limits.machine_wait).await {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            let reason = format!(
                "another gate held {} for {} s; wait for it, or raise --machine-wait-ms",
                lock_path.display(),
                ctx.limits.machine_wait.as_secs()
            );
            return finish(
                no_verdict(Verdict::CannotJudge, reason),
                None,
                server_run,
                None,
            );
        }
        Err(e) => {
            return finish(
                no_verdict(
                    Verdict::CannotJudge,
                    format!("cannot lock {}: {e}", lock_path.display()),
                ),
                None,
                server_run,
                None,
            );
        }
    };

    let Plan::PairRatio(plan) = &row.plan;
    // The control process starts while the server boots: both are waits.
    let control = CapacityControl::start(&ctx.python.python, &ctx.project.app_dir());
    let app_dir = ctx.project.app_dir();
    let request = StartRequest {
        profile,
        settings: &row.server,
        python: &ctx.python.python,
        app: APP,
        app_dir: &app_dir,
        log: &log,
    };
    let mut server = match server::start(request).await {
        Ok(s) => s,
        Err(StartError::NotApplicable(na)) => {
            return finish(
                no_verdict(Verdict::NotApplicable, na.to_string()),
                None,
                server_run,
                None,
            );
        }
        Err(e) => {
            let tail = crate::logtail::tail(&log, server::LOG_TAIL_LINES);
            return finish(
                no_verdict(Verdict::CannotJudge, format!("server would not start: {e}")),
                None,
                server_run,
                Some(tail),
            );
        }
    };
    server_run.argv = server.argv.clone();
    server_run.pgid = Some(server.pgid());
    server_run.ready_ms = Some(server.ready_after.as_secs_f64() * 1000.0);
    emit(Event::ServerReady {
        row: &row.id,
        after: server.ready_after,
        pgid: server.pgid(),
    });

    let mut control = match control {
        Ok(c) => c,
        Err(e) => {
            server.stop();
            return finish(
                no_verdict(Verdict::CannotJudge, e.to_string()),
                None,
                server_run,
                None,
            );
        }
    };
    let run = pair_ratio::run(
        server.addr,
        plan,
        row.trials,
        &mut control,
        ctx.limits,
        &|run| settled(plan, run),
        &mut |p| {
            emit(Event::Trial {
                row: &row.id,
                progress: p,
            })
        },
    )
    .await;
    let exited = server.exited();
    let tail = server.log_tail();
    server.stop();
    server_run.survivors = crate::process::group_alive(server.pgid());
    let mut judgement = judge_pair_ratio(plan, &run, true);
    if let (Some(status), Some(_)) = (exited, &run.broken) {
        judgement.reason = format!(
            "{} (the server exited during the gate: {status})",
            judgement.reason
        );
    }
    finish(judgement, Some(run), server_run, Some(tail))
}

/// How long the whole set of gates took, for summaries.
pub fn total(results: &[GateResult]) -> Duration {
    Duration::from_secs_f64(results.iter().map(|r| r.elapsed_ms).sum::<f64>() / 1000.0)
}
