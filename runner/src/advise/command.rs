//! `runner advise`: the deployment rule for one view (see [`super::run`],
//! docs/deployment-rule.md), its questions told as they are asked.
//!
//! It advises, or cannot judge when a figure could not be had (no scheduler
//! accounting, a reading between its bands, a sweep with errors, a server
//! that would not start): no advice is ever a guess.

use super::input::{AdviseField, AdviseInput};
use super::run::{advise, Question};
use super::{headroom, render};
use crate::console::{Console, JsonOut};
use crate::exit::Finish;
use crate::host::signals;
use crate::input::FieldError;
use crate::server::choose::{self, UserApp};
use crate::session::Session;
use crate::spec::Interface;

/// What `runner advise` is asked.
pub struct AdviseCommand {
    pub input: AdviseInput,
    /// Whether the server was named.
    pub server_given: bool,
    /// The app's interface, when given.
    pub interface: Option<Interface>,
    pub out: JsonOut,
    /// How a field is named to the user (its flag).
    pub name: fn(&FieldError<AdviseField>) -> String,
}

pub async fn run(
    session: &Session,
    asked: &AdviseCommand,
    console: &dyn Console,
) -> Result<Finish, String> {
    let project = session.project();
    asked.out.check()?;
    let mut input = asked.input.clone();
    let plan = |input: &AdviseInput| {
        let fixture_dir = choose::fixture_dir(project, &input.server);
        input
            .plan(&fixture_dir, &project.servers_dir())
            .map_err(|e| (asked.name)(&e))
    };
    let mut opts = plan(&input)?;
    // The user's app: served on a server that speaks its interface, found
    // by importing it, or refused before anything starts.
    if !opts.headroom.fixture {
        let env = session.python()?;
        let user = UserApp {
            app: &opts.headroom.app,
            app_dir: &opts.headroom.app_dir,
            given: asked.interface,
            profile: &opts.headroom.profile,
            server_given: asked.server_given,
        };
        if let Some(other) =
            choose::settle_told(project, &env.python, &user, "advise", console).await?
        {
            input.server = other.file.display().to_string();
            opts = plan(&input)?;
        }
    }
    let mut on = |q: Question| {
        let path = &opts.path;
        console.note(&match q {
            Question::Placement => format!(
                "advise {path}: where does the view run, on the event loop or in the threadpool?"
            ),
            Question::MovedToThread => format!(
                "advise {path}: would it scale moved to a thread? (the GIL question, the view run on a pool thread)"
            ),
            Question::Releases => {
                format!("advise {path}: question 1, does the work release the GIL?")
            }
            Question::Headroom => format!(
                "advise {path}: question 2, is there headroom? (threads {:?})",
                headroom::THREADS
            ),
        })
    };
    let report = match session.cancellable(advise(session, &opts, &mut on)).await {
        Ok(report) => report?,
        Err(signal) => {
            console.note(&format!(
                "interrupted by {}; every server was stopped",
                signals::name(signal)
            ));
            return Ok(Finish::interrupted(signal, Vec::new()));
        }
    };
    asked.out.answer(console, &report, render::render)?;
    if report.advice.is_some() {
        Ok(Finish::ok())
    } else {
        console.note(&format!("cannot judge: {}", report.reason));
        Ok(Finish::cannot_judge())
    }
}
