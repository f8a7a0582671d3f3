//! The engine behind `runner`: SPEC rows and server profiles in, verdicts
//! out. The binary (`main.rs` and `cli/`) parses flags into the engine's
//! command structs and chooses the exit code from how the command ended;
//! everything else is here: each command's run (`report::commands`,
//! `sweep::command`, `advise::command`, ...) measures, judges and reports
//! through events and the [`console::Console`] the binary hands it, never
//! printing and never importing the CLI (`runner/tests/layers.rs` holds
//! every module to its layer).

pub mod advise;
pub mod console;
pub mod digest;
pub mod exit;
pub mod gate;
pub mod host;
pub mod http;
pub mod input;
pub mod kernel;
pub mod load;
pub mod probe;
pub mod report;
pub mod server;
pub mod session;
pub mod setup;
pub mod spec;
pub mod stats;
pub mod stress;
pub mod sweep;
pub mod text;
pub mod verdict;
