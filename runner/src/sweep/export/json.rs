//! `--json PATH`: the whole [`SweepResult`], every setting with its load,
//! latency, errors by kind (with a first message each), CPU and server.

use crate::sweep::SweepResult;

pub fn render(result: &SweepResult) -> String {
    // Plain data with string keys: serialising it cannot fail.
    let mut text = serde_json::to_string_pretty(result)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot render the sweep: {e}\"}}"));
    text.push('\n');
    text
}
