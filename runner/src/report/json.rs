//! The JSON report (`--json`): every gate's row, server, verdict, figures and
//! raw trial times, in one document. Its JSON Schema is generated from these
//! types (`runner schema report`, checked in as
//! runner/schema/report.schema.json; a test fails when it is stale).

use schemars::JsonSchema;
use serde::Serialize;

pub use crate::gate::batch::Interrupted;
use crate::gate::result::GateResult;
use crate::server::status::ServerStatus;

/// The document `--json` prints.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report<'a> {
    pub runner_version: &'static str,
    pub interrupted: Option<Interrupted>,
    /// The server the gates ran on (and `python`, for rows that run no
    /// server), with its version: what `matrix --from` shows in its header.
    #[serde(default, skip_serializing_if = "<[ServerStatus]>::is_empty")]
    pub servers: &'a [ServerStatus],
    pub results: &'a [GateResult],
}

pub fn render(
    results: &[GateResult],
    interrupted: Option<Interrupted>,
    servers: &[ServerStatus],
) -> String {
    let report = Report {
        runner_version: env!("CARGO_PKG_VERSION"),
        interrupted,
        servers,
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
