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
use runner::sweep::request::{DEFAULT_PATH, DEFAULT_SERVER};
use runner::verdict::Verdict;

use super::args::{sweep_flag, AppArgs, JsonArgs};
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

    /// Server profile: a name from specs/servers/ or a path to a profile file.
    #[arg(long, default_value = DEFAULT_SERVER, value_name = "NAME|PATH")]
    pub server: String,

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
            server: self.server.clone(),
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
    let opts = match args
        .request()
        .plan(&project.app_dir(), &project.servers_dir())
    {
        Ok(o) => o,
        Err(e) => return unusable(&advise_flag(&e)),
    };
    let mut on = |q: Question| match q {
        Question::Releases => eprintln!(
            "advise {}: question 1, does the work release the GIL?",
            opts.path
        ),
        Question::Headroom => eprintln!(
            "advise {}: question 2, is there headroom? (threads {:?})",
            opts.path,
            headroom::THREADS
        ),
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
