//! Flag groups several commands share (`#[command(flatten)]`), and the
//! flag each engine request field is spelled as on the command line.

use std::path::Path;

use clap::Args;

use runner::gate::request::{RunField, RunPlan, RunRequest};
use runner::host::limits::Limits;
use runner::request::FieldError;
use runner::sweep::request::SweepField;

/// How gates run: shared by every command that runs them.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run exactly N trials per gate (default: the row's `trials` budget;
    /// sign-off: the row's `trials.max`).
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    /// Bound on any one request, and on each capacity-control sample.
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    /// How long a gate waits for another gate on this machine (they take
    /// turns: two at once would measure each other).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

impl RunArgs {
    pub fn request(&self) -> RunRequest {
        RunRequest {
            trials: self.trials,
            request_timeout_ms: self.request_timeout_ms,
            machine_wait_ms: self.machine_wait_ms,
        }
    }

    /// The checked request, or the error naming the flag.
    pub fn plan(&self) -> Result<RunPlan, String> {
        self.request().plan().map_err(|e| run_flag(&e))
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
    }
}

/// A report file must be a file path (its folder is created when missing).
pub fn report_path(flag: &str, path: Option<&Path>) -> Result<(), String> {
    match path {
        Some(p) if p.as_os_str().is_empty() => Err(format!("{flag}: give a file path")),
        Some(p) if p.is_dir() => Err(format!(
            "{flag} {}: is a folder; give a file path inside it",
            p.display()
        )),
        _ => Ok(()),
    }
}
