//! `runner sweep`: throughput and latency of one or more routes on a fresh
//! server per setting of threads and workers (see [`super::run`]), printed
//! as a table and written as JSON, CSV, Markdown and SVG on request.
//!
//! It ends well when every setting was measured and every request was good
//! (every `/work` digest right); cannot judge when any setting had errors,
//! wrong digests, or could not be measured (its figures are not the
//! server's); interrupted with the settings done so far still reported.

use std::path::PathBuf;
use std::time::Instant;

use super::export::{self, Reports};
use super::input::{SweepField, SweepInput};
use super::row::SweepRow;
use super::terminal::{self, Progress};
use super::{SweepEvent, SweepResult};
use crate::console::{report_path, Console, JsonOut};
use crate::exit::Finish;
use crate::host::signals;
use crate::input::FieldError;
use crate::server::choose::{self, UserApp};
use crate::session::Session;
use crate::spec::Interface;

/// What `runner sweep` is asked.
pub struct SweepCommand {
    /// A sweep row to run (an id from specs/sweeps/ or a path), whose keys
    /// stand for `input`'s route and knobs.
    pub row: Option<String>,
    /// The input of the flags.
    pub input: SweepInput,
    /// Whether the server was named (a row's counts as named).
    pub server_given: bool,
    /// The app's interface, when given.
    pub interface: Option<Interface>,
    pub out: JsonOut,
    pub csv: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    /// How a field is named to the user (its flag).
    pub name: fn(&FieldError<SweepField>) -> String,
}

impl SweepCommand {
    /// The input: with a row, the row's, with the server given and the
    /// machine wait of `input`.
    pub fn input_for(&self, row: Option<&SweepRow>) -> SweepInput {
        match row {
            Some(row) => SweepInput {
                server: if self.server_given {
                    self.input.server.clone()
                } else {
                    row.input.server.clone()
                },
                machine_wait_ms: self.input.machine_wait_ms,
                ..row.input.clone()
            },
            None => self.input.clone(),
        }
    }

    /// The report files asked for, each checked.
    fn reports(&self) -> Result<Reports, String> {
        for (flag, path) in [
            ("--json-file", &self.out.file),
            ("--csv", &self.csv),
            ("--markdown", &self.markdown),
            ("--svg", &self.svg),
        ] {
            report_path(flag, path.as_deref())?;
        }
        let svg = self
            .svg
            .clone()
            .or_else(|| self.markdown.as_ref().map(|m| m.with_extension("svg")));
        Ok(Reports {
            json: self.out.file.clone(),
            csv: self.csv.clone(),
            markdown: self.markdown.clone(),
            svg,
        })
    }
}

pub async fn run(
    session: &Session,
    asked: &SweepCommand,
    console: &dyn Console,
) -> Result<Finish, String> {
    let project = session.project();
    let row = match &asked.row {
        Some(wanted) => Some(
            super::row::resolve(
                &project.specs_dir().join("sweeps"),
                wanted,
                &project.app_dir(),
            )
            .map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    let mut input = asked.input_for(row.as_ref());
    let reports = asked.reports()?;
    let fixture_dir = choose::fixture_dir(project, &input.server);
    let mut plan = input
        .plan(&fixture_dir, &project.servers_dir())
        .map_err(|e| (asked.name)(&e))?;
    let started = Instant::now();
    let env = session.python()?;
    // The user's app: on a server that speaks its interface, or refused
    // before anything starts.
    if !plan.fixture {
        let user = UserApp {
            app: &plan.app,
            app_dir: &plan.app_dir,
            given: asked.interface,
            profile: &plan.profile,
            server_given: asked.server_given || row.is_some(),
        };
        if let Some(other) =
            choose::settle_told(project, &env.python, &user, "sweep", console).await?
        {
            input.server = other.file.display().to_string();
            plan = input
                .plan(&fixture_dir, &project.servers_dir())
                .map_err(|e| (asked.name)(&e))?;
        }
    }
    let mut progress = Progress::new(console);
    let mut settings = Vec::new();
    let mut emit = |e: SweepEvent<'_>| progress.event(&e);
    let work = super::run(session, &plan, &mut settings, &mut emit);
    let interrupted = match session.cancellable(work).await {
        Ok(done) => {
            done?;
            None
        }
        Err(signal) => Some(signal),
    };
    // An interrupted sweep never reached its own scaling pass.
    super::scale(&mut settings);
    let result = SweepResult {
        row: row.as_ref().map(|r| r.reference()),
        server: plan.profile.name.clone(),
        app: plan.app.clone(),
        app_dir: plan.app_dir.clone(),
        connections: plan.connections,
        warmup_s: plan.warmup.as_secs_f64(),
        duration_s: plan.duration.as_secs_f64(),
        request_timeout_ms: plan.request_timeout.as_millis() as u64,
        env: plan.app_env.clone(),
        settings,
        elapsed_s: started.elapsed().as_secs_f64(),
        interrupted: interrupted.map(|s| signals::name(s).to_string()),
    };
    if asked.out.json {
        console.print(&export::json::render(&result));
    } else {
        console.print(&terminal::render(&result));
    }
    for p in export::write_all(&result, &reports)? {
        console.note(&format!("wrote {}", p.display()));
    }
    Ok(match interrupted {
        Some(signal) => Finish::interrupted(signal, Vec::new()),
        None if result.clean() => Finish::ok(),
        None => Finish::cannot_judge(),
    })
}
