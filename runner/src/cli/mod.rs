//! The command line: clap lives here and in `main.rs` only. One module per
//! subcommand, holding its flags and turning them into the engine's input
//! for the command's run in the engine; flag groups several commands share
//! are in `args`. Each run returns a [`Finish`]; `main` turns it into the
//! exit code.

pub mod advise;
pub mod args;
pub mod console;
pub mod gate;
pub mod gil_probe;
pub mod load;
pub mod matrix;
pub mod signoff;
pub mod stress;
pub mod sweep;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use runner::exit::Finish;
use runner::host::project::Project;
use runner::session::Session;

use console::Std;

#[derive(Debug, Parser)]
#[command(
    name = "runner",
    version,
    about = "Turns a Python app server's concurrency claims into deterministic CI gates"
)]
pub struct Cli {
    /// The gates checkout (with specs/ and fixtures/bareapp/); found from the
    /// current directory by default, else the rows and fixtures built into
    /// the runner, with its state in ~/.cache/concurrency-gates.
    #[arg(long, global = true, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,

    /// An interpreter that already has the server installed, instead of the
    /// runner's own virtualenv (.gates/venv, or the cache's venv).
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,

    /// The loopback address servers are told to bind (`{host}` in profiles):
    /// 127.0.0.1 by default; only 127.0.0.0/8 or ::1 are accepted.
    #[arg(long, global = true, value_name = "IP")]
    pub host: Option<String>,

    // CI at scale (issue 19): the macOS path, forced on Linux.
    /// `on` (the default) takes the scheduler witness from the kernel's
    /// per-thread accounting on Linux, and from the portable reading on
    /// macOS. `portable` takes only what macOS gives (on-CPU time, sampled
    /// run state, host idle), also on Linux, so the macOS path is measured
    /// there. `off`: no witness at all, the wall-clock rules decide, and
    /// the gil-probe's `auto` instrument is lost iterations.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "on",
        value_name = "on|portable|off"
    )]
    pub witness: WitnessSwitch,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run SPEC rows as gates, each on a fresh server.
    Gate(gate::GateArgs),
    /// Prepare the Python environment (.gates/venv with the pinned servers)
    /// and print what is installed.
    Prepare {
        /// Also install the extra packages these rows need (`requires:` of
        /// a gil-probe row, pinned), or `all`; only into the runner's own
        /// venv.
        #[arg(long, value_delimiter = ',', value_name = "ROW,...|all")]
        rows: Vec<String>,
        // CI at scale (issue 19): one job, one server.
        /// Install only this server's pinned package (a name from
        /// specs/servers/ or a profile file), for a CI job that checks one
        /// server; gates on the others then read them not ready.
        #[arg(long, value_name = "NAME|PATH")]
        server: Option<String>,
    },
    /// Print a JSON Schema: of a row file (checked in as
    /// specs/row.schema.json), a sweep row (specs/sweeps/row.schema.json),
    /// or a JSON report (runner/schema/WHAT.schema.json).
    Schema {
        /// Which file's schema.
        #[arg(value_enum, default_value = "row", value_name = "WHAT")]
        what: SchemaOf,
        /// The same as `report` (kept for scripts that used it).
        #[arg(long, hide = true)]
        report: bool,
    },
    /// List the SPEC rows.
    List,
    /// Validate row files without starting anything.
    Check {
        /// Row, sweep row and profile files, or folders of them (each with
        /// its `sweeps/` and `servers/`); specs/ by default.
        #[arg(value_name = "PATH")]
        files: Vec<PathBuf>,
    },
    /// Run one row's gate N times (each on a fresh server), optionally under
    /// a background CPU load, and print the verdict distribution and the
    /// spread of each figure.
    Stress(stress::StressArgs),
    /// Run every row on every server (a fresh server each time) and print
    /// rows by servers: the conformance matrix.
    Matrix(matrix::MatrixArgs),
    /// List the server profiles, whether each is ready to run here, and
    /// its version.
    Servers {
        /// Profile names or paths; all of specs/servers/ by default.
        #[arg(value_name = "NAME|PATH")]
        profiles: Vec<String>,
    },
    /// Release sign-off: every row on one server with more trials, written
    /// as a bundle (report.json, report.md, junit.xml, server logs, env.json).
    Signoff(signoff::SignoffArgs),
    /// Does a Python call release the GIL? Runs it in a loop beside a
    /// spinner thread, with three controls, in the interpreter given with
    /// --python (default .gates/venv); no server.
    GilProbe(gil_probe::GilProbeArgs),
    /// Throughput and latency of one or more routes under closed-loop load,
    /// on a fresh server per setting of threads and workers, with the
    /// server's CPU: the table users pick their thread and worker counts from.
    Sweep(sweep::SweepArgs),
    /// The deployment rule (docs/deployment-rule.md) for one view: does its work release the
    /// GIL (a pair with the scheduler witness, or --call's GIL probe), is
    /// there headroom (a short sweep over 1, 2 and 4 threads), and one
    /// recommendation: threads, spawned workers, no more threads, or the pool.
    Advise(advise::AdviseArgs),
    /// One closed-loop load against a server already running on loopback
    /// (no fresh server, no CPU figures): the runner's client side by side
    /// with wrk and oha (bench/anchors.py).
    Load(load::LoadArgs),
}

