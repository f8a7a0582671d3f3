//! Validated `runner advise` options: what the flags asked for, checked
//! once, with messages that name the flag to change. Parsing is `cli`'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::cli::AdviseArgs;
use crate::gil::{GilBlock, GilPlan, InstrumentChoice};
use crate::host::limits::Limits;
use crate::load::route::Route;
use crate::sweep::options::{ReadyPath, SweepOptions};

/// The sweep's load per setting: short, since only ratios are read.
pub const SWEEP_WARMUP: Duration = Duration::from_millis(300);
pub const SWEEP_DURATION: Duration = Duration::from_millis(1500);
pub const SWEEP_CONNECTIONS: u32 = 8;
/// A setting with fewer good replies than this cannot be read: its window
/// is doubled, up to [`SWEEP_DURATION_MAX`], before advise gives up.
pub const SWEEP_REPLIES_AT_LEAST: u64 = 20;
pub const SWEEP_DURATION_MAX: Duration = Duration::from_secs(6);
/// The warm-up's cap per setting (it ends sooner once every handler thread
/// served the view and the rate settled).
pub const SWEEP_WARMUP_CAP: Duration = Duration::from_secs(6);

/// Validated options.
pub struct AdviseOptions {
    pub server: String,
    pub path: String,
    pub route: Arc<Route>,
    pub app: String,
    pub app_dir: PathBuf,
    /// Whether the app is the fixture.
    pub fixture: bool,
    /// Where the user's servers are polled for readiness (`--ready-path`).
    pub ready: ReadyPath,
    /// The GIL probe's plan, with `--call`.
    pub call: Option<GilPlan>,
    pub limits: Limits,
    pub json: bool,
}

impl AdviseOptions {
    /// `fixture_dir` is the project's fixtures/bareapp.
    pub fn from_args(args: &AdviseArgs, fixture_dir: &Path) -> Result<Self, String> {
        // The app, the route and the limits are checked as the sweep checks
        // them: same flags, same messages.
        let sweep = SweepOptions::from_args(
            &crate::cli::SweepArgs {
                paths: vec![args.path.clone()],
                server: Some(args.server.clone()),
                threads: vec![1],
                connections: SWEEP_CONNECTIONS,
                duration: "1s".into(),
                warmup: "0s".into(),
                app: args.app.clone(),
                app_dir: args.app_dir.clone(),
                ready_path: args.ready_path.clone(),
                request_timeout_ms: args.request_timeout_ms,
                machine_wait_ms: args.machine_wait_ms,
                ..crate::cli::SweepArgs::default_for_row()
            },
            fixture_dir,
        )?;
        let route = sweep.routes[0].clone();
        if !sweep.fixture && route.path.split('?').next() == Some("/work") {
            return Err(format!(
                "--path {}: `/work` is the fixture's route name, whose digests the pair checks; serve your view under another path",
                args.path
            ));
        }
        let call = match &args.call {
            None if !args.args.is_empty() => {
                return Err("--arg: give --call MODULE:FUNCTION too; the arguments are its".into())
            }
            None => None,
            Some(call) => {
                let block = GilBlock {
                    call: Some(call.clone()),
                    args: args
                        .args
                        .iter()
                        .map(|a| crate::gil::plan::PyLiteral::Source(a.clone()))
                        .collect(),
                    instrument: Some(InstrumentChoice::Auto),
                    ..Default::default()
                };
                let flag = |key: &str| match key {
                    "args" => "--arg",
                    _ => "--call",
                };
                Some(
                    block
                        .validate()
                        .map_err(|e| format!("{} {call}: {}", flag(e.key), e.message))?,
                )
            }
        };
        Ok(Self {
            server: sweep.server,
            path: args.path.clone(),
            route,
            app: sweep.app,
            app_dir: sweep.app_dir,
            fixture: sweep.fixture,
            ready: sweep.ready,
            call,
            limits: Limits {
                request: sweep.request_timeout,
                machine_wait: sweep.machine_wait,
            },
            json: args.json,
        })
    }
}
