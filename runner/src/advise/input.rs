//! What `runner advise` asks for: [`AdviseInput`], built by the CLI,
//! checked once into an [`AdvisePlan`]. The app, the route and the limits
//! are checked as a sweep's are (the headroom question is a sweep); a bad
//! value is a [`FieldError`] naming the [`AdviseField`], which the CLI turns
//! into the flag.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::host::limits::Limits;
use crate::input::FieldError;
use crate::load::route::Route;
use crate::probe::gil::{GilBlock, GilPlan, InstrumentChoice};
use crate::sweep::input::{SweepField, SweepInput, DEFAULT_PATH, DEFAULT_SERVER};
use crate::sweep::SweepPlan;

use super::headroom;

/// The headroom sweep's load per setting: short, since only ratios are read.
pub const SWEEP_WARMUP: &str = "300ms";
pub const SWEEP_DURATION: &str = "1500ms";
pub const SWEEP_CONNECTIONS: u32 = 8;
/// The warm-up's cap per setting (it ends sooner once every handler thread
/// served the view and the rate settled).
pub const SWEEP_WARMUP_CAP: std::time::Duration = std::time::Duration::from_secs(6);

/// What to advise on.
#[derive(Debug, Clone)]
pub struct AdviseInput {
    /// The view.
    pub path: String,
    /// Answer question 1 with the GIL probe of this call instead of a pair.
    pub call: Option<String>,
    /// The call's arguments, as Python literals.
    pub args: Vec<String>,
    pub server: String,
    pub app: Option<String>,
    pub app_dir: Option<PathBuf>,
    /// Where the server is polled for readiness; default: the view itself
    /// with `app`, the profile's `ready.path` otherwise.
    pub ready_path: Option<String>,
    /// The server's environment over its profile's, and its readiness
    /// bound: the app's settings (`SweepInput::env`).
    pub env: std::collections::BTreeMap<String, String>,
    pub ready_timeout_ms: Option<u64>,
    pub request_timeout_ms: u64,
    pub machine_wait_ms: u64,
}

impl Default for AdviseInput {
    fn default() -> Self {
        Self {
            path: DEFAULT_PATH.into(),
            call: None,
            args: Vec::new(),
            server: DEFAULT_SERVER.into(),
            app: None,
            app_dir: None,
            ready_path: None,
            env: Default::default(),
            ready_timeout_ms: None,
            request_timeout_ms: Limits::DEFAULT_REQUEST_MS,
            machine_wait_ms: Limits::DEFAULT_MACHINE_WAIT_MS,
        }
    }
}

/// A field of [`AdviseInput`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdviseField {
    /// A field advise shares with the sweep (`Paths` is `path`).
    Sweep(SweepField),
    Call,
    Args,
}

/// A checked input.
pub struct AdvisePlan {
    pub path: String,
    pub route: Arc<Route>,
    /// The GIL probe's plan, with a call.
    pub call: Option<GilPlan>,
    pub limits: Limits,
    /// Question 2's sweep over [`headroom::THREADS`]; its profile, app and
    /// app folder are the pair's too.
    pub headroom: SweepPlan,
}

impl AdviseInput {
    /// `fixture_dir` is the project's fixtures/bareapp, `servers_dir` its
    /// specs/servers.
    pub fn plan(
        &self,
        fixture_dir: &Path,
        servers_dir: &Path,
    ) -> Result<AdvisePlan, FieldError<AdviseField>> {
        let sweep = SweepInput {
            server: self.server.clone(),
            paths: vec![self.path.clone()],
            threads: headroom::THREADS.to_vec(),
            workers: Vec::new(),
            connections: SWEEP_CONNECTIONS,
            duration: SWEEP_DURATION.into(),
            warmup: SWEEP_WARMUP.into(),
            request_timeout_ms: self.request_timeout_ms,
            app: self.app.clone(),
            app_dir: self.app_dir.clone(),
            ready_path: self.ready_path.clone(),
            env: self.env.clone(),
            ready_timeout_ms: self.ready_timeout_ms,
            machine_wait_ms: self.machine_wait_ms,
        }
        .plan(fixture_dir, servers_dir)
        .map_err(|e| e.map(AdviseField::Sweep))?;
        let sweep = SweepPlan {
            warmup_cap: SWEEP_WARMUP_CAP,
            ..sweep
        };
        let route = sweep.routes[0].clone();
        if !sweep.fixture && route.path.split('?').next() == Some("/work") {
            return Err(FieldError::new(
                AdviseField::Sweep(SweepField::Paths),
                "`/work` is the fixture's route name, whose digests the pair checks; serve your view under another path",
            )
            .value(&self.path));
        }
        let call = match &self.call {
            None if !self.args.is_empty() => {
                return Err(FieldError::new(
                    AdviseField::Call,
                    "missing: give the call the arguments are for",
                ))
            }
            None => None,
            Some(call) => {
                let block = GilBlock {
                    call: Some(call.clone()),
                    args: self
                        .args
                        .iter()
                        .map(|a| crate::probe::gil::plan::PyLiteral::Source(a.clone()))
                        .collect(),
                    instrument: Some(InstrumentChoice::Auto),
                    ..Default::default()
                };
                let field = |key: &str| match key {
                    "args" => AdviseField::Args,
                    _ => AdviseField::Call,
                };
                Some(
                    block
                        .validate()
                        .map_err(|e| FieldError::new(field(e.key), e.message).value(call))?,
                )
            }
        };
        Ok(AdvisePlan {
            path: self.path.clone(),
            route,
            call,
            limits: Limits {
                request: sweep.request_timeout,
                machine_wait: sweep.machine_wait,
            },
            headroom: sweep,
        })
    }
}
