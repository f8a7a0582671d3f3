//! Bounds on waiting: every request and every wait for the machine is
//! bounded, and these are the bounds (from `--request-timeout-ms` and
//! `--machine-wait-ms`).

use std::time::Duration;

/// Bounds on waiting, from the options.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Any one request, and each capacity-control sample.
    pub request: Duration,
    /// How long a gate waits for another gate on this machine to finish.
    pub machine_wait: Duration,
}

impl Limits {
    pub const DEFAULT_REQUEST_MS: u64 = 30_000;
    pub const DEFAULT_MACHINE_WAIT_MS: u64 = 900_000;
    /// The limits `runner gate` uses when no flag says otherwise.
    pub const DEFAULT: Limits = Limits {
        request: Duration::from_millis(Self::DEFAULT_REQUEST_MS),
        machine_wait: Duration::from_millis(Self::DEFAULT_MACHINE_WAIT_MS),
    };
}
