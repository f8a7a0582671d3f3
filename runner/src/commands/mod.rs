//! One module per subcommand. Each returns a [`Finish`]; `main` turns it
//! into the exit code.

pub mod check;
pub mod gate;
pub mod list;
pub mod matrix;
pub mod prepare;
pub mod servers;
pub mod signoff;
pub mod stress;

use runner::exit::Outcome;
use runner::verdict::Verdict;

/// How a command ended.
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
}

/// Prints `message` as an error; the input could not be used.
pub fn unusable(message: &str) -> Finish {
    eprintln!("error: {message}");
    Finish {
        outcome: Outcome::Unusable,
        verdicts: Vec::new(),
    }
}
