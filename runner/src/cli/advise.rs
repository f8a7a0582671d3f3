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

use clap::Args;

use runner::advise::request::{AdviseField, AdviseRequest};
use runner::advise::{call, headroom, pair, placement, render, AdviceReport};
use runner::host::limits::Limits;
use runner::host::project::Project;
use runner::host::signals;
use runner::request::FieldError;
use runner::spec::Interface;
use runner::sweep::request::DEFAULT_PATH;
use runner::sweep::SweepContext;
use runner::verdict::Verdict;

use super::args::{sweep_flag, AppArgs, JsonArgs};
use super::interface;
use super::{unusable, Finish};

#[derive(Debug, Args)]
pub struct AdviseArgs {
    /// The view to advise on. The fixture's /work gets a fresh seed per
    /// request and every digest checked; other routes are checked for
    /// status and body length only.
    #[arg(
        long,
        default_value = DEFAULT_PATH,
        value_name = "PATH"
    )]
    pub path: String,

    /// Answer question 1 with the GIL probe of this call instead of a pair
    /// on the view (time:sleep, package.module:Class.method).
    #[arg(long, value_name = "MODULE:FUNCTION")]
    pub call: Option<String>,

    /// An argument of --call as a Python literal, repeatable: --arg 0.005.
    #[arg(long = "arg", value_name = "LITERAL", allow_hyphen_values = true)]
    pub args: Vec<String>,

    /// Server profile: a name from specs/servers/ or a path to a profile
    /// file [default: granian for a WSGI app, uvicorn for an ASGI one].
    #[arg(long, value_name = "NAME|PATH")]
    pub server: Option<String>,

    #[command(flatten)]
    pub app: AppArgs,

    #[command(flatten)]
    pub out: JsonArgs,

    /// Bound on any one request (and on opening a connection).
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    /// How long each measurement waits for a gate or sweep running on this
    /// machine (they take turns).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

impl AdviseArgs {
    fn request(&self) -> AdviseRequest {
        AdviseRequest {
            path: self.path.clone(),
            call: self.call.clone(),
            args: self.args.clone(),
            server: interface::server_name(self.server.as_deref(), self.app.interface),
            app: self.app.app.clone(),
            app_dir: self.app.app_dir.clone(),
            ready_path: self.app.ready_path.clone(),
            request_timeout_ms: self.request_timeout_ms,
            machine_wait_ms: self.machine_wait_ms,
        }
    }
}

/// An advise field's error, named by its flag.
fn advise_flag(e: &FieldError<AdviseField>) -> String {
    e.named(match e.field {
        AdviseField::Sweep(f) => sweep_flag(f),
        AdviseField::Call => "--call",
        AdviseField::Args => "--arg",
    })
}

