//! Running one trial's gate through the runner library: the Python venv is
//! prepared once per process (the first trial that runs does it; `--list`
//! never does), each gate runs in its own current-thread tokio runtime, and
//! SIGINT/SIGTERM during a gate drops it, which stops its servers' process
//! groups. After a signal the remaining trials fail at once as "not run",
//! and `main` exits 130/143.
//!
//! Gates take turns on the machine through the runner's own lock (the
//! session's), so several test threads are safe, only pointless.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

use runner::gate::result::GateResult;
use runner::gate::{run_gate, GateContext};
use runner::host::limits::Limits;
use runner::host::project::Project;
use runner::host::pyenv::PythonEnv;
use runner::host::signals;
use runner::session::Session;
use runner::spec::row::Row;
use runner::spec::Profile;

/// The runner's own defaults (`runner gate --help`).
pub const LIMITS: Limits = Limits::DEFAULT;

/// What the trials of one harness process share.
pub struct Shared {
    pub project: Project,
    session: Session,
    interrupted: AtomicI32,
    results: Mutex<Vec<GateResult>>,
}

impl Shared {
    pub fn new(project: Project) -> Self {
        Self {
            // The environment's progress on stderr, in its own words.
            session: Session::new(project.clone(), None).with_sink(|p| eprintln!("gates: {p}")),
            project,
            interrupted: AtomicI32::new(0),
            results: Mutex::new(Vec::new()),
        }
    }

    /// The signal that stopped a gate, if one did.
    pub fn interrupted(&self) -> Option<i32> {
        match self.interrupted.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    /// Every gate result so far, in the order they finished.
    pub fn results(&self) -> Vec<GateResult> {
        self.results.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The prepared interpreter (preparing it on first use; progress on stderr).
    fn python(&self) -> Result<PythonEnv, String> {
        self.session.python().cloned()
    }

    /// Runs `row` on `profile`; `Err` when the gate could not run at all.
    pub fn run(&self, row: &Row, profile: &Profile) -> Result<GateResult, String> {
        if let Some(signal) = self.interrupted() {
            return Err(format!("not run: interrupted by {}", signals::name(signal)));
        }
        let env = self
            .python()
            .map_err(|e| format!("cannot judge: no Python environment: {e}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        let ctx = GateContext {
            session: &self.session,
            python: &env,
            limits: LIMITS,
        };
        let mut quiet = |_: runner::gate::event::Event<'_>| {};
        let work = run_gate(&ctx, row, profile, &mut quiet);
        match runtime.block_on(signals::until_signal(work)) {
            Ok(result) => {
                if let Ok(mut all) = self.results.lock() {
                    all.push(result.clone());
                }
                Ok(result)
            }
            Err(signal) => {
                self.interrupted.store(signal, Ordering::SeqCst);
                Err(format!(
                    "interrupted by {} during {} on {}; its servers were stopped",
                    signals::name(signal),
                    row.id,
                    profile.name
                ))
            }
        }
    }
}
