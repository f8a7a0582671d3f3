//! `runner gate ROWS...`: each row on a fresh server, a table and a verdict
//! line per gate (or one JSON document), a summary, and the report files
//! asked for.

use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use crate::console::{report_path, Console, JsonOut};
use crate::exit::Finish;
use crate::gate::batch::{self, BatchPlan, Job};
use crate::gate::event::Event;
use crate::gate::input::RunPlan;
use crate::report::export::{github, ExportInput, ExportManager, Format};
use crate::report::json;
use crate::report::terminal::Terminal;
use crate::server::status;
use crate::session::Session;
use crate::spec::{Interface, Profile};
use crate::verdict::Verdict;

/// What `runner gate` is asked.
pub struct GateCommand {
    /// Row ids, paths, or `all`.
    pub rows: Vec<String>,
    /// The profile; by the row's app when none.
    pub server: Option<String>,
    pub out: JsonOut,
    pub junit: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub run: RunPlan,
}

pub async fn run(
    session: &Session,
    asked: &GateCommand,
    console: &dyn Console,
) -> Result<Finish, String> {
    let project = session.project();
    let (started, clock) = (SystemTime::now(), Instant::now());
    for (flag, path) in [
        ("--json-file", &asked.out.file),
        ("--junit", &asked.junit),
        ("--markdown", &asked.markdown),
    ] {
        report_path(flag, path.as_deref())?;
    }
    let jobs = jobs(session, asked).await?;
    let profiles: Vec<Profile> = {
        let mut seen: Vec<Profile> = Vec::new();
        for j in &jobs {
            if !seen.iter().any(|p| p.file == j.profile.file) {
                seen.push(j.profile.clone());
            }
        }
        seen
    };

    let pending = RefCell::new(None);
    let python_status = RefCell::new(None);
    let terminal = RefCell::new(Terminal::new(console.answer(), console));
    let mut emit = |e: Event<'_>| {
        // With --json, stdout carries only the JSON document.
        if !(asked.out.json && matches!(e, Event::GateFinished(_))) {
            terminal.borrow_mut().event(&e);
        }
    };
    let mut on_env = |env: &crate::host::pyenv::PythonEnv| {
        // The header `matrix --from` shows: the server's version, and
        // the interpreter's for rows that run no server. Read while the
        // gates run, and joined before the report.
        *pending.borrow_mut() = Some(status::statuses_in_background(
            profiles.clone(),
            env.python.clone(),
        ));
        if jobs.iter().any(|j| j.row.servers().is_empty()) {
            *python_status.borrow_mut() = Some(status::python_status(
                crate::gate::NO_SERVER,
                &env.python,
                &project.specs_dir(),
            ));
        }
    };
    let plan = BatchPlan::new(asked.run.limits, &mut on_env);
    let batch = batch::run(session, plan, &jobs, &mut emit).await?;
    let mut statuses: Vec<_> = pending
        .into_inner()
        .and_then(|h| h.join().ok())
        .unwrap_or_default();
    statuses.extend(python_status.into_inner());

    let note = batch.interrupted.clone();
    if let Some(note) = &note {
        console.note(&format!(
            "interrupted by {} during {}; every server started was stopped",
            note.signal,
            note.during.as_deref().unwrap_or("set-up")
        ));
    }
    if asked.out.json {
        console.print(&format!(
            "{}\n",
            json::render(&batch.results, note.clone(), &statuses)
        ));
    } else {
        terminal.borrow_mut().summary(&batch.results);
    }
    let verdicts: Vec<_> = batch.results.iter().map(|r| r.counts_as()).collect();
    if github::in_actions() {
        // With --json, stdout carries only the JSON document; GitHub reads
        // workflow commands from stderr too.
        let mut screen = console.screen(asked.out.json);
        for line in github::annotations(&project.root, &batch.results) {
            let _ = writeln!(screen, "{line}");
        }
    }
    let mut exports = ExportManager::new();
    exports.add(Format::Json, asked.out.file.as_deref());
    exports.add(Format::Junit, asked.junit.as_deref());
    exports.add(Format::Markdown, asked.markdown.as_deref());
    exports.with_step_summary(github::step_summary());
    let export = ExportInput {
        results: &batch.results,
        interrupted: note.as_ref(),
        servers: &statuses,
        root: &project.root,
        started,
        wall: clock.elapsed(),
    };
    if let Err(e) = exports.write_all(&export) {
        // A failed gate still says so (exit 1); otherwise the missing
        // report makes the run unusable (exit 2), never a pass.
        if !verdicts.contains(&Verdict::Fail) {
            return Err(e.to_string());
        }
        console.note(&format!("error: {e}"));
        return Ok(Finish::verdicts(verdicts));
    }
    Ok(Finish::ended(batch.signal, verdicts))
}

/// The gates to run: each row on a server that speaks its app's
/// interface. With no server asked for, that interface's default; with one
/// that speaks the other, the run is refused before anything starts (a
/// row of `all` is not applicable there instead).
async fn jobs(session: &Session, asked: &GateCommand) -> Result<Vec<Job>, String> {
    let project = session.project();
    let server = asked
        .server
        .clone()
        .unwrap_or_else(|| Interface::Wsgi.default_server().into());
    let (rows, profile) = crate::spec::row::rows_and_profile(project, &asked.rows, &server)?;
    let mut jobs: Vec<Job> = Vec::new();
    let mut refusals = Vec::new();
    let env = session.python()?;
    let all = asked.rows.iter().any(|r| r == "all");
    for mut row in rows {
        asked.run.apply(&mut row);
        let mut job_profile = profile.clone();
        if !row.servers().is_empty() {
            let app_dir = crate::gate::app_dir_of(project, &row);
            let found = match crate::server::interface::of_fixture(
                &env.python,
                crate::gate::APP,
                &app_dir,
                &project.state_dir(),
            )
            .await
            {
                Ok(f) => f,
                // Its pinned packages are missing: the gate says not
                // applicable, naming them.
                Err(_) if !row.plan.requires().is_empty() => {
                    jobs.push(Job {
                        row,
                        profile: job_profile,
                    });
                    continue;
                }
                Err(e) => return Err(format!("{}: {e}", row.id)),
            };
            if found.interface != profile.interface {
                if asked.server.is_none() {
                    job_profile = crate::spec::resolve_profile(
                        &project.servers_dir(),
                        found.interface.default_server(),
                    )
                    .map_err(|e| e.to_string())?;
                } else if !all {
                    let app = format!(
                        "{}'s app ({})",
                        row.id,
                        app_dir.file_name().unwrap_or_default().to_string_lossy()
                    );
                    refusals.extend(crate::server::interface::mismatch(
                        &profile,
                        found.interface,
                        &app,
                        &crate::server::choose::all_profiles(project),
                    ));
                }
            }
        }
        jobs.push(Job {
            row,
            profile: job_profile,
        });
    }
    if !refusals.is_empty() {
        return Err(format!("--server {server}: {}", refusals.join("; ")));
    }
    Ok(jobs)
}
