//! Advise's two questions, measured in turn on the session: does the work
//! release the GIL (advise's `--call`: the GIL probe; else a pair on the
//! view), and is there headroom (a short sweep over [`headroom::THREADS`]).

use std::time::Instant;

use super::request::AdvisePlan;
use super::{call, headroom, pair, AdviceReport};
use crate::session::Session;

/// Which question advise is on, for a reporter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
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
    on(Question::Releases);
    let q1 = match &plan.call {
        Some(call) => call::measure(session, &env.python, call, plan.limits.machine_wait).await,
        None => {
            pair::measure(&pair::PairSpec {
                profile,
                python: &env.python,
                app: &plan.headroom.app,
                app_dir: &plan.headroom.app_dir,
                fixture: plan.headroom.fixture,
                fixture_dir: &project.app_dir(),
                logs_dir: &project.logs_dir(),
                session,
                limits: plan.limits,
                path: &plan.path,
                ready_path: plan.headroom.ready.for_route(&plan.path),
            })
            .await
        }
    };
    on(Question::Headroom);
    let settings = headroom::measure(session, &plan.headroom).await?;
    let q2 = headroom::read(&settings, headroom::cores());
    Ok(AdviceReport::new(
        profile.name.clone(),
        plan.headroom.app.clone(),
        plan.path.clone(),
        q1,
        q2,
        started.elapsed().as_secs_f64(),
    ))
}
