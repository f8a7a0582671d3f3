//! The measurements a row can run: one module per probe kind behind one
//! seam, the [`Probe`] trait, and one registry ([`registry`]) that lists the
//! kinds and generates everything that enumerates them (the row's `probe:`
//! values and blocks, the plan, run and figures enums, the dispatch).
//!
//! Probes measure and return data; they never print and never decide exit
//! codes. Adding a kind: a module here implementing [`Probe`], one line in
//! `registry.rs`, a row in `specs/`, and the fixture route it needs (see
//! specs/README.md, "Adding a probe kind").

pub mod trial;

pub mod census;
pub mod gil;
pub mod keepalive;
pub mod pair_ratio;
pub mod registry;
pub mod seeds;
pub mod spread;

use std::fmt::Debug;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::host::limits::Limits;
use crate::host::project::Project;
use crate::host::pyenv::PythonEnv;
use crate::probe::trial::ProbeEvent;
use crate::server::pool::{Ready, ServerPool, Target};
use crate::spec::check::ErrAt;
use crate::spec::{ServerSettings, SpecError, Trials};
use crate::verdict::{Judged, Stop};

pub use registry::{Figures, Judgement, Plan, ProbeKind, ProbeRun};

/// What a gate hands its probe.
pub struct ProbeCtx<'a> {
    pub project: &'a Project,
    pub python: &'a PythonEnv,
    pub limits: Limits,
    /// The row's trial budget (after `--trials`).
    pub trials: Trials,
    /// The row's own server settings (`server:`).
    pub row_server: &'a ServerSettings,
    /// The folder of the app the gate's servers serve (its fork and
    /// capacity controls run there too).
    pub app_dir: std::path::PathBuf,
    /// The gate's servers, started on demand; None for a probe that needs
    /// no server ([`Probe::servers`] is empty).
    pub servers: Option<&'a mut ServerPool>,
    pub emit: &'a mut dyn FnMut(ProbeEvent),
}

impl ProbeCtx<'_> {
    /// A ready server with `settings` (started on first use).
    pub async fn server(&mut self, settings: &ServerSettings) -> Result<Target, Stop> {
        match self.servers.as_deref_mut() {
            Some(pool) => {
                let emit = &mut *self.emit;
                let mut ready = |r: Ready| {
                    emit(ProbeEvent::ServerReady {
                        after: r.after,
                        pgid: r.pgid,
                    })
                };
                pool.get(settings, &mut ready).await
            }
            None => Err(Stop::cannot_judge(
                "this probe asked for a server, but declared none in Probe::servers",
            )),
        }
    }
}

/// Stops a probe whose pinned extra packages are not in `python`: not
/// applicable, naming what is missing and the command that installs it.
pub fn require_installed(
    python: &std::path::Path,
    requires: &[crate::host::requires::Requirement],
) -> Result<(), Stop> {
    use crate::host::requires;
    let missing = requires::missing(python, requires).map_err(|e| {
        Stop::cannot_judge(format!(
            "cannot ask {} what is installed: {e}",
            python.display()
        ))
    })?;
    if missing.is_empty() {
        return Ok(());
    }
    Err(Stop {
        verdict: crate::verdict::Verdict::NotApplicable,
        reason: format!(
            "{}; or run `runner prepare --rows all`",
            requires::missing_reason(python, &missing)
        ),
        log_tail: None,
    })
}

/// One probe kind. Implemented by a unit struct per kind; the registry
/// dispatches to it statically.
///
/// All futures here run on the runner's single-threaded runtime, so the
/// trait's async fn needs no `Send` bound.
#[allow(async_fn_in_trait)]
pub trait Probe {
    /// The row's block for this kind, as written (strict: unknown keys are
    /// errors; its doc comments become the row schema's descriptions).
    type Block: DeserializeOwned + Serialize + JsonSchema + Clone + Debug;
    /// The block, validated.
    type Plan: Serialize + Clone + Debug;
    /// What the probe measured: raw figures, or why it broke.
    type Run: Serialize + JsonSchema + Clone + Debug;
    /// The judged figures.
    type Figures: Serialize + JsonSchema + Clone + Debug;

    /// What the cells of a matrix mean for this kind (its headline).
    const LEGEND: &'static str;

    /// Validates the block at `at` (`["pair-ratio"]`); every error names its
    /// key through `err`, which adds the file, line and column.
    fn validate(
        block: &Self::Block,
        at: &[&str],
        row_server: &ServerSettings,
        err: &ErrAt<'_>,
    ) -> Result<Self::Plan, SpecError>;

    /// The server settings the plan runs on, mode under test first: none
    /// (no server: the probe measures a Python call alone), one, or many.
    fn servers(plan: &Self::Plan, row_server: &ServerSettings) -> Vec<ServerSettings>;

    /// Measures, on the shared trial loop ([`crate::probe::trial::TrialLoop`]),
    /// asking [`Probe::judge`] after each trial whether the figures settle.
    async fn measure(plan: &Self::Plan, ctx: &mut ProbeCtx<'_>) -> Result<Self::Run, Stop>;

    /// Judges a run: provisional while `unsettled` says more trials could
    /// change it; the gate concludes it when the loop ends.
    fn judge(plan: &Self::Plan, trials: Trials, run: &Self::Run) -> Judged<Self::Figures>;

    /// The figures as the lines of a terminal table.
    fn render(figures: &Self::Figures, out: &mut String);

    /// The figures worth a spread across runs (`runner stress`), named as
    /// the report names them (a mode's ratio as `NAME ratio`, its witness
    /// as `NAME P`); the row's bounds are constants and left out.
    fn numbers(_figures: &Self::Figures) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// Extra Python packages the plan needs, pinned; `runner prepare --rows`
    /// installs them into the runner's own venv.
    fn requires(_plan: &Self::Plan) -> Vec<crate::host::requires::Requirement> {
        Vec::new()
    }

    /// The fixture app the plan's servers serve, a folder of fixtures/
    /// (`modelapp`); None for the project's own app (fixtures/bareapp).
    fn app(_plan: &Self::Plan) -> Option<String> {
        None
    }
}
/// The fixtures that keep fixtures/bareapp's contract: `/work` with its
/// digests and `capacity.py` (`asgiapp`, its ASGI twin, also has `/slow`,
/// `/runtime` and `forkcheck.py`; `fastapiapp` has `/work` only, for
/// pair-ratio). A row's `app:` may name one of these.
pub const WORK_APPS: &[&str] = &["bareapp", "asgiapp", "fastapiapp"];

/// A block's `app:`, checked to be one of [`WORK_APPS`].
pub fn work_app(
    app: Option<&String>,
    at: &[&str],
    err: &crate::spec::check::ErrAt<'_>,
) -> Result<Option<String>, crate::spec::SpecError> {
    match app {
        None => Ok(None),
        Some(app) if WORK_APPS.contains(&app.as_str()) => Ok(Some(app.clone())),
        Some(app) => Err(err(
            &crate::spec::check::key(at, "app"),
            format!(
                "{app:?} is not a fixture with bareapp's /work contract; use one of {}",
                WORK_APPS.join(", ")
            ),
        )),
    }
}
