//! A run of several gates, one after another, each on a fresh server, with
//! a record of where the run is so that an interrupted run can say so.

use std::cell::RefCell;

use crate::event::Event;
use crate::gate::result::GateResult;
use crate::gate::{run_gate, GateContext};
use crate::spec::row::Row;
use crate::spec::Profile;

/// One row on one server.
#[derive(Debug, Clone)]
pub struct Job {
    pub row: Row,
    pub profile: Profile,
}

/// Where a run is: read by the signal path after the run is dropped.
#[derive(Debug, Default)]
pub struct Progress {
    /// The gate in progress (`E19 on granian`).
    pub current: Option<String>,
    /// Its server's process group, once started.
    pub current_pgid: Option<i32>,
    pub results: Vec<GateResult>,
}

/// Runs `jobs` in order, recording progress and emitting events.
pub async fn run_jobs(
    ctx: &GateContext<'_>,
    jobs: &[Job],
    progress: &RefCell<Progress>,
    emit: &mut dyn FnMut(Event<'_>),
) {
    let of = jobs.len();
    for (i, job) in jobs.iter().enumerate() {
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
            index: i + 1,
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
}
