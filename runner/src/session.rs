//! One measuring session on this machine, which every command that measures
//! (gate, matrix, signoff, stress, gil-probe, sweep, advise) and the gates
//! harness take instead of rebuilding its pieces:
//!
//! - the project and its paths;
//! - the machine lock ([`Session::lock`], the one place it is built: two
//!   measurements at once would each read the other as load);
//! - the Python environment, prepared on first use ([`Session::python`]),
//!   its progress told once to the session's sink (the words are
//!   `EnvProgress`'s own);
//! - cancellation: [`Session::cancellable`] stops work at SIGINT or SIGTERM,
//!   dropping every process guard inside it.
//!
//! It measures nothing and prints nothing.

use std::future::Future;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use crate::host::machine_lock::MachineLock;
use crate::host::project::Project;
use crate::host::pyenv::{self, EnvProgress, PythonEnv};
use crate::host::signals;

/// The file in the state folder every measurement on this machine locks.
const MACHINE_LOCK: &str = "measure.lock";

/// Where the environment's progress goes (a reporter; quiet by default).
type Sink = Box<dyn Fn(&EnvProgress) + Send + Sync>;

/// See the module docs.
pub struct Session {
    project: Project,
    /// `--python`: an interpreter of the user's instead of the runner's venv.
    python: Option<PathBuf>,
    env: OnceLock<Result<PythonEnv, String>>,
    sink: Sink,
}

impl Session {
    /// A session on `project`, with the user's interpreter when given.
    pub fn new(project: Project, python: Option<PathBuf>) -> Self {
        Self {
            project,
            python,
            env: OnceLock::new(),
            sink: Box::new(|_| {}),
        }
    }

    /// Tells `sink` how preparing the environment goes.
    pub fn with_sink(mut self, sink: impl Fn(&EnvProgress) + Send + Sync + 'static) -> Self {
        self.sink = Box::new(sink);
        self
    }

    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The interpreter `--python` names, if any.
    pub fn python_override(&self) -> Option<&std::path::Path> {
        self.python.as_deref()
    }

    /// The prepared interpreter: prepared on the first call (creating or
    /// updating the venv, the sink told), the same answer after.
    pub fn python(&self) -> Result<&PythonEnv, String> {
        self.env
            .get_or_init(|| {
                pyenv::prepare(&self.project, self.python.as_deref(), &mut |p| {
                    (self.sink)(&p)
                })
                .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The interpreter, if it has been prepared.
    pub fn prepared(&self) -> Option<&PythonEnv> {
        self.env.get().and_then(|e| e.as_ref().ok())
    }

    /// This machine's measuring turn, waiting at most `wait` for another
    /// gate, sweep or probe to finish; the error says which file and flag.
    pub async fn lock(&self, wait: Duration) -> Result<MachineLock, String> {
        MachineLock::take(&self.project.state_dir().join(MACHINE_LOCK), wait).await
    }

    /// Runs `work` to its end, or stops it at the first SIGINT or SIGTERM
    /// (every process it started stopped with it) and returns the signal.
    pub async fn cancellable<F: Future>(&self, work: F) -> Result<F::Output, i32> {
        signals::until_signal(work).await
    }
}
