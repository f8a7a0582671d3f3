//! `runner gate ROWS...`: each row on a fresh server, a table and a verdict
//! line per gate (or one JSON document), and a summary.

use std::cell::RefCell;
use std::path::PathBuf;

use clap::Args;
use std::time::{Instant, SystemTime};

use runner::gate::batch::{self, BatchPlan, Job};
use runner::gate::event::Event;
use runner::report::export::{github, ExportInput, ExportManager, Format};
use runner::report::json::{self};
use runner::report::terminal::Terminal;
use runner::session::Session;
use runner::spec::Interface;

use super::args::{report_path, JsonArgs, RunArgs};
use super::{unusable, Finish};

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Row ids (E19), paths to row files, or `all`.
    #[arg(required = true, value_name = "ROW")]
    pub rows: Vec<String>,

    /// Server profile: a name from specs/servers/ or a path to a profile
    /// file [default: by the row's app: granian for a WSGI app, uvicorn for
    /// an ASGI one].
    #[arg(long, value_name = "NAME|PATH")]
    pub server: Option<String>,

    #[command(flatten)]
    pub out: JsonArgs,

    /// Also write JUnit XML to PATH: a testcase per row and server.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,

    /// Also write the summary table as Markdown to PATH (and append it to
    /// $GITHUB_STEP_SUMMARY when that is set).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    #[command(flatten)]
    pub run: RunArgs,
}

pub async fn run(session: &Session, args: &GateArgs) -> Finish {
    let project = session.project();
    let (started, clock) = (SystemTime::now(), Instant::now());
    let run = match args.run.plan() {
        Ok(r) => r,
        Err(e) => return unusable(&e),
    };
    for (flag, path) in [
        ("--json-file", &args.out.json_file),
        ("--junit", &args.junit),
        ("--markdown", &args.markdown),
    ] {
        if let Err(e) = report_path(flag, path.as_deref()) {
            return unusable(&e);
        }
    }
    let server = args
        .server
        .clone()
        .unwrap_or_else(|| Interface::Wsgi.default_server().into());
    let (rows, profile) = match super::rows_and_profile(project, &args.rows, &server) {
        Ok(r) => r,
        Err(e) => return unusable(&e),
    };
    // Each row's app is served on a server that speaks its interface: with
    // no --server, that interface's default; with one that speaks the
    // other, the run is refused before anything starts (a row of `all` is
    // not applicable there instead).
    let mut jobs: Vec<Job> = Vec::new();
    let mut refusals = Vec::new();
    let env = match session.python() {
        Ok(env) => env,
        Err(e) => return unusable(&e),
    };
    let all = args.rows.iter().any(|r| r == "all");
    for mut row in rows {
        run.apply(&mut row);
        let mut job_profile = profile.clone();
        if !row.servers().is_empty() {
            let app_dir = runner::gate::app_dir_of(project, &row);
            let found = match runner::server::interface::of_fixture(
                &env.python,
                runner::gate::APP,
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
                Err(e) => return unusable(&format!("{}: {e}", row.id)),
            };
            if found.interface != profile.interface {
                if args.server.is_none() {
                    match runner::spec::resolve_profile(
                        &project.servers_dir(),
                        found.interface.default_server(),
                    ) {
                        Ok(p) => job_profile = p,
                        Err(e) => return unusable(&e.to_string()),
                    }
                } else if !all {
                    let app = format!(
                        "{}'s app ({})",
                        row.id,
                        app_dir.file_name().unwrap_or_default().to_string_lossy()
                    );
                    refusals.extend(runner::server::interface::mismatch(
                        &profile,
                        found.interface,
                        &app,
                        &super::interface::all_profiles(project),
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
        return unusable(&format!("--server {server}: {}", refusals.join("; ")));
    }
    let profiles: Vec<_> = {
        let mut seen: Vec<runner::spec::Profile> = Vec::new();
        for j in &jobs {
            if !seen.iter().any(|p| p.file == j.profile.file) {
                seen.push(j.profile.clone());
            }
        }
        seen
    };

    let pending = RefCell::new(None);
    let python_status = RefCell::new(None);
    let terminal = RefCell::new(Terminal::new(std::io::stdout()));
    let mut emit = |e: Event<'_>| {
        // With --json, stdout carries only the JSON document.
        if !(args.out.json && matches!(e, Event::GateFinished(_))) {
            terminal.borrow_mut().event(&e);
        }
    };
    let mut on_env = |env: &runner::host::pyenv::PythonEnv| {
        // The header `matrix --from` shows: the server's version, and
        // the interpreter's for rows that run no server. Read while the
        // gates run, and joined before the report.
        *pending.borrow_mut() = Some(runner::server::status::statuses_in_background(
            profiles.clone(),
            env.python.clone(),
        ));
        if jobs.iter().any(|j| j.row.servers().is_empty()) {
            *python_status.borrow_mut() = Some(runner::server::status::python_status(
                runner::gate::NO_SERVER,
                &env.python,
                &project.specs_dir(),
            ));
        }
    };
    let plan = BatchPlan::new(run.limits, &mut on_env);
    let batch = match batch::run(session, plan, &jobs, &mut emit).await {
        Ok(b) => b,
        Err(e) => return unusable(&e),
    };
    let mut statuses: Vec<_> = pending
        .into_inner()
        .and_then(|h| h.join().ok())
        .unwrap_or_default();
    statuses.extend(python_status.into_inner());
    let statuses = RefCell::new(statuses);

    let note = batch.interrupted.clone();
    if let Some(note) = &note {
        eprintln!(
            "interrupted by {} during {}; every server started was stopped",
            note.signal,
            note.during.as_deref().unwrap_or("set-up")
        );
    }
    if args.out.json {
        println!(
            "{}",
            json::render(&batch.results, note.clone(), &statuses.borrow())
        );
    } else {
        terminal.borrow_mut().summary(&batch.results);
    }
    let verdicts: Vec<_> = batch.results.iter().map(|r| r.counts_as()).collect();
    if github::in_actions() {
        // With --json, stdout carries only the JSON document; GitHub reads
        // workflow commands from stderr too.
        for line in github::annotations(&project.root, &batch.results) {
            if args.out.json {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
    }
    let mut exports = ExportManager::new();
    exports.add(Format::Json, args.out.json_file.as_deref());
    exports.add(Format::Junit, args.junit.as_deref());
    exports.add(Format::Markdown, args.markdown.as_deref());
    exports.with_step_summary(github::step_summary());
    let input = ExportInput {
        results: &batch.results,
        interrupted: note.as_ref(),
        servers: &statuses.borrow(),
        root: &project.root,
        started,
        wall: clock.elapsed(),
    };
    if let Err(e) = exports.write_all(&input) {
        // A failed gate still says so (exit 1); otherwise the missing
        // report makes the run unusable (exit 2), never a pass.
        let failed = verdicts.contains(&runner::verdict::Verdict::Fail);
        let finish = unusable(&e.to_string());
        return if failed {
            Finish::verdicts(verdicts)
        } else {
            finish
        };
    }
    Finish::ended(batch.signal, verdicts)
}
