//! `runner advise --path PATH [--call MODULE:FUNCTION [--arg LITERAL]...]
//! [--server S] [--app MODULE:ATTR --app-dir DIR] [--json]`: the
//! deployment rule for one view (see `runner::advise`, docs/deployment-rule.md).
//!
//! Exit code: 0 when it advises; 2 when a figure could not be had (no
//! scheduler accounting, a reading between its bands, a sweep with errors,
//! a server that would not start) or the input is unusable: no advice is
//! ever a guess. 130/143 when interrupted (every server stopped first).

use clap::Args;

use runner::advise::request::{AdviseField, AdviseRequest};
use runner::advise::run::{advise, Question};
use runner::advise::{headroom, render};
use runner::host::limits::Limits;
use runner::host::signals;
use runner::request::FieldError;
use runner::session::Session;
use runner::sweep::request::DEFAULT_PATH;
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
            env: self.app.env(),
            ready_timeout_ms: self.app.ready_timeout_ms,
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

pub async fn run(session: &Session, args: &AdviseArgs) -> Finish {
    let project = session.project();
    if let Err(e) = args.out.check() {
        return unusable(&e);
    }
    let mut request = args.request();
    let fixture_dir = interface::fixture_dir(project, &request.server);
    let mut opts = match request.plan(&fixture_dir, &project.servers_dir()) {
        Ok(o) => o,
        Err(e) => return unusable(&advise_flag(&e)),
    };
    // The user's app: served on a server that speaks its interface, found
    // by importing it, or refused before anything starts.
    if !opts.headroom.fixture {
        let env = match session.python() {
            Ok(env) => env,
            Err(e) => return unusable(&e),
        };
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
            let fixture_dir = interface::fixture_dir(project, &request.server);
            opts = match request.plan(&fixture_dir, &project.servers_dir()) {
                Ok(o) => o,
                Err(e) => return unusable(&advise_flag(&e)),
            };
        }
    }
    let mut on = |q: Question| {
        match q {
        Question::Placement => eprintln!(
            "advise {}: where does the view run, on the event loop or in the threadpool?",
            opts.path
        ),
        Question::MovedToThread => eprintln!(
            "advise {}: would it scale moved to a thread? (the GIL question, the view run on a pool thread)",
            opts.path
        ),
        Question::Releases => eprintln!(
            "advise {}: question 1, does the work release the GIL?",
            opts.path
        ),
        Question::Headroom => eprintln!(
            "advise {}: question 2, is there headroom? (threads {:?})",
            opts.path,
            headroom::THREADS
        ),
    }
    };
    let report = match session.cancellable(advise(session, &opts, &mut on)).await {
        Ok(Ok(report)) => report,
        Ok(Err(e)) => return unusable(&e),
        Err(signal) => {
            eprintln!(
                "interrupted by {}; every server was stopped",
                signals::name(signal)
            );
            return Finish::interrupted(signal, Vec::new());
        }
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
