//! A batch of gates, one after another, each on a fresh server, with a
//! record of where the batch is so that an interrupted one can say so: the
//! one loop behind gate, matrix, signoff and stress.

use std::cell::RefCell;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use crate::gate::event::Event;
use crate::gate::result::GateResult;
use crate::gate::{run_gate, GateContext};
use crate::host::limits::Limits;
use crate::host::pyenv::PythonEnv;
use crate::host::signals;
use crate::session::Session;
use crate::spec::row::Row;
use crate::spec::Profile;

/// One row on one server.
#[derive(Debug, Clone)]
pub struct Job {
    pub row: Row,
    pub profile: Profile,
}

/// Where a batch is: read by the signal path after the work is dropped.
#[derive(Debug, Default)]
struct Progress {
    /// The gate in progress (`E19 on granian`).
    current: Option<String>,
    /// Its server's process group, once started.
    current_pgid: Option<i32>,
    results: Vec<GateResult>,
}

/// Where a run was when a signal stopped it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Interrupted {
    pub signal: String,
    /// The gate in progress (`E19 on granian`), if any.
    pub during: Option<String>,
    /// Its server's process group, stopped before the report was written.
    pub server_pgid: Option<i32>,
}

/// How a batch ended: every gate's result, in order, and the signal that
/// stopped it, if one did.
#[derive(Debug)]
pub struct Batch {
    pub results: Vec<GateResult>,
    /// The signal's number.
    pub signal: Option<i32>,
    pub interrupted: Option<Interrupted>,
}

/// How a batch runs besides its jobs.
pub struct BatchPlan<'a> {
    pub limits: Limits,
    /// A pause between gates, so that a gate waiting for the machine (in
    /// another terminal, a test) has its turn.
    pub gap: Duration,
    /// Sees the interpreter once it is prepared, before the first gate.
    pub on_env: &'a mut dyn FnMut(&PythonEnv),
}

/// Prepares Python (on first use), then runs `jobs` in order until they
/// finish or SIGINT/SIGTERM stops them (every server stopped first). Err
/// with the message when Python could not be prepared.
pub async fn run(
    session: &Session,
    plan: BatchPlan<'_>,
    jobs: &[Job],
    emit: &mut dyn FnMut(Event<'_>),
) -> Result<Batch, String> {
    let progress = RefCell::new(Progress::default());
    let BatchPlan {
        limits,
        gap,
        on_env,
    } = plan;
    let work = async {
        let python = session.python()?;
        on_env(python);
        let ctx = GateContext {
            session,
            python,
            limits,
        };
        for (i, job) in jobs.iter().enumerate() {
            if i > 0 && !gap.is_zero() {
                tokio::time::sleep(gap).await;
            }
            run_job(&ctx, job, (i + 1, jobs.len()), &progress, emit).await;
        }
        Ok::<(), String>(())
    };
    let signal = match session.cancellable(work).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => return Err(e),
        Err(signal) => Some(signal),
    };
    let progress = progress.into_inner();
    Ok(Batch {
        interrupted: signal.map(|signal| Interrupted {
            signal: signals::name(signal).into(),
            during: progress.current,
            server_pgid: progress.current_pgid,
        }),
        signal,
        results: progress.results,
    })
}

/// Runs job `index` of `of`, recording progress and emitting events.
async fn run_job(
    ctx: &GateContext<'_>,
    job: &Job,
    (index, of): (usize, usize),
    progress: &RefCell<Progress>,
    emit: &mut dyn FnMut(Event<'_>),
) {
    {
        let mut p = progress.borrow_mut();
        p.current = Some(format!("{} on {}", job.row.id, job.profile.name));
        p.current_pgid = None;
    }
    let server = if job.row.servers().is_empty() {
        crate::gate::NO_SERVER
    } else {
        job.profile.name.as_str()
    };
    emit(Event::GateStarted {
        row: &job.row.id,
        server,
        index,
        of,
    });
    let result = run_gate(ctx, &job.row, &job.profile, &mut |e| {
        if let Event::ServerReady { pgid, .. } = &e {
            progress.borrow_mut().current_pgid = Some(*pgid);
        }
        emit(e)
    })
    .await;
    emit(Event::GateFinished(&result));
    let mut p = progress.borrow_mut();
    p.results.push(result);
    p.current = None;
    p.current_pgid = None;
}