pub async fn run(project: &Project, python: Option<&Path>, args: &AdviseArgs) -> Finish {
    if let Err(e) = args.out.check() {
        return unusable(&e);
    }
    let mut request = args.request();
    let mut fixture_dir = interface::fixture_dir(project, &request.server);
    let mut opts = match request.plan(&fixture_dir, &project.servers_dir()) {
        Ok(o) => o,
        Err(e) => return unusable(&advise_flag(&e)),
    };
    let started = Instant::now();
    let env = match super::prepare_python(project, python) {
        Ok(env) => env,
        Err(e) => return unusable(&e),
    };
    // The user's app: served on a server that speaks its interface, found
    // by importing it, or refused before anything starts.
    if !opts.headroom.fixture {
        let settled = match interface::settle(
            project,
            &env.python,
            &opts.headroom.app,
            &opts.headroom.app_dir,
            args.app.interface,
            &opts.headroom.profile,
            args.server.is_some(),
        )
        .await
        {
            Ok(s) => s,
            Err(e) => return unusable(&e),
        };
        if let Some(found) = &settled.found {
            eprintln!(
                "advise: {} is {} ({}): {}",
                opts.headroom.app, found.what, found.why, settled.interface
            );
        }
        if let Some(other) = settled.profile {
            eprintln!(
                "advise: serving it on {} (no --server given; the {} default)",
                other.name, settled.interface
            );
            request.server = other.file.display().to_string();
            fixture_dir = interface::fixture_dir(project, &request.server);
            opts = match request.plan(&fixture_dir, &project.servers_dir()) {
                Ok(o) => o,
                Err(e) => return unusable(&advise_flag(&e)),
            };
        }
    }
    // The holding control is the fixture of the profile's interface.
    if opts.headroom.profile.interface == Interface::Asgi {
        fixture_dir = project.fixture_dir(interface::ASGI_FIXTURE);
    }
    let profile = &opts.headroom.profile;
    let lock_path = project.state_dir().join("measure.lock");
    let logs_dir = project.logs_dir();
    let asgi = profile.interface == Interface::Asgi;
    let work = async {
        // An ASGI view: where it runs first. On the loop, blocking it: the
        // GIL question is asked of the view moved to a thread; awaiting:
        // neither question changes the answer. In the pool: as WSGI.
        let placed = if asgi {
            eprintln!(
                "advise {}: where does the view run, on the event loop or in the threadpool?",
                opts.path
            );
            Some(
                placement::measure(&placement::PlacementSpec {
                    profile,
                    python: &env.python,
                    app: &opts.headroom.app,
                    app_dir: &opts.headroom.app_dir,
                    logs_dir: &logs_dir,
                    lock_path: &lock_path,
                    limits: opts.limits,
                    path: &opts.path,
                    ready_path: opts.headroom.ready.for_route(&opts.path),
                })
                .await,
            )
        } else {
            None
        };
        let place = placed.as_ref().and_then(|p| p.place);
        if placed.is_some() && place != Some(placement::Place::Pool) {
            let not_asked = |what: &str| {
                (
                    runner::advise::GilAnswer {
                        work: None,
                        source: "not asked".into(),
                        headline: String::new(),
                        reason: format!("not asked: {what}"),
                        pair: None,
                        call: None,
                    },
                    headroom::Headroom {
                        figures: None,
                        reason: format!("not asked: {what}"),
                    },
                )
            };
            let (mut q1, q2) = not_asked(match place {
                Some(placement::Place::LoopAwaits) => {
                    "the view awaits on the event loop, where no thread count changes anything"
                }
                Some(_) => "the view blocks the event loop; no pool or thread count helps until it is moved off it",
                None => "where the view runs could not be told",
            });
            if place == Some(placement::Place::LoopBlocks) {
                eprintln!(
                    "advise {}: would it scale moved to a thread? (the GIL question, the view run on a pool thread)",
                    opts.path
                );
                q1 = pair::measure(&pair::PairSpec {
                    profile,
                    python: &env.python,
                    app: &opts.headroom.app,
                    app_dir: &opts.headroom.app_dir,
                    fixture: opts.headroom.fixture,
                    fixture_dir: &fixture_dir,
                    logs_dir: &logs_dir,
                    lock_path: &lock_path,
                    limits: opts.limits,
                    path: &opts.path,
                    ready_path: opts.headroom.ready.for_route(&opts.path),
                    offload: true,
                })
                .await;
            }
            return Ok::<_, String>((placed, q1, q2));
        }
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
                    profile,
                    python: &env.python,
                    app: &opts.headroom.app,
                    app_dir: &opts.headroom.app_dir,
                    fixture: opts.headroom.fixture,
                    fixture_dir: &fixture_dir,
                    logs_dir: &logs_dir,
                    lock_path: &lock_path,
                    limits: opts.limits,
                    path: &opts.path,
                    ready_path: opts.headroom.ready.for_route(&opts.path),
                    offload: false,
                })
                .await
            }
        };
        eprintln!(
            "advise {}: question 2, is there headroom? (threads {:?})",
            opts.path,
            headroom::THREADS
        );
        let ctx = SweepContext {
            python: &env.python,
            logs_dir: logs_dir.clone(),
            lock_path: lock_path.clone(),
        };
        let settings = headroom::measure(&ctx, &opts.headroom).await;
        let q2 = headroom::read(&settings, headroom::cores());
        Ok::<_, String>((placed, q1, q2))
    };
    let (placed, q1, q2) = match signals::until_signal(work).await {
        Ok(Ok(answers)) => answers,
        Ok(Err(e)) => return unusable(&e),
        Err(signal) => {
            eprintln!(
                "interrupted by {}; every server was stopped",
                signals::name(signal)
            );
            return Finish::interrupted(signal, Vec::new());
        }
    };
    let report = match placed {
        Some(placed) => AdviceReport::asgi(
            profile.name.clone(),
            opts.headroom.app.clone(),
            opts.path.clone(),
            placed,
            q1,
            q2,
            started.elapsed().as_secs_f64(),
        ),
        None => AdviceReport::new(
            profile.name.clone(),
            opts.headroom.app.clone(),
            opts.path.clone(),
            q1,
            q2,
            started.elapsed().as_secs_f64(),
        ),
    };
    match args.out.emit_value(&report) {
        Ok(true) => {}
        Ok(false) => print!("{}", render::render(&report)),
        Err(e) => return unusable(&e),
    }
    if report.advice.is_some() {
        Finish::ok()
    } else {
        eprintln!("cannot judge: {}", report.reason);
        Finish::verdicts(vec![Verdict::CannotJudge])
    }
}
