//! The flags of `runner advise`; the run is `runner::advise::command`.

use clap::Args;

use runner::advise::command::{self, AdviseCommand};
use runner::advise::input::{AdviseField, AdviseInput};
use runner::input::FieldError;
use runner::server::choose::server_name;
use runner::session::Session;
use runner::sweep::input::DEFAULT_PATH;

use super::args::{sweep_flag, AppArgs, JsonArgs, LimitArgs};
use super::console::Std;
use super::{or_unusable, Finish};

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

    #[command(flatten)]
    pub limits: LimitArgs,
}

impl AdviseArgs {
    fn input(&self) -> AdviseInput {
        AdviseInput {
            path: self.path.clone(),
            call: self.call.clone(),
            args: self.args.clone(),
            server: server_name(self.server.as_deref(), self.app.interface),
            app: self.app.app.clone(),
            app_dir: self.app.app_dir.clone(),
            ready_path: self.app.ready_path.clone(),
            env: self.app.env(),
            ready_timeout_ms: self.app.ready_timeout_ms,
            request_timeout_ms: self.limits.request_timeout_ms,
            machine_wait_ms: self.limits.machine_wait_ms,
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
    let input = AdviseCommand {
        input: args.input(),
        server_given: args.server.is_some(),
        interface: args.app.interface,
        out: args.out.out(),
        name: advise_flag,
    };
    or_unusable(command::run(session, &input, &Std).await)
}
