//! `--json-file PATH`: the same document `runner gate --json` prints, as a
//! file. Its shape is runner/schema/report.schema.json.

use super::{ExportInput, Exporter};
use crate::report::json;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, input: &ExportInput<'_>) -> String {
        let mut text = json::render(input.results, input.interrupted.cloned());
        text.push('\n');
        text
    }
}
