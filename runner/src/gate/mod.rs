//! One gate: a row on fresh servers. Takes the machine lock, hands the
//! row's probe a pool of servers (started on demand, one per distinct set of
//! settings), concludes the judgement, stops everything, and records what
//! happened.

pub mod batch;
pub mod event;
pub mod input;
pub mod result;

use std::time::Instant;

use crate::gate::event::Event;
use crate::gate::result::{GateResult, RowRef};
use crate::host::limits::Limits;
use crate::host::project::Project;
use crate::host::pyenv::PythonEnv;
use crate::probe::trial::ProbeEvent;
use crate::probe::{Judgement, ProbeCtx, ProbeRun};
use crate::server::pool::{PoolSpec, ServerPool};
use crate::session::Session;
use crate::spec::row::Row;
use crate::spec::Profile;
use crate::verdict::{Stop, Verdict};

/// The app every gate serves.
pub const APP: &str = "app:app";

/// The profile name a gate without a server reports.
pub const NO_SERVER: &str = "python";

/// What a gate needs besides its row and server.
pub struct GateContext<'a> {
    pub session: &'a Session,
    pub python: &'a PythonEnv,
    pub limits: Limits,
}

/// The folder of the app `row` serves: its `app:` fixture, or bareapp.
pub fn app_dir_of(project: &Project, row: &Row) -> std::path::PathBuf {
    row.plan
        .app()
        .map_or_else(|| project.app_dir(), |a| project.fixture_dir(&a))
}

/// Why `profile` cannot serve `row`'s app (its interface is the other
/// one: not applicable), or why that could not be learned (cannot judge).
async fn interface_refusal(
    ctx: &GateContext<'_>,
    row: &Row,
    profile: &Profile,
    app_dir: &std::path::Path,
) -> Option<Stop> {
    let found = match crate::server::interface::of_fixture(
        &ctx.python.python,
        APP,
        app_dir,
        &ctx.session.project().state_dir(),
    )
    .await
    {
        Ok(found) => found,
        // An app whose pinned packages are missing does not import: the
        // probe says not applicable, naming them.
        Err(_) if !row.plan.requires().is_empty() => return None,
        Err(e) => {
            return Some(Stop::cannot_judge(format!(
                "cannot tell the app's interface: {e}"
            )))
        }
    };
    let servers: Vec<Profile> = crate::spec::row_files(&ctx.session.project().servers_dir())
        .unwrap_or_default()
        .iter()
        .filter_map(|f| crate::spec::load_profile(f).ok())
        .collect();
    let app = format!(
        "{}'s app ({})",
        row.id,
        app_dir.file_name().unwrap_or_default().to_string_lossy()
    );
    crate::server::interface::mismatch(profile, found.interface, &app, &servers).map(|reason| {
        Stop {
            verdict: Verdict::NotApplicable,
            reason,
            log_tail: None,
        }
    })
}

/// Runs `row` against fresh servers from `profile` (unused by a probe that
/// needs no server).
pub async fn run_gate(
    ctx: &GateContext<'_>,
    row: &Row,
    profile: &Profile,
    emit: &mut dyn FnMut(Event<'_>),
) -> GateResult {
    let started = Instant::now();
    let needs_server = !row.servers().is_empty();
    let app_dir = app_dir_of(ctx.session.project(), row);
    // A server that does not speak the app's interface cannot serve it.
    let refused = if needs_server {
        interface_refusal(ctx, row, profile, &app_dir).await
    } else {
        None
    };
    let mut pool = needs_server.then(|| {
        ServerPool::new(PoolSpec {
            row_id: row.id.clone(),
            profile: profile.clone(),
            python: ctx.python.python.clone(),
            app: APP.into(),
            app_dir: app_dir.clone(),
            logs_dir: ctx.session.project().logs_dir(),
            ready_path: None,
        })
    });
    // The lock is held until every server of this gate is stopped: a server
    // shutting down still burns CPU, which the next gate would measure.
    let lock = ctx.session.lock(ctx.limits.machine_wait).await;
    let outcome = match (&lock, refused) {
        (Ok(_), Some(refused)) => Err(refused),
        (Ok(_), None) => {
            let mut on_probe = |e: ProbeEvent| match e {
                ProbeEvent::ServerReady { after, pgid } => emit(Event::ServerReady {
                    row: &row.id,
                    after,
                    pgid,
                }),
                ProbeEvent::Trial(progress) => emit(Event::Trial {
                    row: &row.id,
                    progress,
                }),
            };
            let mut probe_ctx = ProbeCtx {
                project: ctx.session.project(),
                python: ctx.python,
                limits: ctx.limits,
                trials: row.trials,
                row_server: &row.server,
                app_dir: app_dir.clone(),
                servers: pool.as_mut(),
                emit: &mut on_probe,
            };
            row.plan.run(&mut probe_ctx).await
        }
        (Err(e), _) => Err(Stop::cannot_judge(e.clone())),
    };
    let (tail, exited) = pool.as_mut().map_or((None, None), ServerPool::stop_all);
    drop(lock);
    let (mut judgement, run, tail): (Judgement, Option<ProbeRun>, _) = match outcome {
        Ok((j, run)) => (j, Some(run), tail),
        Err(stop) => (
            Judgement::bare(stop.verdict, stop.reason),
            None,
            stop.log_tail.or(tail),
        ),
    };
    if let (Some(status), Verdict::CannotJudge | Verdict::Fail) = (exited, judgement.verdict) {
        judgement.reason = format!(
            "{} (a server exited during the gate: {status})",
            judgement.reason
        );
    }
    let servers = pool.map_or_else(Vec::new, ServerPool::into_runs);
    if let Some(flood) = servers.iter().find(|r| r.log_dropped_bytes > 0) {
        // A server this busy writing output is measuring its logging.
        judgement.verdict = Verdict::CannotJudge;
        judgement.reason = format!(
            "the server wrote {} bytes of output past its {} MiB log cap during the gate ({}); a server this busy \
             writing output is measuring its logging, not the claim. Quiet its logging (`argv` or `env` in the profile); \
             the figures would have read: {}",
            flood.log_dropped_bytes,
            crate::server::logdrain::LOG_CAP_BYTES / (1024 * 1024),
            flood.log.display(),
            judgement.reason
        );
    }
    GateResult {
        row: RowRef {
            id: row.id.clone(),
            title: row.title.clone(),
            claim: row.claim.clone(),
            probe: row.probe.name().into(),
            file: row.file.clone(),
            line: row.line,
        },
        servers,
        profile: if needs_server {
            profile.name.clone()
        } else {
            NO_SERVER.into()
        },
        log_tail: if judgement.verdict == Verdict::Pass {
            None
        } else {
            tail
        },
        by_design: if needs_server {
            result::by_design(profile, &row.id, judgement.verdict, &judgement.reason)
        } else {
            None
        },
        judgement,
        run,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    }
}
