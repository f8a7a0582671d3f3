//! `runner advise --path PATH [--call MODULE:FUNCTION [--arg LITERAL]...]
//! [--server S] [--app MODULE:ATTR --app-dir DIR] [--json]`: the
//! deployment rule for one view (see `runner::advise`, docs/deployment-rule.md).
//!
//! Exit code: 0 when it advises; 2 when a figure could not be had (no
//! scheduler accounting, a reading between its bands, a sweep with errors,
//! a server that would not start) or the input is unusable: no advice is
//! ever a guess. 130/143 when interrupted (every server stopped first).

use std::path::Path;
use std::time::Instant;

use runner::advise::options::{AdviseOptions, SWEEP_CONNECTIONS, SWEEP_DURATION, SWEEP_WARMUP};
use runner::advise::{call, headroom, pair, render, AdviceReport};
use runner::cli::AdviseArgs;
use runner::exit::Outcome;
use runner::host::project::Project;
use runner::host::pyenv::{self, EnvProgress};
use runner::sweep::{self, SweepContext, SweepPlan};
use runner::verdict::Verdict;
use runner::{host::signals, spec};

use super::{unusable, Finish};

pub async fn run(project: &Project, python: Option<&Path>, args: &AdviseArgs) -> Finish {
    let opts = match AdviseOptions::from_args(args, &project.app_dir()) {
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
    let started = Instant::now();
    let lock_path = project.state_dir().join("measure.lock");
    let logs_dir = project.logs_dir();
    let fixture_dir = project.app_dir();
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
        eprintln!(
            "advise {}: question 1, does the work release the GIL?",
            opts.path
        );
        let q1 = match &opts.call {
            Some(plan) => {
                call::measure(
                    &env.python,
                    &project.root,
                    plan,
                    &lock_path,
                    opts.limits.machine_wait,
                )
                .await
            }
            None => {
                pair::measure(&pair::PairSpec {
                    profile: &profile,
                    python: &env.python,
                    app: &opts.app,
                    app_dir: &opts.app_dir,
                    fixture: opts.fixture,
                    fixture_dir: &fixture_dir,
                    logs_dir: &logs_dir,
                    lock_path: &lock_path,
                    limits: opts.limits,
                    path: &opts.path,
                })
                .await
            }
        };
        eprintln!(
            "advise {}: question 2, is there headroom? (threads {:?})",
            opts.path,
            headroom::THREADS
        );
        let plan = SweepPlan {
            profile: profile.clone(),
            routes: vec![opts.route.clone()],
            threads: headroom::THREADS.to_vec(),
            workers: Vec::new(),
            connections: SWEEP_CONNECTIONS,
            warmup: SWEEP_WARMUP,
            duration: SWEEP_DURATION,
            request_timeout: opts.limits.request,
            machine_wait: opts.limits.machine_wait,
            app: opts.app.clone(),
            app_dir: opts.app_dir.clone(),
        };
        let ctx = SweepContext {
            python: &env.python,
            logs_dir: logs_dir.clone(),
            lock_path: lock_path.clone(),
        };
        let mut settings = Vec::new();
        sweep::run(&ctx, &plan, &mut settings, &mut |_| {}).await;
        let q2 = headroom::read(&settings, headroom::cores());
        Ok::<_, String>((q1, q2))
    };
    let (q1, q2) = match signals::until_signal(work).await {
        Ok(Ok(answers)) => answers,
        Ok(Err(e)) => return unusable(&e),
        Err(signal) => {
            eprintln!(
                "interrupted by {}; every server was stopped",
                signals::name(signal)
            );
            return Finish {
                outcome: Outcome::Interrupted { signal },
                verdicts: Vec::new(),
            };
        }
    };
    let report = AdviceReport::new(
        profile.name.clone(),
        opts.app.clone(),
        opts.path.clone(),
        q1,
        q2,
        started.elapsed().as_secs_f64(),
    );
    if opts.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => return unusable(&format!("cannot write the JSON report: {e}")),
        }
    } else {
        print!("{}", render::render(&report));
    }
    if report.advice.is_some() {
        Finish::ok()
    } else {
        eprintln!("cannot judge: {}", report.reason);
        Finish::verdicts(vec![Verdict::CannotJudge])
    }
}
