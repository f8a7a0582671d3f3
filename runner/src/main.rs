//! `runner`: the command line. Parses flags, runs one command, and is the
//! only place that chooses an exit code (from the table in `runner::exit`).

mod commands;

use std::process::ExitCode;

use clap::Parser;

use runner::cli::{Cli, Command};
use runner::exit;
use runner::host::project::Project;

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
    let finish = runtime.block_on(dispatch(cli));
    ExitCode::from(exit::code(finish.outcome, &finish.verdicts))
}

async fn dispatch(cli: Cli) -> commands::Finish {
    if let Some(host) = &cli.host {
        if let Err(e) = runner::server::loopback::parse_host(host)
            .and_then(runner::server::loopback::set_bind_host)
        {
            return commands::unusable(&e);
        }
    }
    let project = match Project::locate(cli.project_dir.as_deref()) {
        Ok(p) => p,
        Err(e) => return commands::unusable(&e),
    };
    let python = cli.python.as_deref();
    match &cli.command {
        Command::List => commands::list::run(&project),
        Command::Check { files } => commands::check::run(&project, files),
        Command::Prepare { rows } => commands::prepare::run(&project, python, rows),
        Command::Schema { what, report } => {
            let what = if *report {
                runner::cli::SchemaOf::Report
            } else {
                *what
            };
            print!("{}", what.render());
            commands::Finish::ok()
        }
        Command::Gate(args) => commands::gate::run(&project, python, args).await,
        Command::Stress(args) => commands::stress::run(&project, python, args).await,
        Command::Matrix(args) => commands::matrix::run(&project, python, args).await,
        Command::Servers { profiles } => commands::servers::run(&project, python, profiles),
        Command::Signoff(args) => commands::signoff::run(&project, python, args).await,
        Command::GilProbe(args) => commands::gil_probe::run(&project, python, args).await,
        Command::Sweep(args) => commands::sweep::run(&project, python, args).await,
        Command::Load(args) => commands::load::run(args).await,
        Command::Advise(args) => commands::advise::run(&project, python, args).await,
    }
}