/// `--witness`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WitnessSwitch {
    On,
    Portable,
    Off,
}

/// The files `runner schema` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaOf {
    /// A gate row, specs/*.yaml.
    Row,
    /// `runner gate --json` and the other gate reports.
    Report,
    /// A sweep row, specs/sweeps/*.yaml.
    SweepRow,
    /// `runner sweep --json`.
    SweepReport,
    /// `runner advise --json`.
    AdviseReport,
}

impl SchemaOf {
    /// The schema, as the checked-in file holds it.
    pub fn render(self) -> String {
        match self {
            SchemaOf::Row => runner::spec::row::row_schema(),
            SchemaOf::Report => runner::report::json::report_schema(),
            SchemaOf::SweepRow => runner::sweep::row::schema(),
            SchemaOf::SweepReport => runner::sweep::report_schema(),
            SchemaOf::AdviseReport => runner::advise::report_schema(),
        }
    }
}

/// Runs the command the flags name.
pub async fn dispatch(cli: Cli) -> Finish {
    // Before anything measures: nothing has read the accounting yet.
    match cli.witness {
        WitnessSwitch::Off => {
            runner::kernel::schedstat::force_off();
        }
        WitnessSwitch::Portable => runner::kernel::portable::force_portable(),
        WitnessSwitch::On => {}
    }
    if let Some(host) = &cli.host {
        if let Err(e) = runner::server::loopback::parse_host(host)
            .and_then(runner::server::loopback::set_bind_host)
        {
            return unusable(&e);
        }
    }
    let project = match Project::locate(cli.project_dir.as_deref()) {
        Ok(p) => p,
        Err(e) => return unusable(&e),
    };
    let python = cli.python.as_deref();
    // The environment's progress goes to stderr, in its own words.
    let session = Session::new(project.clone(), cli.python.clone()).with_sink(|p| eprintln!("{p}"));
    match &cli.command {
        Command::List => or_unusable(runner::report::listing::list(&project, &Std)),
        Command::Check { files } => {
            or_unusable(runner::report::listing::check(&project, files, &Std))
        }
        Command::Prepare { rows, server } => or_unusable(runner::setup::prepare(
            &project,
            python,
            rows,
            server.as_deref(),
            &Std,
        )),
        Command::Schema { what, report } => {
            let what = if *report { SchemaOf::Report } else { *what };
            print!("{}", what.render());
            Finish::ok()
        }
        Command::Gate(args) => gate::run(&session, args).await,
        Command::Stress(args) => stress::run(&session, args).await,
        Command::Matrix(args) => matrix::run(&session, args).await,
        Command::Servers { profiles } => or_unusable(runner::server::status::command(
            &project, python, profiles, &Std,
        )),
        Command::Signoff(args) => signoff::run(&session, args).await,
        Command::GilProbe(args) => gil_probe::run(&session, args).await,
        Command::Sweep(args) => sweep::run(&session, args).await,
        Command::Load(args) => load::run(args).await,
        Command::Advise(args) => advise::run(&session, args).await,
    }
}

/// The engine's ending, or its error printed as unusable input.
pub fn or_unusable(ended: Result<Finish, String>) -> Finish {
    ended.unwrap_or_else(|e| unusable(&e))
}

/// Prints `message` as an error; the input could not be used.
pub fn unusable(message: &str) -> Finish {
    eprintln!("error: {message}");
    Finish::unusable()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each measuring command with its required arguments.
    const COMMANDS: [&[&str]; 8] = [
        &["gate", "E19"],
        &["stress", "E19", "--runs", "1"],
        &["matrix"],
        &["signoff", "--server", "granian"],
        &["gil-probe", "time:sleep"],
        &["sweep"],
        &["advise"],
        &["load", "--addr", "127.0.0.1:8000"],
    ];

    fn parse(argv: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(["runner"].iter().chain(argv))
    }

    #[test]
    fn every_command_takes_json_and_json_file() {
        for base in COMMANDS {
            let argv: Vec<&str> = base
                .iter()
                .copied()
                .chain(["--json", "--json-file", "r.json"])
                .collect();
            assert!(
                parse(&argv).is_ok(),
                "{argv:?}: {}",
                parse(&argv).unwrap_err()
            );
            // Its twin: --json takes no path (a path is a stray argument).
            let stray: Vec<&str> = base.iter().copied().chain(["--json=r.json"]).collect();
            assert!(parse(&stray).is_err(), "{stray:?}");
        }
        // And a command without a report refuses them.
        assert!(parse(&["list", "--json"]).is_err());
    }

    #[test]
    fn an_old_json_path_is_refused_with_the_new_spelling() {
        let e = args::json_is_a_flag_now(true, &["out.json".to_string()]).unwrap_err();
        assert!(e.contains("--json-file out.json"), "{e}");
        assert!(args::json_is_a_flag_now(true, &["E19".to_string()]).is_ok());
        assert!(args::json_is_a_flag_now(false, &["x.json".to_string()]).is_ok());
    }
}
