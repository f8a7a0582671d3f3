//! Validated options: what the CLI asked for, checked once, with messages
//! that name the flag to change.

use std::time::Duration;

use crate::cli::GateArgs;

/// Options for `runner gate`.
#[derive(Debug, Clone)]
pub struct GateOptions {
    pub rows: Vec<String>,
    pub server: String,
    pub json: bool,
    pub trials: Option<u32>,
    pub request_timeout: Duration,
    pub machine_wait: Duration,
}

impl GateOptions {
    pub fn from_args(args: &GateArgs) -> Result<Self, String> {
        if let Some(t) = args.trials {
            if !(1..=1000).contains(&t) {
                return Err(format!("--trials {t}: use a number from 1 to 1000"));
            }
        }
        if !(100..=600_000).contains(&args.request_timeout_ms) {
            return Err(format!(
                "--request-timeout-ms {}: use 100 to 600000",
                args.request_timeout_ms
            ));
        }
        Ok(Self {
            rows: args.rows.clone(),
            server: args.server.clone(),
            json: args.json,
            trials: args.trials,
            request_timeout: Duration::from_millis(args.request_timeout_ms),
            machine_wait: Duration::from_millis(args.machine_wait_ms),
        })
    }
}
