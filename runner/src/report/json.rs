//! The JSON report (`--json`): every gate's row, server, verdict, figures and
//! raw trial times, in one document.

use serde::Serialize;

use crate::gate::GateResult;

/// The document `--json` prints.
#[derive(Serialize)]
pub struct Report<'a> {
    pub runner_version: &'static str,
    pub interrupted: Option<Interrupted>,
    pub results: &'a [GateResult],
}

/// Where a run was when a signal stopped it.
#[derive(Debug, Clone, Serialize)]
pub struct Interrupted {
    pub signal: String,
    /// The gate in progress (`E19 on granian`), if any.
    pub during: Option<String>,
    /// Its server's process group, stopped before the report was written.
    pub server_pgid: Option<i32>,
}

pub fn render(results: &[GateResult], interrupted: Option<Interrupted>) -> String {
    let report = Report {
        runner_version: env!("CARGO_PKG_VERSION"),
        interrupted,
        results,
    };
    serde_json::to_string_pretty(&report)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot render the report: {e}\"}}"))
}
