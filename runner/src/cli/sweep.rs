//! `runner sweep`: throughput and latency of one or more routes on a fresh
//! server per setting of threads and workers (see `runner::sweep`), printed
//! as a table and written as JSON, CSV, Markdown and SVG on request.
//!
//! Exit code: 0 when every setting was measured and every request was good
//! (every `/work` digest right); 2 when any setting had errors, wrong
//! digests, or could not be measured (its figures are not the server's);
//! 130/143 when interrupted (the settings done so far are still reported).

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use runner::host::limits::Limits;
use runner::host::signals;
use runner::session::Session;
use runner::sweep::export::{self, Reports};
use runner::sweep::request::{
    SweepRequest, DEFAULT_CONNECTIONS, DEFAULT_DURATION, DEFAULT_PATH, DEFAULT_THREADS,
    DEFAULT_WARMUP,
};
use runner::sweep::row::SweepRow;
use runner::sweep::terminal::{self, Progress};
use runner::sweep::{self, SweepResult};
use runner::verdict::Verdict;

use super::args::{json_is_a_flag_now, report_path, sweep_flag, AppArgs, JsonArgs};
use super::interface;
use super::{unusable, Finish};

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

    /// Bound on any one request (and on opening a connection).
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    /// How long each setting waits for a gate or sweep running on this
    /// machine (they take turns: two at once would measure each other).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

impl SweepArgs {
    /// The request the flags make; with a row, the row's, with `--server`
    /// and `--machine-wait-ms` of the flags.
    fn request(&self, row: Option<&SweepRow>) -> SweepRequest {
        match row {
            Some(row) => SweepRequest {
                server: self
                    .server
                    .clone()
                    .unwrap_or_else(|| row.request.server.clone()),
                machine_wait_ms: self.machine_wait_ms,
                ..row.request.clone()
            },
            None => SweepRequest {
                server: interface::server_name(self.server.as_deref(), self.app.interface),
                paths: self.paths.clone(),
                threads: self.threads.clone(),
                workers: self.workers.clone(),
                connections: self.connections,
                duration: self.duration.clone(),
                warmup: self.warmup.clone(),
                request_timeout_ms: self.request_timeout_ms,
                app: self.app.app.clone(),
                app_dir: self.app.app_dir.clone(),
                ready_path: self.app.ready_path.clone(),
                env: self.app.env(),
                ready_timeout_ms: self.app.ready_timeout_ms,
                machine_wait_ms: self.machine_wait_ms,
            },
        }
    }

    /// The report files asked for, each checked.
    fn reports(&self) -> Result<Reports, String> {
        for (flag, path) in [
            ("--json-file", &self.out.json_file),
            ("--csv", &self.csv),
            ("--markdown", &self.markdown),
            ("--svg", &self.svg),
        ] {
            report_path(flag, path.as_deref())?;
        }
        let svg = self
            .svg
            .clone()
            .or_else(|| self.markdown.as_ref().map(|m| m.with_extension("svg")));
        Ok(Reports {
            json: self.out.json_file.clone(),
            csv: self.csv.clone(),
            markdown: self.markdown.clone(),
            svg,
        })
    }
}

pub async fn run(session: &Session, args: &SweepArgs) -> Finish {
    let project = session.project();
    if let Err(e) = json_is_a_flag_now(args.out.json, args.row.iter()) {
        return unusable(&e);
    }
    let row = match &args.row {
        Some(wanted) => {
            match sweep::row::resolve(
                &project.specs_dir().join("sweeps"),
                wanted,
                &project.app_dir(),
            ) {
                Ok(row) => Some(row),
                Err(e) => return unusable(&e.to_string()),
            }
        }
        None => None,
    };
    let mut request = args.request(row.as_ref());
    let reports = match args.reports() {
        Ok(r) => r,
        Err(e) => return unusable(&e),
    };
    let fixture_dir = interface::fixture_dir(project, &request.server);
    let mut plan = match request.plan(&fixture_dir, &project.servers_dir()) {
        Ok(p) => p,
        Err(e) => return unusable(&e.named(sweep_flag(e.field))),
    };
    let started = Instant::now();
    let env = match session.python() {
        Ok(env) => env,
        Err(e) => return unusable(&e),
    };
    // The user's app: on a server that speaks its interface, or refused
    // before anything starts.
    if !plan.fixture {
        let server_given = args.server.is_some() || row.is_some();
        let settled = match interface::settle(
            project,
            &env.python,
            &plan.app,
            &plan.app_dir,
            args.app.interface,
            &plan.profile,
            server_given,
        )
        .await
        {
            Ok(s) => s,
            Err(e) => return unusable(&e),
        };
        if let Some(found) = &settled.found {
            eprintln!(
                "sweep: {} is {} ({}): {}",
                plan.app, found.what, found.why, settled.interface
            );
        }
        if let Some(other) = settled.profile {
            eprintln!(
                "sweep: serving it on {} (no --server given; the {} default)",
                other.name, settled.interface
            );
            request.server = other.file.display().to_string();
            plan = match request.plan(&fixture_dir, &project.servers_dir()) {
                Ok(p) => p,
                Err(e) => return unusable(&e.named(sweep_flag(e.field))),
            };
        }
    }
    let mut progress = Progress::new();
    let mut settings = Vec::new();
    let mut emit = |e: sweep::SweepEvent<'_>| progress.event(&e);
    let work = sweep::run(session, &plan, &mut settings, &mut emit);
    let interrupted = match session.cancellable(work).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => return unusable(&e),
        Err(signal) => Some(signal),
    };
    // An interrupted sweep never reached its own scaling pass.
    sweep::scale(&mut settings);
    let result = SweepResult {
        row: row.as_ref().map(|r| r.reference()),
        server: plan.profile.name.clone(),
        app: plan.app.clone(),
        app_dir: plan.app_dir.clone(),
        connections: plan.connections,
        warmup_s: plan.warmup.as_secs_f64(),
        duration_s: plan.duration.as_secs_f64(),
        request_timeout_ms: plan.request_timeout.as_millis() as u64,
        env: plan.app_env.clone(),
        settings,
        elapsed_s: started.elapsed().as_secs_f64(),
        interrupted: interrupted.map(|s| signals::name(s).to_string()),
    };
    if args.out.json {
        print!("{}", export::json::render(&result));
    } else {
        print!("{}", terminal::render(&result));
    }
    match export::write_all(&result, &reports) {
        Ok(paths) => {
            for p in paths {
                eprintln!("wrote {}", p.display());
            }
        }
        Err(e) => return unusable(&e),
    }
    match interrupted {
        Some(signal) => Finish::interrupted(signal, Vec::new()),
        None if result.clean() => Finish::ok(),
        None => Finish::verdicts(vec![Verdict::CannotJudge]),
    }
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
        let r = sweep_args(&[]).unwrap().request(None);
        let d = SweepRequest::default();
        assert_eq!(r.paths, d.paths);
        assert_eq!(r.threads, d.threads);
        assert_eq!(r.connections, d.connections);
        assert_eq!(r.duration, d.duration);
        assert_eq!(r.warmup, d.warmup);
        assert_eq!(r.request_timeout_ms, d.request_timeout_ms);
        assert_eq!(r.machine_wait_ms, d.machine_wait_ms);
        assert_eq!(r.server, d.server);
        // Its twin: a flag given is the request's.
        let r = sweep_args(&["--threads", "3"]).unwrap().request(None);
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
