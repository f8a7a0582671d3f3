//! The JSON report (`--json`): every gate's row, server, verdict, figures and
//! raw trial times, in one document. Its JSON Schema is generated from these
//! types (`runner schema report`, checked in as
//! runner/schema/report.schema.json; a test fails when it is stale).

use schemars::JsonSchema;
use serde::Serialize;

use crate::gate::result::GateResult;

/// The document `--json` prints.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report<'a> {
    pub runner_version: &'static str,
    pub interrupted: Option<Interrupted>,
    pub results: &'a [GateResult],
}

/// Where a run was when a signal stopped it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
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

/// The JSON Schema of the report (runner/schema/report.schema.json).
pub fn report_schema() -> String {
    let schema = schemars::schema_for!(Report<'static>);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}
