//! Flag groups several commands share (`#[command(flatten)]`), and the
//! flag each engine input field is spelled as on the command line.

use clap::Args;

use runner::console::JsonOut;
use runner::gate::input::{RunField, RunInput, RunPlan};
use runner::host::limits::Limits;
use runner::input::FieldError;
use runner::sweep::input::SweepField;

/// The bounds of a measurement: shared by every command that measures.
#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Bound on any one request (and on opening a connection, and on each
    /// capacity-control sample).
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    /// How long to wait for a gate, sweep or probe running on this machine
    /// (they take turns: two at once would measure each other).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

/// How gates run: shared by every command that runs them.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run exactly N trials per gate (default: the row's `trials` budget;
    /// sign-off: the row's `trials.max`).
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    #[command(flatten)]
    pub limits: LimitArgs,
}

impl RunArgs {
    /// The checked request, or the error naming the flag.
    pub fn plan(&self) -> Result<RunPlan, String> {
        RunInput {
            trials: self.trials,
            request_timeout_ms: self.limits.request_timeout_ms,
            machine_wait_ms: self.limits.machine_wait_ms,
        }
        .plan()
        .map_err(|e| run_flag(&e))
    }
}

/// A run field's error, named by its flag.
pub fn run_flag(e: &FieldError<RunField>) -> String {
    e.named(match e.field {
        RunField::Trials => "--trials",
        RunField::RequestTimeoutMs => "--request-timeout-ms",
    })
}

/// The flag a sweep field is given with (`runner sweep`, `runner advise`).
pub fn sweep_flag(field: SweepField) -> &'static str {
    match field {
        SweepField::Server => "--server",
        SweepField::Paths => "--path",
        SweepField::Threads => "--threads",
        SweepField::Workers => "--workers",
        SweepField::Connections => "--connections",
        SweepField::Duration => "--duration",
        SweepField::Warmup => "--warmup",
        SweepField::RequestTimeoutMs => "--request-timeout-ms",
        SweepField::App => "--app",
        SweepField::AppDir => "--app-dir",
        SweepField::ReadyPath => "--ready-path",
        SweepField::Env => "--env",
        SweepField::ReadyTimeoutMs => "--ready-timeout-ms",
    }
}

/// `--interface wsgi|asgi`, for clap.
pub fn parse_interface(text: &str) -> Result<runner::spec::Interface, String> {
    runner::spec::Interface::parse(text).ok_or_else(|| format!("{text:?}: use wsgi or asgi"))
}

/// The app a server serves: the user's own, or the fixture.
#[derive(Debug, Default, Args)]
pub struct AppArgs {
    /// Your own WSGI or ASGI app, as MODULE:ATTR (needs --app-dir); the
    /// fixture (fixtures/bareapp, or fixtures/asgiapp on an ASGI server)
    /// by default. Its interface is found by importing it.
    #[arg(long, value_name = "MODULE:ATTR")]
    pub app: Option<String>,

    /// The app's interface, instead of importing it to find out; with no
    /// --server, it also picks the server (granian for wsgi, uvicorn for
    /// asgi).
    #[arg(long, value_name = "wsgi|asgi", value_parser = parse_interface)]
    pub interface: Option<runner::spec::Interface>,

    /// The folder --app is imported from (the server's working directory).
    #[arg(long, value_name = "DIR")]
    pub app_dir: Option<std::path::PathBuf>,

    /// Readiness: the path polled until the server answers (any status,
    /// unless the profile asks for one in `ready.status`). Default: the
    /// route under test with --app, the profile's `ready.path` otherwise.
    #[arg(long, value_name = "PATH")]
    pub ready_path: Option<String>,

    /// An environment variable the server starts with, over its profile's
    /// (repeatable): the app's own settings, like OPENBLAS_NUM_THREADS=1.
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = name_value)]
    pub env: Vec<(String, String)>,

    /// How long the server may take to answer its first request, in place
    /// of its profile's `ready.timeout_ms` (an app that loads a model at
    /// import).
    #[arg(long, value_name = "MS")]
    pub ready_timeout_ms: Option<u64>,
}

impl AppArgs {
    /// `--env`, as the input's map (a later NAME wins).
    pub fn env(&self) -> std::collections::BTreeMap<String, String> {
        self.env.iter().cloned().collect()
    }
}

/// `NAME=VALUE` of `--env`.
fn name_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, value)) => Ok((name.to_string(), value.to_string())),
        None => Err(format!(
            "give NAME=VALUE, like OPENBLAS_NUM_THREADS=1 (not {s:?})"
        )),
    }
}

/// `--json` took a PATH in `sweep` and `matrix` before it meant "print":
/// an old `--json out.json` now leaves `out.json` as a ROW, which is refused
/// here with the new spelling rather than read as a row file.
pub fn json_is_a_flag_now<'a>(
    json: bool,
    rows: impl IntoIterator<Item = &'a String>,
) -> Result<(), String> {
    match rows.into_iter().find(|r| r.ends_with(".json")) {
        Some(row) if json => Err(format!(
            "--json {row}: --json prints the report on stdout now and takes no path; write it with --json-file {row}"
        )),
        _ => Ok(()),
    }
}

/// The JSON report, as every command offers it: `--json` prints it on
/// stdout (instead of the text; progress stays on stderr), `--json-file
/// PATH` writes it.
#[derive(Debug, Default, Args)]
pub struct JsonArgs {
    /// Print the JSON report on stdout instead of the text (progress still
    /// goes to stderr).
    #[arg(long)]
    pub json: bool,

    /// Also write the JSON report (the `--json` document) to PATH.
    #[arg(long, value_name = "PATH")]
    pub json_file: Option<std::path::PathBuf>,
}

impl JsonArgs {
    /// The engine's JSON output.
    pub fn out(&self) -> JsonOut {
        JsonOut {
            json: self.json,
            file: self.json_file.clone(),
        }
    }
}
