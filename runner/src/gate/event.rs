//! Events a gate emits as it works; reporters turn them into output. The
//! engine never prints. (The Python environment's progress goes to the
//! session's sink: `crate::session`.)

use std::time::Duration;

use crate::gate::result::GateResult;
use crate::probe::trial::TrialProgress;

/// Something that happened during a run.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// A gate is starting its server.
    GateStarted {
        row: &'a str,
        server: &'a str,
        index: usize,
        of: usize,
    },
    /// The server answered its readiness check.
    ServerReady {
        row: &'a str,
        after: Duration,
        pgid: i32,
    },
    /// A trial finished.
    Trial {
        row: &'a str,
        progress: TrialProgress,
    },
    /// A gate has its verdict.
    GateFinished(&'a GateResult),
}
