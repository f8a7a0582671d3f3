//! The binary's console: the engine's answer on stdout, its notes on
//! stderr.

use std::io::{IsTerminal, Write};

use runner::console::Console;

/// Stdout and stderr.
pub struct Std;

impl Console for Std {
    fn answer(&self) -> Box<dyn Write> {
        Box::new(std::io::stdout())
    }

    fn notes(&self) -> Box<dyn Write> {
        Box::new(std::io::stderr())
    }

    fn live(&self) -> bool {
        std::io::stderr().is_terminal()
    }
}
