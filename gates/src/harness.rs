//! The harness itself: one libtest-mimic `Trial::test` per planned gate,
//! run with cargo's and nextest's own arguments (filters, `--exact`,
//! `--skip`, `--list`, `--ignored`, `--include-ignored`, `--format terse`).
//!
//! Gates take turns on the machine anyway, so trials run on one thread
//! unless `--test-threads` or `RUST_TEST_THREADS` says otherwise. On GitHub
//! Actions every failed or unjudged gate is also printed as an `::error`
//! annotation pointing at its row, after libtest's summary (workflow
//! commands must start a line).

use std::process::ExitCode;
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use runner::exit::{self, Outcome};
use runner::host::project::Project;
use runner::report::export::github;

use crate::config::Config;
use crate::discover::{discover, Planned};
use crate::outcome::outcome;
use crate::run::Shared;

/// Runs the harness on this process's arguments and environment.
pub fn main() -> ExitCode {
    let mut args = Arguments::from_args();
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    let project = match Project::locate(None) {
        Ok(p) => p,
        Err(e) => return usage_error(&e),
    };
    let planned = match discover(&project, &config) {
        Ok(p) => p,
        Err(e) => return usage_error(&e),
    };
    if args.test_threads.is_none() {
        args.test_threads = Some(
            std::env::var("RUST_TEST_THREADS")
                .ok()
                .and_then(|n| n.trim().parse().ok())
                .filter(|n: &usize| *n > 0)
                .unwrap_or(1),
        );
    }
    // Each row once (a row has a trial per server), for the venv's pins.
    let mut rows: Vec<runner::spec::row::Row> = Vec::new();
    for row in planned.iter().filter_map(|p| p.row.as_ref().ok()) {
        if !rows.iter().any(|r| r.id == row.id) {
            rows.push(row.clone());
        }
    }
    let shared = Arc::new(Shared::new(project, rows));
    if !args.list {
        // Before libtest's first `test NAME ... ` line, so that the one line
        // a first preparation prints stands on its own; a failure is every
        // trial's message.
        let _ = shared.python();
    }
    let trials = planned
        .into_iter()
        .map(|p| trial(p, &shared, &config))
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    if !args.list && github::in_actions() {
        for line in github::annotations(&shared.project.root, &shared.results()) {
            println!("{line}");
        }
    }
    match shared.interrupted() {
        // The runner's one table, as `runner` itself exits on a signal.
        Some(signal) => ExitCode::from(exit::code(Outcome::Interrupted { signal }, &[])),
        None => conclusion.exit_code(),
    }
}

/// A problem with the harness's input (a variable, the project, the rows
/// folder): on stderr, exit 2 like the runner's unusable input.
fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(exit::code(Outcome::Unusable, &[]))
}

fn trial(p: Planned, shared: &Arc<Shared>, config: &Config) -> Trial {
    let shared = Arc::clone(shared);
    let policy = config.cannot_judge;
    let ignored = p.ignored;
    let name = p.name.clone();
    Trial::ignorable_test(p.name, move || {
        let row = p
            .row
            .map_err(|e| Failed::from(format!("unusable row: {e}")))?;
        let profile = p
            .profile
            .map_err(|e| Failed::from(format!("unusable server profile: {e}")))?;
        let result = shared
            .run(&row, &profile)
            .map_err(|e| Failed::from(format!("{name}: {e}")))?;
        outcome(&result, policy, &shared.project.root)
    })
    .with_ignored_flag(ignored)
}
