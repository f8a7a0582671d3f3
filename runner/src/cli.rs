//! Command-line parsing (clap). Values are checked in `options`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "runner",
    version,
    about = "Turns a Python app server's concurrency claims into deterministic CI gates"
)]
pub struct Cli {
    /// The gates checkout (with specs/ and fixtures/bareapp/); found from the
    /// current directory by default.
    #[arg(long, global = true, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,

    /// An interpreter that already has the server installed, instead of the
    /// runner's own virtualenv (.gates/venv).
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run SPEC rows as gates, each on a fresh server.
    Gate(GateArgs),
    /// Prepare the Python environment (.gates/venv with the pinned servers)
    /// and print what is installed.
    Prepare,
    /// List the SPEC rows.
    List,
    /// Validate row files without starting anything.
    Check {
        /// Row files; all of specs/*.yaml by default.
        files: Vec<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Row ids (E19), paths to row files, or `all`.
    #[arg(required = true, value_name = "ROW")]
    pub rows: Vec<String>,

    /// Server profile: a name from specs/servers/ or a path to a profile file.
    #[arg(long, default_value = "granian", value_name = "NAME|PATH")]
    pub server: String,

    /// Print the result as JSON on stdout (progress still goes to stderr).
    #[arg(long)]
    pub json: bool,

    /// Run exactly N trials (the row's `trials.min` and `trials.max`).
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    /// Bound on any one request, and on each capacity-control sample.
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub request_timeout_ms: u64,

    /// How long a gate waits for another gate on this machine (they take
    /// turns: two at once would measure each other).
    #[arg(long, default_value_t = 900_000, value_name = "MS")]
    pub machine_wait_ms: u64,
}
