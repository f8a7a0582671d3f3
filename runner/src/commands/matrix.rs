//! `runner matrix [--servers a,b,c] [ROWS]`: every row on every server, each
//! gate on a fresh server, printed as rows by servers (and, on request, as
//! Markdown and JSON files). Per-gate tables and progress go to stderr so
//! that stdout is the matrix alone.

use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

use runner::cli::MatrixArgs;
use runner::event::Event;
use runner::exit::Outcome;
use runner::gate::GateContext;
use runner::probe::pair_ratio::Limits;
use runner::project::Project;
use runner::report::json::Interrupted;
use runner::report::matrix::{Matrix, RowHead};
use runner::report::terminal::Terminal;
use runner::server_status;
use runner::session::{run_jobs, Job, Progress};
use runner::spec::row::Trials;
use runner::{pyenv, signals, spec};

use super::servers::all_profiles;
use super::{unusable, Finish};

/// Validated `matrix` options.
struct MatrixOptions {
    trials: Option<u32>,
    request_timeout: Duration,
    machine_wait: Duration,
}

fn options(args: &MatrixArgs) -> Result<MatrixOptions, String> {
    if let Some(t) = args.trials {
        if !(1..=1000).contains(&t) {
            return Err(format!("--trials {t}: use a number from 1 to 1000"));
        }
    }
    if !(100..=600_000).contains(&args.request_timeout_ms) {
        return Err(format!(
            "--request-timeout-ms {}: use 100 to 600000",
            args.request_timeout_ms
        ));
    }
    if args.servers.iter().any(|s| s.trim().is_empty()) {
        return Err("--servers: an empty name; give names or paths separated by commas".into());
    }
    for (flag, path) in [("--markdown", &args.markdown), ("--json", &args.json)] {
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
    Ok(MatrixOptions {
        trials: args.trials,
        request_timeout: Duration::from_millis(args.request_timeout_ms),
        machine_wait: Duration::from_millis(args.machine_wait_ms),
    })
}

pub async fn run(project: &Project, python: Option<&Path>, args: &MatrixArgs) -> Finish {
    let started = Instant::now();
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => return unusable(&e),
    };
    let wanted_rows = if args.rows.is_empty() {
        vec!["all".to_string()]
    } else {
        args.rows.clone()
    };
    let rows = match spec::resolve_rows(&project.specs_dir(), &wanted_rows) {
        Ok(r) => r,
        Err(e) => return unusable(&e.to_string()),
    };
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
    let mut jobs = Vec::new();
    for row in &rows {
        for profile in &profiles {
            let mut row = row.clone();
            if let Some(t) = opts.trials {
                row.trials = Trials { min: t, max: t };
            }
            jobs.push(Job {
                row,
                profile: profile.clone(),
            });
        }
    }

    let progress = RefCell::new(Progress::default());
    // Per-gate tables go to stderr: stdout carries the matrix only.
    let terminal = RefCell::new(Terminal::new(std::io::stderr()));
    let mut emit = |e: Event<'_>| terminal.borrow_mut().event(&e);
    let statuses = RefCell::new(Vec::new());
    let work = async {
        let env = pyenv::prepare(project, python, &mut |p| emit(Event::Env(p)))
            .map_err(|e| e.to_string())?;
        *statuses.borrow_mut() = server_status::statuses(&profiles, Some(&env.python));
        let ctx = GateContext {
            project,
            python: &env,
            limits: Limits {
                request: opts.request_timeout,
                machine_wait: opts.machine_wait,
            },
        };
        run_jobs(&ctx, &jobs, &progress, &mut emit).await;
        Ok::<(), String>(())
    };
    let interrupted = match signals::until_signal(work).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => return unusable(&e),
        Err(signal) => Some(signal),
    };

    let progress = progress.borrow();
    let mut statuses = statuses.into_inner();
    if statuses.is_empty() {
        // Interrupted before the versions were read: columns without them.
        statuses = server_status::statuses(&profiles, None)
            .into_iter()
            .map(|mut s| {
                s.version = None;
                s
            })
            .collect();
    }
    let matrix = Matrix {
        rows: rows
            .iter()
            .map(|r| RowHead {
                id: r.id.clone(),
                title: r.title.clone(),
            })
            .collect(),
        servers: statuses,
        results: &progress.results,
        wall: started.elapsed(),
        interrupted: interrupted.map(|signal| Interrupted {
            signal: signals::name(signal).into(),
            during: progress.current.clone(),
            server_pgid: progress.current_pgid,
        }),
    };
    print!("{}", matrix.render_text());
    let mut write_error = None;
    for (path, text) in [
        (&args.markdown, matrix.render_markdown()),
        (&args.json, matrix.render_json()),
    ] {
        if let Some(path) = path {
            if let Err(e) = std::fs::write(path, text) {
                write_error = Some(format!("cannot write {}: {e}", path.display()));
            }
        }
    }
    if let Some(e) = write_error {
        return unusable(&e);
    }
    let verdicts = progress.results.iter().map(|r| r.verdict()).collect();
    match interrupted {
        Some(signal) => Finish {
            outcome: Outcome::Interrupted { signal },
            verdicts,
        },
        None => Finish::verdicts(verdicts),
    }
}
