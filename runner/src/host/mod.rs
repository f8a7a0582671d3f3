//! The host the runner runs on: child processes in their own process groups
//! and the bounded way to run a short command, the last lines of a log,
//! signals, the one-gate-at-a-time machine lock, where the project's files
//! and state live (a checkout, or the files embedded in the binary unpacked
//! into the user's cache), the Python
//! virtualenv, and the bounds on every wait. Nothing here knows what a gate
//! or a server is.

pub mod bounded;
pub mod embedded;
pub mod limits;
pub mod logtail;
pub mod machine_lock;
pub mod process;
pub mod project;
pub mod pyenv;
pub mod requires;
pub mod signals;
