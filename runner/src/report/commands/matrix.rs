//! `runner matrix [--servers a,b,c] [ROWS]`: every row on every server, each
//! gate on a fresh server, printed as rows by servers (and, on request, as
//! Markdown, JSON and JUnit files). Per-gate tables and progress go to the
//! notes' stream so that the answer is the matrix alone. With `from`
//! reports it runs nothing and merges the reports of runs elsewhere
//! (`report/merge.rs`).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::console::{Console, JsonOut};
use crate::exit::Finish;
use crate::gate::batch::{self, BatchPlan, Job};
use crate::gate::event::Event;
use crate::gate::input::RunPlan;
use crate::host::project::Project;
use crate::report::export::{github, junit};
use crate::report::matrix::{Entry, Matrix, RowHead};
use crate::report::merge;
use crate::report::terminal::Terminal;
use crate::server::status;
use crate::session::Session;

/// What `runner matrix` is asked.
pub struct MatrixCommand {
    /// Row ids, paths, or `all` (none: all).
    pub rows: Vec<String>,
    /// Server names or profile paths (none: every profile).
    pub servers: Vec<String>,
    pub markdown: Option<PathBuf>,
    pub out: JsonOut,
    /// Reports to merge instead of running anything.
    pub from: Vec<PathBuf>,
    pub junit: Option<PathBuf>,
    pub run: RunPlan,
}

impl MatrixCommand {
    fn check(&self) -> Result<(), String> {
        if self.servers.iter().any(|s| s.trim().is_empty()) {
            return Err("--servers: an empty name; give names or paths separated by commas".into());
        }
        for (flag, path) in [
            ("--markdown", &self.markdown),
            ("--json-file", &self.out.file),
            ("--junit", &self.junit),
        ] {
            let Some(path) = path else { continue };
            if let Some(dir) = path.parent() {
                if !dir.as_os_str().is_empty() && !dir.is_dir() {
                    return Err(format!(
                        "{flag} {}: no folder {}",
                        path.display(),
                        dir.display()
                    ));
                }
            }
        }
        Ok(())
    }
}

pub async fn run(
    session: &Session,
    asked: &MatrixCommand,
    console: &dyn Console,
) -> Result<Finish, String> {
    asked.check()?;
    let project = session.project();
    let started = Instant::now();
    let rows = crate::spec::row::resolve_rows(&project.specs_dir(), &asked.rows)
        .map_err(|e| e.to_string())?;
    let heads: Vec<RowHead> = rows
        .iter()
        .map(|r| RowHead {
            id: r.id.clone(),
            title: r.title.clone(),
            claim: r.claim.clone(),
            probe: r.probe.name().into(),
            on_servers: !r.servers().is_empty(),
        })
        .collect();
    let profiles = crate::server::choose::profiles_named(project, &asked.servers)?;
    if !asked.from.is_empty() {
        let reports = asked
            .from
            .iter()
            .map(|path| merge::read(path))
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<String> = profiles.iter().map(|p| p.name.clone()).collect();
        let wanted = merge::Asked {
            rows: !asked.rows.is_empty(),
            servers: !asked.servers.is_empty(),
        };
        let matrix = merge::merge_asked(heads, &names, &reports, wanted);
        return finish(project, asked, &matrix, None, console);
    }
    let mut jobs = Vec::new();
    for row in &rows {
        // A row without a server (gil-probe) runs once, in the `python`
        // column; the profile it carries is never started.
        let on = if row.servers().is_empty() {
            &profiles[..profiles.len().min(1)]
        } else {
            &profiles[..]
        };
        for profile in on {
            let mut row = row.clone();
            asked.run.apply(&mut row);
            jobs.push(Job {
                row,
                profile: profile.clone(),
            });
        }
    }
    let python_column = rows.iter().any(|r| r.servers().is_empty());

    // Per-gate tables go to the notes: the answer is the matrix only.
    let terminal = RefCell::new(Terminal::new(console.notes(), console));
    let mut emit = |e: Event<'_>| terminal.borrow_mut().event(&e);
    let mut pending = None;
    let mut on_env = |env: &crate::host::pyenv::PythonEnv| {
        // Read while the gates run, joined before the report.
        pending = Some(status::statuses_in_background(
            profiles.clone(),
            env.python.clone(),
        ));
    };
    let plan = BatchPlan::new(asked.run.limits, &mut on_env);
    let batch = batch::run(session, plan, &jobs, &mut emit).await?;
    let mut statuses = pending.and_then(|h| h.join().ok()).unwrap_or_default();
    if statuses.is_empty() {
        // Interrupted before the versions were read: columns without them.
        statuses = status::statuses(&profiles, None)
            .into_iter()
            .map(|mut s| {
                s.version = None;
                s
            })
            .collect();
    }
    if python_column {
        statuses.push(status::python_status(
            crate::gate::NO_SERVER,
            &session.python_override().map_or_else(
                || project.state_dir().join("venv/bin/python"),
                Path::to_path_buf,
            ),
            &project.specs_dir(),
        ));
    }
    let matrix = Matrix {
        rows: heads,
        servers: statuses,
        entries: batch.results.iter().map(Entry::from).collect(),
        results: batch
            .results
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or_default())
            .collect(),
        merged: None,
        wall: started.elapsed(),
        interrupted: batch.interrupted,
    };
    finish(project, asked, &matrix, batch.signal, console)
}

/// Prints the matrix (or its JSON document), writes the files asked for
/// (and the Markdown to the step summary in GitHub Actions), and ends with
/// its verdicts.
fn finish(
    project: &Project,
    asked: &MatrixCommand,
    matrix: &Matrix,
    interrupted: Option<i32>,
    console: &dyn Console,
) -> Result<Finish, String> {
    if !asked.out.json {
        console.print(&matrix.render_text());
    }
    let mut write_error = asked.out.emit(console, &matrix.render_json()).err();
    for (path, text) in [
        (&asked.markdown, matrix.render_markdown()),
        (&asked.junit, junit::render_matrix(matrix, &project.root)),
    ] {
        if let Some(path) = path {
            if let Err(e) = std::fs::write(path, text) {
                write_error = Some(format!("cannot write {}: {e}", path.display()));
            }
        }
    }
    if let Some(summary) = github::step_summary().filter(|p| !p.as_os_str().is_empty()) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .and_then(|mut f| {
                std::io::Write::write_all(&mut f, matrix.render_markdown().as_bytes())
            });
        if let Err(e) = appended {
            write_error = Some(format!(
                "cannot append to $GITHUB_STEP_SUMMARY ({}): {e}",
                summary.display()
            ));
        }
    }
    match write_error {
        Some(e) => Err(e),
        None => Ok(Finish::ended(interrupted, matrix.exit_verdicts())),
    }
}
