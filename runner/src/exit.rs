//! The one table of exit codes, and the one function from outcomes to codes.
//! Only `main` calls it.

use crate::verdict::Verdict;

/// Every gate passed (or was not applicable).
pub const PASS: u8 = 0;
/// At least one gate failed: the claim does not hold.
pub const FAIL: u8 = 1;
/// No verdict: a control did not separate, no free core, a broken
/// measurement, a server that would not start, or a bad row, profile or flag.
pub const CANNOT_JUDGE: u8 = 2;
/// Interrupted by SIGINT (128 + 2).
pub const INTERRUPTED_INT: u8 = 130;
/// Interrupted by SIGTERM (128 + 15).
pub const INTERRUPTED_TERM: u8 = 143;

/// What ended a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Gates ran; these are their verdicts.
    Verdicts,
    /// The input could not be used (row, profile, flag, environment).
    Unusable,
    /// A signal stopped the run.
    Interrupted { signal: i32 },
}

/// Maps an outcome and the verdicts reached to the process exit code.
pub fn code(outcome: Outcome, verdicts: &[Verdict]) -> u8 {
    match outcome {
        Outcome::Unusable => CANNOT_JUDGE,
        Outcome::Interrupted { signal } if signal == libc::SIGTERM => INTERRUPTED_TERM,
        Outcome::Interrupted { .. } => INTERRUPTED_INT,
        Outcome::Verdicts => {
            if verdicts.contains(&Verdict::Fail) {
                FAIL
            } else if verdicts.contains(&Verdict::CannotJudge) {
                CANNOT_JUDGE
            } else {
                PASS
            }
        }
    }
}

/// How a command ended: what `main` turns into the exit code with [`code`].
#[derive(Debug)]
pub struct Finish {
    pub outcome: Outcome,
    pub verdicts: Vec<Verdict>,
}

impl Finish {
    pub fn verdicts(verdicts: Vec<Verdict>) -> Self {
        Self {
            outcome: Outcome::Verdicts,
            verdicts,
        }
    }

    pub fn ok() -> Self {
        Self::verdicts(Vec::new())
    }

    /// No verdict could be had: the input or a figure was missing.
    pub fn cannot_judge() -> Self {
        Self::verdicts(vec![Verdict::CannotJudge])
    }

    /// The input could not be used.
    pub fn unusable() -> Self {
        Self {
            outcome: Outcome::Unusable,
            verdicts: Vec::new(),
        }
    }

    /// Stopped by `signal` (SIGINT, SIGTERM), with the verdicts reached.
    pub fn interrupted(signal: i32, verdicts: Vec<Verdict>) -> Self {
        Self {
            outcome: Outcome::Interrupted { signal },
            verdicts,
        }
    }

    /// The verdicts, or an interruption carrying them.
    pub fn ended(interrupted: Option<i32>, verdicts: Vec<Verdict>) -> Self {
        match interrupted {
            Some(signal) => Self::interrupted(signal, verdicts),
            None => Self::verdicts(verdicts),
        }
    }

    /// Unusable when any of the inputs checked was bad.
    pub fn unusable_if(bad: usize) -> Self {
        if bad > 0 {
            Self::unusable()
        } else {
            Self::ok()
        }
    }

    /// The exit code.
    pub fn code(&self) -> u8 {
        code(self.outcome, &self.verdicts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_outranks_cannot_judge_outranks_pass() {
        use Verdict::*;
        assert_eq!(code(Outcome::Verdicts, &[Pass, NotApplicable]), PASS);
        assert_eq!(code(Outcome::Verdicts, &[Pass, CannotJudge]), CANNOT_JUDGE);
        assert_eq!(code(Outcome::Verdicts, &[CannotJudge, Fail, Pass]), FAIL);
        assert_eq!(code(Outcome::Unusable, &[]), CANNOT_JUDGE);
        assert_eq!(
            code(
                Outcome::Interrupted {
                    signal: libc::SIGTERM
                },
                &[Pass]
            ),
            INTERRUPTED_TERM
        );
        assert_eq!(
            code(
                Outcome::Interrupted {
                    signal: libc::SIGINT
                },
                &[]
            ),
            INTERRUPTED_INT
        );
    }
}
