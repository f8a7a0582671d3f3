//! Advise's two questions, measured in turn on the session: does the work
//! release the GIL (advise's `--call`: the GIL probe; else a pair on the
//! view), and is there headroom (a short sweep over [`headroom::THREADS`]).

use std::time::Instant;

use super::input::AdvisePlan;
use super::placement::{self, Place};
use super::{call, headroom, pair, AdviceReport, GilAnswer};
use crate::server::interface::ASGI_FIXTURE;
use crate::session::Session;
use crate::spec::Interface;

/// Which question advise is on, for a reporter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// ASGI: where does the view run, on the event loop or in the pool?
    Placement,
    /// ASGI, a view that blocks the loop: does the work release the GIL
    /// when it runs on a pool thread?
    MovedToThread,
    /// Does the work release the GIL?
    Releases,
    /// Is there headroom?
    Headroom,
}

/// Answers both questions for `plan` and reads the advice; `on` is told
/// each question as it starts. Err when the session's Python could not be
/// prepared.
pub async fn advise(
    session: &Session,
    plan: &AdvisePlan,
    on: &mut dyn FnMut(Question),
) -> Result<AdviceReport, String> {
    let started = Instant::now();
    let project = session.project();
    let env = session.python()?;
    let profile = &plan.headroom.profile;
    // The holding control is the fixture of the profile's interface.
    let control_dir = match profile.interface {
        Interface::Wsgi => project.app_dir(),
        Interface::Asgi => project.fixture_dir(ASGI_FIXTURE),
    };
    let logs_dir = project.logs_dir();
    let pair_spec = |offload: bool| pair::PairSpec {
        profile,
        python: &env.python,
        app: &plan.headroom.app,
        app_dir: &plan.headroom.app_dir,
        fixture: plan.headroom.fixture,
        fixture_dir: &control_dir,
        logs_dir: &logs_dir,
        session,
        limits: plan.limits,
        path: &plan.path,
        ready_path: plan.headroom.ready.for_route(&plan.path),
        offload,
    };
    // An ASGI view: where it runs first. On the loop, blocking it, the GIL
    // question is asked of the view moved to a thread; awaiting, neither
    // question changes the answer; in the pool, as for WSGI.
    if profile.interface == Interface::Asgi && plan.call.is_none() {
        on(Question::Placement);
        let placed = placement::measure(&pair_spec(false)).await;
        if placed.place != Some(Place::Pool) {
            let why = match placed.place {
                Some(Place::LoopAwaits) => {
                    "the view awaits on the event loop, where no thread count changes anything"
                }
                Some(_) => "the view blocks the event loop; no pool or thread count helps until it is moved off it",
                None => "where the view runs could not be told",
            };
            let q1 = if placed.place == Some(Place::LoopBlocks) {
                on(Question::MovedToThread);
                pair::measure(&pair_spec(true)).await
            } else {
                not_asked(why)
            };
            return Ok(AdviceReport::asgi(
                profile.name.clone(),
                plan.headroom.app.clone(),
                plan.path.clone(),
                placed,
                q1,
                headroom::Headroom {
                    figures: None,
                    reason: format!("not asked: {why}"),
                },
                started.elapsed().as_secs_f64(),
            ));
        }
        return finish(session, plan, on, Some(placed), pair_spec(false), started).await;
    }
    finish(session, plan, on, None, pair_spec(false), started).await
}

/// Question 1 not asked, and why.
fn not_asked(why: &str) -> GilAnswer {
    GilAnswer {
        work: None,
        source: "not asked".into(),
        headline: String::new(),
        reason: format!("not asked: {why}"),
        pair: None,
        call: None,
    }
}

/// The two questions of a WSGI view (or an ASGI `def` view, `placed`).
async fn finish(
    session: &Session,
    plan: &AdvisePlan,
    on: &mut dyn FnMut(Question),
    placed: Option<placement::Placement>,
    pair_spec: pair::PairSpec<'_>,
    started: Instant,
) -> Result<AdviceReport, String> {
    let env = session.python()?;
    let profile = &plan.headroom.profile;
    on(Question::Releases);
    let q1 = match &plan.call {
        Some(call) => call::measure(session, &env.python, call, plan.limits.machine_wait).await,
        None => pair::measure(&pair_spec).await,
    };
    on(Question::Headroom);
    let again = |q2: &headroom::Headroom, sweeps: u32| super::sweep_again(&q1, q2, sweeps);
    let q2 = headroom::answer(session, &plan.headroom, headroom::cores(), &again).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let (server, app, path) = (
        profile.name.clone(),
        plan.headroom.app.clone(),
        plan.path.clone(),
    );
    Ok(match placed {
        Some(placed) => AdviceReport::asgi(server, app, path, placed, q1, q2, elapsed),
        None => AdviceReport::new(server, app, path, q1, q2, elapsed),
    })
}
