//! `runner matrix [--servers a,b,c] [ROWS]`: every row on every server, each
//! gate on a fresh server, printed as rows by servers (and, on request, as
//! Markdown, JSON and JUnit files). Per-gate tables and progress go to stderr so
//! that stdout is the matrix alone. With `--from REPORT.json...` it runs
//! nothing and merges the reports of runs elsewhere (`report/merge.rs`).

use std::path::PathBuf;

use clap::Args;

use runner::report::commands::matrix::{self, MatrixCommand};
use runner::session::Session;

use super::args::{json_is_a_flag_now, JsonArgs, RunArgs};
use super::console::Std;
use super::{or_unusable, unusable, Finish};

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Row ids (E19), paths to row files, or `all` (the default).
    #[arg(value_name = "ROW")]
    pub rows: Vec<String>,

    /// Servers, comma-separated: names from specs/servers/ or paths to
    /// profile files; every profile in specs/servers/ by default.
    #[arg(
        long,
        alias = "server",
        value_delimiter = ',',
        value_name = "NAME|PATH,..."
    )]
    pub servers: Vec<String>,

    /// Also write the matrix as Markdown to PATH.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    #[command(flatten)]
    pub out: JsonArgs,

    // CI at scale (issue 19): the merge of jobs' reports and its JUnit file.
    /// Run nothing: merge these `gate --json-file` reports (one per CI job)
    /// into the matrix of ROWs by --servers (by default, the rows and
    /// servers the reports hold); a cell asked for that none gives reads
    /// missing.
    #[arg(long, value_name = "REPORT.json", num_args = 1..)]
    pub from: Vec<PathBuf>,

    /// Also write the matrix as JUnit XML to PATH: a testsuite per server,
    /// a testcase per cell (a missing cell is an error).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,

    #[command(flatten)]
    pub run: RunArgs,
}

pub async fn run(session: &Session, args: &MatrixArgs) -> Finish {
    let input = match args
        .run
        .plan()
        .and_then(|run| json_is_a_flag_now(args.out.json, &args.rows).map(|()| run))
    {
        Ok(run) => MatrixCommand {
            rows: args.rows.clone(),
            servers: args.servers.clone(),
            markdown: args.markdown.clone(),
            out: args.out.out(),
            from: args.from.clone(),
            junit: args.junit.clone(),
            run,
        },
        Err(e) => return unusable(&e),
    };
    or_unusable(matrix::run(session, &input, &Std).await)
}
