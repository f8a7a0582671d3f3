//! `runner stress`'s engine: the same gate N times, each on a fresh server,
//! optionally under a background CPU load started for each gate (once its
//! server is up, inside its machine turn) and killed after it; then the
//! verdict distribution and the spread of every figure ([`summary`]).
//!
//! This is how flakiness is measured rather than guessed: a verdict that
//! changes from run to run on one machine is a gate that cannot be trusted.
//! With an expected verdict, a run that reaches the opposite one is counted
//! wrong (cannot judge is never wrong: it claims nothing).

pub mod command;
pub mod summary;

use std::cell::RefCell;
use std::time::Duration;

use crate::gate::batch::{self, BatchPlan, Job};
use crate::gate::event::Event;
use crate::gate::result::GateResult;
use crate::host::limits::Limits;
use crate::kernel::noise::{Load, Noise};
use crate::session::Session;
use crate::spec::row::Row;
use crate::spec::Profile;
use crate::verdict::Verdict;

pub use summary::Summary;

/// The pause between runs: ten times the machine lock's retry interval.
const TURN_GAP: Duration = Duration::from_millis(200);

/// A load never outlives this, even orphaned; one gate takes well under it.
const LOAD_LIFETIME: Duration = Duration::from_secs(900);

/// A checked stress run.
pub struct StressPlan {
    pub row: Row,
    pub profile: Profile,
    pub noise: Noise,
    /// The verdict the row should get here (pass or fail).
    pub expect: Option<Verdict>,
    pub runs: u32,
    pub limits: Limits,
}

/// How a stress run ended: its summary, and the signal that stopped it.
pub struct Stressed {
    pub summary: Summary,
    pub signal: Option<i32>,
}

/// Runs the plan; `on_run` sees each gate's result as it finishes. Err when
/// Python could not be prepared or the load could not start.
pub async fn run(
    session: &Session,
    plan: &StressPlan,
    on_run: &mut dyn FnMut(&GateResult),
) -> Result<Stressed, String> {
    let jobs: Vec<Job> = (0..plan.runs)
        .map(|_| Job {
            row: plan.row.clone(),
            profile: plan.profile.clone(),
        })
        .collect();
    let load: RefCell<Option<Load>> = RefCell::new(None);
    let mut load_error: Option<String> = None;
    let mut load_pgids: Vec<i32> = Vec::new();
    let mut emit = |e: Event<'_>| match &e {
        // The load runs while the gate holds the machine lock and its
        // server is up: it disturbs this gate's measurement only, never
        // another gate waiting its turn.
        // A row whose modes need two servers reports two; one load.
        Event::ServerReady { .. } if load.borrow().is_none() => {
            let Some(env) = session.prepared() else {
                return;
            };
            match Load::start(plan.noise, &env.python, LOAD_LIFETIME) {
                Ok(l) => {
                    load_pgids.extend(l.as_ref().map(Load::pgid));
                    *load.borrow_mut() = l;
                }
                Err(err) => {
                    load_error = Some(format!(
                        "cannot start the --noise {} load with {}: {err}",
                        plan.noise.name(),
                        env.python.display()
                    ))
                }
            }
        }
        Event::GateFinished(r) => {
            if let Some(mut l) = load.borrow_mut().take() {
                l.stop();
            }
            on_run(r);
        }
        _ => {}
    };
    let batch_plan = BatchPlan {
        limits: plan.limits,
        // Gates take turns on the machine lock by polling it; a pause
        // between runs lets a gate that is waiting (another terminal, a
        // test) have its turn instead of waiting out the whole stress run.
        gap: TURN_GAP,
        on_env: &mut |_| {},
    };
    let batch = batch::run(session, batch_plan, &jobs, &mut emit).await;
    // Dropping the load stops it on every path; do it before reporting.
    load.borrow_mut().take();
    let batch = batch?;
    if let Some(e) = load_error {
        return Err(e);
    }
    let summary = summary::summarise(plan, &batch.results, batch.signal, load_pgids);
    Ok(Stressed {
        summary,
        signal: batch.signal,
    })
}
