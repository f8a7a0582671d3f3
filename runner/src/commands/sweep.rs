//! `runner sweep`: throughput and latency of one or more routes on a fresh
//! server per setting of threads and workers (see `runner::sweep`), printed
//! as a table and written as JSON, CSV, Markdown and SVG on request.
//!
//! Exit code: 0 when every setting was measured and every request was good
//! (every `/work` digest right); 2 when any setting had errors, wrong
//! digests, or could not be measured (its figures are not the server's);
//! 130/143 when interrupted (the settings done so far are still reported).

use std::path::Path;
use std::time::Instant;

use runner::cli::SweepArgs;
use runner::exit::Outcome;
use runner::host::project::Project;
use runner::host::pyenv::{self, EnvProgress};
use runner::sweep::options::SweepOptions;
use runner::sweep::terminal::{self, Progress};
use runner::sweep::{self, export, SweepContext, SweepPlan, SweepResult};
use runner::verdict::Verdict;
use runner::{host::signals, spec};

use super::{unusable, Finish};

pub async fn run(project: &Project, python: Option<&Path>, args: &SweepArgs) -> Finish {
    let row = match &args.row {
        Some(wanted) => {
            match sweep::row::resolve(
                &project.specs_dir().join("sweeps"),
                wanted,
                &project.app_dir(),
            ) {
                Ok(row) => Some(row),
                Err(e) => return unusable(&e.to_string()),
            }
        }
        None => None,
    };
    let row_args = row.as_ref().map(|r| r.args(args));
    let args = row_args.as_ref().unwrap_or(args);
    let opts = match SweepOptions::from_args(args, &project.app_dir()) {
        Ok(o) => o,
        Err(e) => return unusable(&e),
    };
    let profile = match spec::resolve_profile(&project.servers_dir(), &opts.server) {
        Ok(p) => p,
        Err(e) => return unusable(&e.to_string()),
    };
    if let Some(why) = profile.not_ready() {
        return unusable(&format!("--server {}: {why}", opts.server));
    }
    let plan = SweepPlan {
        profile,
        routes: opts.routes.clone(),
        threads: opts.threads.clone(),
        workers: opts.workers.clone(),
        connections: opts.connections,
        warmup: opts.warmup,
        duration: opts.duration,
        request_timeout: opts.request_timeout,
        machine_wait: opts.machine_wait,
        app: opts.app.clone(),
        app_dir: opts.app_dir.clone(),
        ready: opts.ready.clone(),
        warmup_cap: runner::sweep::WARMUP_CAP,
    };
    let started = Instant::now();
    let mut progress = Progress::new();
    let mut settings = Vec::new();
    let work = async {
        let env = pyenv::prepare(project, python, &mut |p| {
            if let EnvProgress::Installing { venv, reason, .. } = p {
                eprintln!(
                    "preparing the Python environment ({reason}): creating {} (this takes a minute once)",
                    venv.display()
                );
            }
        })
        .map_err(|e| e.to_string())?;
        let ctx = SweepContext {
            python: &env.python,
            logs_dir: project.logs_dir(),
            lock_path: project.state_dir().join("measure.lock"),
        };
        sweep::run(&ctx, &plan, &mut settings, &mut |e| progress.event(&e)).await;
        Ok::<(), String>(())
    };
    let interrupted = match signals::until_signal(work).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => return unusable(&e),
        Err(signal) => Some(signal),
    };
    // An interrupted sweep never reached its own scaling pass.
    sweep::scale(&mut settings);
    let result = SweepResult {
        row: row.as_ref().map(|r| r.reference()),
        server: plan.profile.name.clone(),
        app: plan.app.clone(),
        app_dir: plan.app_dir.clone(),
        connections: plan.connections,
        warmup_s: plan.warmup.as_secs_f64(),
        duration_s: plan.duration.as_secs_f64(),
        request_timeout_ms: plan.request_timeout.as_millis() as u64,
        settings,
        elapsed_s: started.elapsed().as_secs_f64(),
        interrupted: interrupted.map(|s| signals::name(s).to_string()),
    };
    print!("{}", terminal::render(&result));
    match export::write_all(&result, &opts.reports) {
        Ok(paths) => {
            for p in paths {
                eprintln!("wrote {}", p.display());
            }
        }
        Err(e) => return unusable(&e),
    }
    match interrupted {
        Some(signal) => Finish {
            outcome: Outcome::Interrupted { signal },
            verdicts: Vec::new(),
        },
        None if result.clean() => Finish::ok(),
        None => Finish::verdicts(vec![Verdict::CannotJudge]),
    }
}
