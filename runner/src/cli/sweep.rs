//! The flags of `runner sweep`; the run is `runner::sweep::command`.

use std::path::PathBuf;

use clap::Args;

use runner::server::choose::server_name;
use runner::session::Session;
use runner::sweep::command::{self, SweepCommand};
use runner::sweep::input::{
    SweepInput, DEFAULT_CONNECTIONS, DEFAULT_DURATION, DEFAULT_PATH, DEFAULT_THREADS,
    DEFAULT_WARMUP,
};

use super::args::{json_is_a_flag_now, sweep_flag, AppArgs, JsonArgs, LimitArgs};
use super::console::Std;
use super::{or_unusable, unusable, Finish};

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// A sweep row to run: an id from specs/sweeps/ or a path to a sweep
    /// row file. Its keys stand for the route and knob flags; --server
    /// overrides its server, and the report flags still apply.
    #[arg(
        value_name = "ROW",
        conflicts_with_all = ["paths", "threads", "workers", "connections", "duration", "warmup", "app", "app_dir", "ready_path", "request_timeout_ms", "env", "ready_timeout_ms"]
    )]
    pub row: Option<String>,

    /// The route to load. Give it more than once to sweep several routes
    /// side by side (each a line on the plot), e.g. the releasing and the
    /// holding mode of /work. The fixture's /work gets a fresh seed per
    /// request and every digest checked; other routes are checked for
    /// status and body length only ("work not verified").
    #[arg(
        long = "path",
        value_name = "PATH",
        default_value = DEFAULT_PATH
    )]
    pub paths: Vec<String>,

    /// Server profile: a name from specs/servers/ or a path to a profile
    /// file [default: the row's, or granian for a WSGI app and uvicorn for
    /// an ASGI one].
    #[arg(long, value_name = "NAME|PATH")]
    pub server: Option<String>,

    /// Handler threads to sweep, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = DEFAULT_THREADS,
        value_name = "N,..."
    )]
    pub threads: Vec<u32>,

    /// Worker processes to sweep, comma-separated (default: the server's own).
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub workers: Vec<u32>,

    /// Kept-alive connections, each sending its next request as soon as its
    /// last reply arrives.
    #[arg(long, default_value_t = DEFAULT_CONNECTIONS, value_name = "N")]
    pub connections: u32,

    /// The measured window of each setting (5s, 500ms, 1m).
    #[arg(long, default_value = DEFAULT_DURATION, value_name = "TIME")]
    pub duration: String,

    /// Load before the measured window, on the same connections (not counted).
    #[arg(long, default_value = DEFAULT_WARMUP, value_name = "TIME")]
    pub warmup: String,

    #[command(flatten)]
    pub app: AppArgs,

    #[command(flatten)]
    pub out: JsonArgs,

    /// Also write the table as CSV to PATH.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,

    /// Also write the table as Markdown to PATH, linking the plot (written
    /// next to it as .svg unless --svg says where).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    /// Also plot req/s and p99 against threads as SVG to PATH.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,

    #[command(flatten)]
    pub limits: LimitArgs,
}

impl SweepArgs {
    /// The request the flags make.
    fn input(&self) -> SweepInput {
        SweepInput {
            server: server_name(self.server.as_deref(), self.app.interface),
            paths: self.paths.clone(),
            threads: self.threads.clone(),
            workers: self.workers.clone(),
            connections: self.connections,
            duration: self.duration.clone(),
            warmup: self.warmup.clone(),
            request_timeout_ms: self.limits.request_timeout_ms,
            app: self.app.app.clone(),
            app_dir: self.app.app_dir.clone(),
            ready_path: self.app.ready_path.clone(),
            env: self.app.env(),
            ready_timeout_ms: self.app.ready_timeout_ms,
            machine_wait_ms: self.limits.machine_wait_ms,
        }
    }
}

pub async fn run(session: &Session, args: &SweepArgs) -> Finish {
    if let Err(e) = json_is_a_flag_now(args.out.json, args.row.iter()) {
        return unusable(&e);
    }
    let input = SweepCommand {
        row: args.row.clone(),
        input: args.input(),
        server_given: args.server.is_some(),
        interface: args.app.interface,
        out: args.out.out(),
        csv: args.csv.clone(),
        markdown: args.markdown.clone(),
        svg: args.svg.clone(),
        name: |e| e.named(sweep_flag(e.field)),
    };
    or_unusable(command::run(session, &input, &Std).await)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Command};
    use super::*;

    fn sweep_args(argv: &[&str]) -> Result<SweepArgs, clap::Error> {
        let cli = Cli::try_parse_from(["runner", "sweep"].iter().chain(argv))?;
        match cli.command {
            Command::Sweep(args) => Ok(args),
            _ => panic!("not a sweep"),
        }
    }

    #[test]
    fn the_flags_defaults_are_the_requests() {
        let r = sweep_args(&[]).unwrap().input();
        let d = SweepInput::default();
        assert_eq!(r.paths, d.paths);
        assert_eq!(r.threads, d.threads);
        assert_eq!(r.connections, d.connections);
        assert_eq!(r.duration, d.duration);
        assert_eq!(r.warmup, d.warmup);
        assert_eq!(r.request_timeout_ms, d.request_timeout_ms);
        assert_eq!(r.machine_wait_ms, d.machine_wait_ms);
        assert_eq!(r.server, d.server);
        // Its twin: a flag given is the input's.
        let r = sweep_args(&["--threads", "3"]).unwrap().input();
        assert_ne!(r.threads, d.threads);
    }

    #[test]
    fn a_row_stands_for_the_route_flags() {
        for extra in [["--threads", "1"], ["--path", "/"], ["--duration", "1s"]] {
            let argv = ["blocking-threads", extra[0], extra[1]];
            let e = sweep_args(&argv).unwrap_err();
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ArgumentConflict,
                "{extra:?}"
            );
        }
        // Its twin: report flags and --server go with a row.
        let argv = [
            "blocking-threads",
            "--server",
            "waitress",
            "--json",
            "--json-file",
            "x.json",
        ];
        assert!(sweep_args(&argv).is_ok());
    }
}
