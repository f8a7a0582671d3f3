//! `runner gate ROWS...`: each row on a fresh server, a table and a verdict
//! line per gate (or one JSON document), and a summary.

use std::path::PathBuf;

use clap::Args;

use runner::report::commands::gate::{self, GateCommand};
use runner::session::Session;

use super::args::{JsonArgs, RunArgs};
use super::console::Std;
use super::{or_unusable, unusable, Finish};

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Row ids (E19), paths to row files, or `all`.
    #[arg(required = true, value_name = "ROW")]
    pub rows: Vec<String>,

    /// Server profile: a name from specs/servers/ or a path to a profile
    /// file [default: by the row's app: granian for a WSGI app, uvicorn for
    /// an ASGI one].
    #[arg(long, value_name = "NAME|PATH")]
    pub server: Option<String>,

    #[command(flatten)]
    pub out: JsonArgs,

    /// Also write JUnit XML to PATH: a testcase per row and server.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,

    /// Also write the summary table as Markdown to PATH (and append it to
    /// $GITHUB_STEP_SUMMARY when that is set).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    #[command(flatten)]
    pub run: RunArgs,
}

pub async fn run(session: &Session, args: &GateArgs) -> Finish {
    let input = match args.run.plan() {
        Ok(run) => GateCommand {
            rows: args.rows.clone(),
            server: args.server.clone(),
            out: args.out.out(),
            junit: args.junit.clone(),
            markdown: args.markdown.clone(),
            run,
        },
        Err(e) => return unusable(&e),
    };
    or_unusable(gate::run(session, &input, &Std).await)
}
