//! `runner matrix [--servers a,b,c] [ROWS]`: every row on every server, each
//! gate on a fresh server, printed as rows by servers (and, on request, as
//! Markdown, JSON and JUnit files). Per-gate tables and progress go to stderr so
//! that stdout is the matrix alone. With `--from REPORT.json...` it runs
//! nothing and merges the reports of runs elsewhere (`report/merge.rs`).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use runner::gate::batch::{self, BatchPlan, Job};
use runner::gate::event::Event;
use runner::gate::request::RunPlan;
use runner::host::project::Project;
use runner::report::export::{github, junit};
use runner::report::matrix::{Entry, Matrix, RowHead};
use runner::report::merge;
use runner::report::terminal::Terminal;
use runner::server::status;
use runner::session::Session;
use runner::spec;

use super::servers::all_profiles;

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Row ids (E19), paths to row files, or `all` (the default).
    #[arg(value_name = "ROW")]
    pub rows: Vec<String>,

    /// Servers, comma-separated: names from specs/servers/ or paths to
    /// profile files; every profile in specs/servers/ by default.
    #[arg(
        long,
        alias = "server",
        value_delimiter = ',',
        value_name = "NAME|PATH,..."
    )]
    pub servers: Vec<String>,

    /// Also write the matrix as Markdown to PATH.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    #[command(flatten)]
    pub out: JsonArgs,

    // CI at scale (issue 19): the merge of jobs' reports and its JUnit file.
    /// Run nothing: merge these `gate --json-file` reports (one per CI job)
    /// into the matrix of ROWs by --servers (by default, the rows and
    /// servers the reports hold); a cell asked for that none gives reads
    /// missing.
    #[arg(long, value_name = "REPORT.json", num_args = 1..)]
    pub from: Vec<PathBuf>,

    /// Also write the matrix as JUnit XML to PATH: a testsuite per server,
    /// a testcase per cell (a missing cell is an error).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,

    #[command(flatten)]
    pub run: RunArgs,
}
use super::args::{json_is_a_flag_now, JsonArgs, RunArgs};
use super::{unusable, Finish};

/// Validated `matrix` options.
struct MatrixOptions {
    run: RunPlan,
}

fn options(args: &MatrixArgs) -> Result<MatrixOptions, String> {
    let run = args.run.plan()?;
    if args.servers.iter().any(|s| s.trim().is_empty()) {
        return Err("--servers: an empty name; give names or paths separated by commas".into());
    }
    json_is_a_flag_now(args.out.json, &args.rows)?;
    for (flag, path) in [
        ("--markdown", &args.markdown),
        ("--json-file", &args.out.json_file),
        ("--junit", &args.junit),
    ] {
        if let Some(dir) = path.as_ref().and_then(|p| p.parent()) {
            if !dir.as_os_str().is_empty() && !dir.is_dir() {
                return Err(format!(
                    "{flag} {}: no folder {}",
                    path.as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    dir.display()
                ));
            }
        }
    }
    Ok(MatrixOptions { run })
}

pub async fn run(session: &Session, args: &MatrixArgs) -> Finish {
    let project = session.project();
    let started = Instant::now();
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => return unusable(&e),
    };
    let rows = match runner::spec::row::resolve_rows(&project.specs_dir(), &args.rows) {
        Ok(r) => r,
        Err(e) => return unusable(&e.to_string()),
    };
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
    let server_names = if args.servers.is_empty() {
        match all_profiles(project) {
            Ok(n) => n,
            Err(e) => return unusable(&e),
        }
    } else {
        args.servers.iter().map(|s| s.trim().to_string()).collect()
    };
    let mut profiles = Vec::new();
    for name in &server_names {
        match spec::resolve_profile(&project.servers_dir(), name) {
            Ok(p) => profiles.push(p),
            Err(e) => return unusable(&e.to_string()),
        }
    }
    if !args.from.is_empty() {
        let mut reports = Vec::new();
        for path in &args.from {
            match merge::read(path) {
                Ok(r) => reports.push(r),
                Err(e) => return unusable(&e),
            }
        }
        let names: Vec<String> = profiles.iter().map(|p| p.name.clone()).collect();
        let asked = merge::Asked {
            rows: !args.rows.is_empty(),
            servers: !args.servers.is_empty(),
        };
        let matrix = merge::merge_asked(heads, &names, &reports, asked);
        return finish(project, args, &matrix, None);
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
            opts.run.apply(&mut row);
            jobs.push(Job {
                row,
                profile: profile.clone(),
            });
        }
    }
    let python_column = rows.iter().any(|r| r.servers().is_empty());

    // Per-gate tables go to stderr: stdout carries the matrix only.
    let terminal = RefCell::new(Terminal::new(std::io::stderr()));
    let mut emit = |e: Event<'_>| terminal.borrow_mut().event(&e);
    let mut pending = None;
    let mut on_env = |env: &runner::host::pyenv::PythonEnv| {
        // Read while the gates run, joined before the report.
        pending = Some(status::statuses_in_background(
            profiles.clone(),
            env.python.clone(),
        ));
    };
    let plan = BatchPlan {
        limits: opts.run.limits,
        gap: std::time::Duration::ZERO,
        on_env: &mut on_env,
    };
    let batch = match batch::run(session, plan, &jobs, &mut emit).await {
        Ok(b) => b,
        Err(e) => return unusable(&e),
    };
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
        statuses.push(runner::server::status::python_status(
            runner::gate::NO_SERVER,
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
    finish(project, args, &matrix, batch.signal)
}

/// Prints the matrix (or, with --json, its JSON document), writes the files
/// asked for (and the Markdown to the step summary in GitHub Actions), and
/// ends with its verdicts.
fn finish(
    project: &Project,
    args: &MatrixArgs,
    matrix: &Matrix,
    interrupted: Option<i32>,
) -> Finish {
    if !args.out.json {
        print!("{}", matrix.render_text());
    }
    let mut write_error = args.out.emit(&matrix.render_json()).err();
    for (path, text) in [
        (&args.markdown, matrix.render_markdown()),
        (&args.junit, junit::render_matrix(matrix, &project.root)),
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
    if let Some(e) = write_error {
        return unusable(&e);
    }
    Finish::ended(interrupted, matrix.exit_verdicts())
}
