//! The sign-off bundle (`runner signoff`): report.json, report.md,
//! junit.xml, env.json (the machine's fingerprint) and every server log the
//! results name (logs/), written into one folder a release can be judged
//! by later.

use std::path::{Path, PathBuf};

use crate::gate::result::GateResult;
use crate::report::export::json::JsonExporter;
use crate::report::export::junit::JunitExporter;
use crate::report::export::markdown::MarkdownExporter;
use crate::report::export::{ExportInput, Exporter};
use crate::report::fingerprint::Fingerprint;

/// Writes the bundle; returns each file (relative to `out`) and its size.
pub fn write(
    out: &Path,
    input: &ExportInput<'_>,
    fingerprint: Option<&Fingerprint>,
) -> Result<Vec<(String, u64)>, String> {
    let mut written = Vec::new();
    let mut put = |name: &str, text: &str| -> Result<(), String> {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push((name.to_string(), text.len() as u64));
        Ok(())
    };
    put("report.json", &JsonExporter.render(input))?;
    let markdown = MarkdownExporter {
        preamble: fingerprint.map(Fingerprint::markdown),
    };
    put("report.md", &markdown.render(input))?;
    put("junit.xml", &JunitExporter.render(input))?;
    match fingerprint {
        Some(f) => put("env.json", &f.to_json())?,
        // Interrupted while preparing Python: nothing was measured, and
        // the bundle says why rather than leaving env.json out silently.
        None => put(
            "env.json",
            "{\"error\": \"the run stopped before the environment was read\"}\n",
        )?,
    }
    let logs = out.join("logs");
    for log in server_logs(input.results) {
        let Some(name) = log.file_name() else {
            continue;
        };
        if !log.is_file() {
            continue;
        }
        std::fs::create_dir_all(&logs)
            .map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
        let to = logs.join(name);
        let bytes = std::fs::copy(&log, &to)
            .map_err(|e| format!("cannot copy {} to {}: {e}", log.display(), to.display()))?;
        written.push((format!("logs/{}", name.to_string_lossy()), bytes));
    }
    Ok(written)
}

/// Every server log the results name, once each, in order.
fn server_logs(results: &[GateResult]) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = Vec::new();
    for r in results {
        for s in r.servers() {
            if !logs.contains(&s.log) {
                logs.push(s.log.clone());
            }
        }
    }
    logs
}
