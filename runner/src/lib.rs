//! The engine behind `runner`: SPEC rows and server profiles in, verdicts
//! out. The CLI (`main.rs`) parses flags, drives the engine and chooses the
//! exit code; everything here measures, judges and reports through events.

pub mod advise;
pub mod bounded;
pub mod cli;
pub mod control;
pub mod digest;
pub mod event;
pub mod exit;
pub mod export;
pub mod fingerprint;
pub mod gate;
pub mod gil;
pub mod http;
pub mod limits;
pub mod load;
pub mod logdrain;
pub mod logtail;
pub mod loopback;
pub mod machine_lock;
pub mod noise;
pub mod options;
pub mod probe;
pub mod process;
pub mod project;
pub mod pyenv;
pub mod reply;
pub mod report;
pub mod result;
pub mod row;
pub mod schedstat;
pub mod server;
pub mod server_pool;
pub mod server_status;
pub mod session;
pub mod signals;
pub mod spec;
pub mod stats;
pub mod sweep;
pub mod text;
pub mod trial;
pub mod verdict;
pub mod witness;
