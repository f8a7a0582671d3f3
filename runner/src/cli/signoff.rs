//! `runner signoff --server NAME [--out DIR]`: release sign-off. Every row
//! (or the rows given) on one server, each with its `trials.max` as the
//! minimum, written as a bundle a release can be judged by later:
//! report.json, report.md, junit.xml, every server log (logs/) and env.json
//! (the machine's fingerprint). The exit code summarises the bundle, by the
//! same table as `runner gate`.

use std::path::PathBuf;

use clap::Args;

use runner::report::commands::signoff::{self, SignoffCommand};
use runner::session::Session;

use super::args::{JsonArgs, RunArgs};
use super::console::Std;
use super::{or_unusable, unusable, Finish};

#[derive(Debug, Args)]
pub struct SignoffArgs {
    /// Server profile: a name from specs/servers/ or a path to a profile file.
    #[arg(long, value_name = "NAME|PATH")]
    pub server: String,

    /// The bundle's folder (created; must not exist or be empty).
    /// Default: .gates/signoff/SERVER-TIMESTAMP.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Rows: ids, paths, or `all` (the default).
    #[arg(value_name = "ROW")]
    pub rows: Vec<String>,

    #[command(flatten)]
    pub report: JsonArgs,

    #[command(flatten)]
    pub run: RunArgs,
}

pub async fn run(session: &Session, args: &SignoffArgs) -> Finish {
    let input = match args.run.plan() {
        Ok(run) => SignoffCommand {
            server: args.server.clone(),
            out: args.out.clone(),
            rows: args.rows.clone(),
            report: args.report.out(),
            run,
        },
        Err(e) => return unusable(&e),
    };
    or_unusable(signoff::run(session, &input, &Std).await)
}
