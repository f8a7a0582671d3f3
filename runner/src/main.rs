//! `runner`: the command line. Parses flags, runs one command, and is the
//! only place that chooses an exit code (from the table in `runner::exit`).

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::Cli;
use runner::exit;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(exit::CANNOT_JUDGE);
        }
    };
    let finish = runtime.block_on(cli::dispatch(cli));
    ExitCode::from(finish.code())
}
