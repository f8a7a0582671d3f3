//! How gates run, as a caller asks for it: [`RunInput`] (trials and the
//! limits), built by the CLI for every command that runs gates, checked
//! once into a [`RunPlan`]. A bad value names its [`RunField`]; the CLI
//! turns it into the flag.

use std::time::Duration;

use crate::host::limits::Limits;
use crate::input::FieldError;
use crate::spec::row::Row;
use crate::spec::Trials;

/// How gates run.
#[derive(Debug, Clone, Copy)]
pub struct RunInput {
    /// Exactly this many trials per gate; the row's budget when None.
    pub trials: Option<u32>,
    pub request_timeout_ms: u64,
    pub machine_wait_ms: u64,
}

impl Default for RunInput {
    fn default() -> Self {
        Self {
            trials: None,
            request_timeout_ms: Limits::DEFAULT_REQUEST_MS,
            machine_wait_ms: Limits::DEFAULT_MACHINE_WAIT_MS,
        }
    }
}

/// A field of [`RunInput`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunField {
    Trials,
    RequestTimeoutMs,
}

/// A checked [`RunInput`].
#[derive(Debug, Clone, Copy)]
pub struct RunPlan {
    pub trials: Option<u32>,
    pub limits: Limits,
}

impl RunInput {
    pub fn plan(&self) -> Result<RunPlan, FieldError<RunField>> {
        if let Some(t) = self.trials {
            if !(1..=1000).contains(&t) {
                return Err(
                    FieldError::new(RunField::Trials, "use a number from 1 to 1000").value(t),
                );
            }
        }
        if !(100..=600_000).contains(&self.request_timeout_ms) {
            return Err(
                FieldError::new(RunField::RequestTimeoutMs, "use 100 to 600000")
                    .value(self.request_timeout_ms),
            );
        }
        Ok(RunPlan {
            trials: self.trials,
            limits: Limits {
                request: Duration::from_millis(self.request_timeout_ms),
                machine_wait: Duration::from_millis(self.machine_wait_ms),
            },
        })
    }
}

impl RunPlan {
    /// A trials count makes the row run exactly that many trials.
    pub fn apply(&self, row: &mut Row) {
        if let Some(t) = self.trials {
            row.trials = Trials { min: t, max: t };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bad_value_names_its_field() {
        assert!(RunInput::default().plan().is_ok());
        let bad = |r: RunInput| r.plan().unwrap_err().field;
        let trials = RunInput {
            trials: Some(0),
            ..Default::default()
        };
        assert_eq!(bad(trials), RunField::Trials);
        let timeout = RunInput {
            request_timeout_ms: 5,
            ..Default::default()
        };
        assert_eq!(bad(timeout), RunField::RequestTimeoutMs);
    }
}
