//! What a gate found: the row it ran, the servers it started, the judgement
//! and the raw run. Reporters and exporters read only this.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use crate::probe::{Judgement, ProbeRun};
use crate::server::pool::ServerRun;
use crate::verdict::Verdict;

/// Where the row is, for reports and annotations.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RowRef {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub probe: String,
    pub file: PathBuf,
    /// The line of `id:` in the row file (1-based).
    #[schemars(range(min = 1))]
    pub line: usize,
}

/// Everything a gate found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GateResult {
    pub row: RowRef,
    /// The servers started, mode under test's first; empty for a probe
    /// that needs no server, or a gate that ended before starting one.
    pub servers: Vec<ServerRun>,
    /// The server profile the gate ran on (`python` for a probe that needs
    /// no server).
    pub profile: String,
    #[serde(flatten)]
    pub judgement: Judgement,
    pub run: Option<ProbeRun>,
    /// The end of the (first failing, else first) server log, kept for
    /// every verdict but a pass.
    pub log_tail: Option<String>,
    pub elapsed_ms: f64,
}

impl GateResult {
    pub fn verdict(&self) -> Verdict {
        self.judgement.verdict
    }

    /// Every server the gate started.
    pub fn servers(&self) -> impl Iterator<Item = &ServerRun> {
        self.servers.iter()
    }

    /// The first server's log, where one was started.
    pub fn first_log(&self) -> Option<&std::path::Path> {
        self.servers.first().map(|s| s.log.as_path())
    }
}
