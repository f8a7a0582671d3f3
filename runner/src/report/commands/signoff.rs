//! `runner signoff --server NAME [--out DIR]`: release sign-off. Every row
//! (or the rows given) on one server, each with its `trials.max` as the
//! minimum, written as a bundle a release can be judged by later:
//! report.json, report.md, junit.xml, every server log (logs/) and env.json
//! (the machine's fingerprint). It ends by the same table as `runner gate`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use crate::console::{Console, JsonOut};
use crate::exit::Finish;
use crate::gate::batch::{self, BatchPlan, Job};
use crate::gate::event::Event;
use crate::gate::input::RunPlan;
use crate::report::bundle;
use crate::report::export::json::JsonExporter;
use crate::report::export::{iso8601, ExportInput, Exporter};
use crate::report::fingerprint::Fingerprint;
use crate::report::terminal::Terminal;
use crate::session::Session;
use crate::spec::Trials;

/// What `runner signoff` is asked.
pub struct SignoffCommand {
    /// The server's name or profile path.
    pub server: String,
    /// The bundle's folder (default: .gates/signoff/SERVER-TIMESTAMP).
    pub out: Option<PathBuf>,
    /// Rows: ids, paths, or `all` (none: all).
    pub rows: Vec<String>,
    pub report: JsonOut,
    pub run: RunPlan,
}

pub async fn run(
    session: &Session,
    asked: &SignoffCommand,
    console: &dyn Console,
) -> Result<Finish, String> {
    let project = session.project();
    let (started, clock) = (SystemTime::now(), Instant::now());
    asked.report.check()?;
    let (rows, profile) = crate::spec::row::rows_and_profile(project, &asked.rows, &asked.server)?;
    let out = asked.out.clone().unwrap_or_else(|| {
        let stamp: String = iso8601(started)
            .chars()
            .filter(|c| *c != ':' && *c != '-')
            .collect();
        project
            .state_dir()
            .join("signoff")
            .join(format!("{}-{stamp}", profile.name))
    });
    empty_folder(&out)?;
    let jobs: Vec<Job> = rows
        .into_iter()
        .map(|mut row| {
            // Sign-off spends the budget a CI gate only spends when in doubt.
            let n = asked.run.trials.unwrap_or(row.trials.max);
            row.trials = Trials { min: n, max: n };
            Job {
                row,
                profile: profile.clone(),
            }
        })
        .collect();

    // With --json, the answer's stream carries only the JSON document.
    let terminal = RefCell::new(Terminal::new(console.screen(asked.report.json), console));
    let mut emit = |e: Event<'_>| terminal.borrow_mut().event(&e);
    let mut fingerprint = None;
    let mut on_env = |env: &crate::host::pyenv::PythonEnv| {
        fingerprint = Some(Fingerprint::start(&project.root, &profile, &env.python));
    };
    let plan = BatchPlan::new(asked.run.limits, &mut on_env);
    let batch = batch::run(session, plan, &jobs, &mut emit).await?;
    terminal.borrow_mut().summary(&batch.results);
    let note = batch.interrupted.clone();
    if let Some(f) = &mut fingerprint {
        f.finish();
    }
    let export = ExportInput {
        results: &batch.results,
        interrupted: note.as_ref(),
        servers: &[],
        root: &project.root,
        started,
        wall: clock.elapsed(),
    };
    let written = bundle::write(&out, &export, fingerprint.as_ref())?;
    asked.report.emit(console, &JsonExporter.render(&export))?;
    let mut listing = format!("sign-off bundle: {}\n", out.display());
    for (name, bytes) in written {
        listing.push_str(&format!("  {bytes:>9}  {name}\n"));
    }
    let _ = std::io::Write::write_all(&mut console.screen(asked.report.json), listing.as_bytes());
    let verdicts = batch.results.iter().map(|r| r.counts_as()).collect();
    Ok(Finish::ended(batch.signal, verdicts))
}

/// Creates `dir`, which must not exist yet or be empty: a bundle never
/// mixes two runs.
fn empty_folder(dir: &Path) -> Result<(), String> {
    if dir.is_file() {
        return Err(format!("--out {}: is a file; give a folder", dir.display()));
    }
    if let Ok(mut entries) = std::fs::read_dir(dir) {
        if entries.next().is_some() {
            return Err(format!(
                "--out {}: is not empty; give a new folder so that the bundle holds one run only",
                dir.display()
            ));
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--out {}: cannot create it: {e}", dir.display()))
}
