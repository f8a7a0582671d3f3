//! The engine behind `runner`: SPEC rows and server profiles in, verdicts
//! out. The CLI (`main.rs`) parses flags, drives the engine and chooses the
//! exit code; everything here measures, judges and reports through events.

pub mod advise;
pub mod cli;
pub mod digest;
pub mod event;
pub mod exit;
pub mod gate;
pub mod gil;
pub mod host;
pub mod http;
pub mod kernel;
pub mod load;
pub mod options;
pub mod probe;
pub mod report;
pub mod server;
pub mod spec;
pub mod stats;
pub mod sweep;
pub mod text;
pub mod verdict;
