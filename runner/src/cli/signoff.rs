//! `runner signoff --server NAME [--out DIR]`: release sign-off. Every row
//! (or the rows given) on one server, each with its `trials.max` as the
//! minimum, written as a bundle a release can be judged by later:
//! report.json, report.md, junit.xml, every server log (logs/) and env.json
//! (the machine's fingerprint). The exit code summarises the bundle, by the
//! same table as `runner gate`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use clap::Args;

use runner::gate::batch::{self, BatchPlan, Job};
use runner::gate::event::Event;
use runner::report::bundle;
use runner::report::export::json::JsonExporter;
use runner::report::export::{iso8601, ExportInput, Exporter};
use runner::report::fingerprint::Fingerprint;
use runner::report::terminal::Terminal;
use runner::session::Session;
use runner::spec::Trials;

use super::args::{JsonArgs, RunArgs};
use super::{unusable, Finish};

#[derive(Debug, Args)]
pub struct SignoffArgs {
    /// Server profile: a name from specs/servers/ or a path to a profile file.
    #[arg(long, value_name = "NAME|PATH")]
    pub server: String,

    /// The bundle's folder (created; must not exist or be empty).
    /// Default: .gates/signoff/SERVER-TIMESTAMP.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Rows: ids, paths, or `all` (the default).
    #[arg(value_name = "ROW")]
    pub rows: Vec<String>,

    #[command(flatten)]
    pub report: JsonArgs,

    #[command(flatten)]
    pub run: RunArgs,
}

pub async fn run(session: &Session, args: &SignoffArgs) -> Finish {
    let project = session.project();
    let (started, clock) = (SystemTime::now(), Instant::now());
    if let Err(e) = args.report.check() {
        return unusable(&e);
    }
    let run = match args.run.plan() {
        Ok(r) => r,
        Err(e) => return unusable(&e),
    };
    let (rows, profile) = match super::rows_and_profile(project, &args.rows, &args.server) {
        Ok(r) => r,
        Err(e) => return unusable(&e),
    };
    let out = args.out.clone().unwrap_or_else(|| {
        let stamp: String = iso8601(started)
            .chars()
            .filter(|c| *c != ':' && *c != '-')
            .collect();
        project
            .state_dir()
            .join("signoff")
            .join(format!("{}-{stamp}", profile.name))
    });
    if let Err(e) = empty_folder(&out) {
        return unusable(&e);
    }
    let jobs: Vec<Job> = rows
        .into_iter()
        .map(|mut row| {
            row.trials = match run.trials {
                Some(t) => Trials { min: t, max: t },
                // Sign-off spends the budget a CI gate only spends when in doubt.
                None => Trials {
                    min: row.trials.max,
                    max: row.trials.max,
                },
            };
            Job {
                row,
                profile: profile.clone(),
            }
        })
        .collect();

    // With --json, stdout carries only the JSON document.
    let screen: Box<dyn std::io::Write> = if args.report.json {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    };
    let terminal = RefCell::new(Terminal::new(screen));
    let mut emit = |e: Event<'_>| terminal.borrow_mut().event(&e);
    let mut fingerprint = None;
    let mut on_env = |env: &runner::host::pyenv::PythonEnv| {
        fingerprint = Some(Fingerprint::start(&project.root, &profile, &env.python));
    };
    let plan = BatchPlan {
        limits: run.limits,
        gap: std::time::Duration::ZERO,
        on_env: &mut on_env,
    };
    let batch = match batch::run(session, plan, &jobs, &mut emit).await {
        Ok(b) => b,
        Err(e) => return unusable(&e),
    };
    terminal.borrow_mut().summary(&batch.results);
    let note = batch.interrupted.clone();
    if let Some(f) = &mut fingerprint {
        f.finish();
    }
    let input = ExportInput {
        results: &batch.results,
        interrupted: note.as_ref(),
        servers: &[],
        root: &project.root,
        started,
        wall: clock.elapsed(),
    };
    let written = match bundle::write(&out, &input, fingerprint.as_ref()) {
        Ok(w) => w,
        Err(e) => return unusable(&e),
    };
    if let Err(e) = args.report.emit(&JsonExporter.render(&input)) {
        return unusable(&e);
    }
    let mut listing = format!("sign-off bundle: {}\n", out.display());
    for (name, bytes) in written {
        listing.push_str(&format!("  {bytes:>9}  {name}\n"));
    }
    if args.report.json {
        eprint!("{listing}");
    } else {
        print!("{listing}");
    }
    let verdicts = batch.results.iter().map(|r| r.counts_as()).collect();
    Finish::ended(batch.signal, verdicts)
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
