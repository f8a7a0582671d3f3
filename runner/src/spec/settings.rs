//! Server settings: the knobs a row sets (`server:`, a mode's `server:`)
//! and a profile maps to flags.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the server is started: the knobs a profile maps to flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Handler threads per worker (`--blocking-threads` on granian).
    pub threads: Option<u32>,
    /// Worker processes.
    pub workers: Option<u32>,
    /// Whether the app is imported once in the master and inherited by
    /// forked workers (`true`), or imported by each worker itself, by spawn
    /// or by import after fork (`false`). Unset: the server's default.
    pub preload: Option<bool>,
    /// Extra environment for the server process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

impl ServerSettings {
    /// `self` with every knob `over` sets taken from `over`.
    pub fn overlaid(&self, over: &ServerSettings) -> ServerSettings {
        let mut env = self.env.clone();
        env.extend(over.env.clone());
        ServerSettings {
            threads: over.threads.or(self.threads),
            workers: over.workers.or(self.workers),
            preload: over.preload.or(self.preload),
            env,
        }
    }

    /// Short form for reports: `threads=2 workers=1`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = self.threads {
            parts.push(format!("threads={t}"));
        }
        if let Some(w) = self.workers {
            parts.push(format!("workers={w}"));
        }
        if let Some(p) = self.preload {
            parts.push(format!("preload={p}"));
        }
        if parts.is_empty() {
            "server defaults".into()
        } else {
            parts.join(" ")
        }
    }
}
