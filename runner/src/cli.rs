//! Command-line parsing (clap). Values are checked in `options`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::host::limits::Limits;
use crate::kernel::noise::Noise;

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

    /// The loopback address servers are told to bind (`{host}` in profiles):
    /// 127.0.0.1 by default; only 127.0.0.0/8 or ::1 are accepted.
    #[arg(long, global = true, value_name = "IP")]
    pub host: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run SPEC rows as gates, each on a fresh server.
    Gate(GateArgs),
    /// Prepare the Python environment (.gates/venv with the pinned servers)
    /// and print what is installed.
    Prepare {
        /// Also install the extra packages these rows need (`requires:` of
        /// a gil-probe row, pinned), or `all`; only into the runner's own
        /// venv.
        #[arg(long, value_delimiter = ',', value_name = "ROW,...|all")]
        rows: Vec<String>,
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
        /// Row files; all of specs/*.yaml by default.
        files: Vec<PathBuf>,
    },
    /// Run one row's gate N times (each on a fresh server), optionally under
    /// a background CPU load, and print the verdict distribution and the
    /// spread of each figure.
    Stress(StressArgs),
    /// Run every row on every server (a fresh server each time) and print
    /// rows by servers: the conformance matrix.
    Matrix(MatrixArgs),
    /// List the server profiles, whether each is ready to run here, and
    /// its version.
    Servers {
        /// Profile names or paths; all of specs/servers/ by default.
        #[arg(value_name = "NAME|PATH")]
        profiles: Vec<String>,
    },
    /// Release sign-off: every row on one server with more trials, written
    /// as a bundle (report.json, report.md, junit.xml, server logs, env.json).
    Signoff(SignoffArgs),
    /// Does a Python call release the GIL? Runs it in a loop beside a
    /// spinner thread, with three controls, in the interpreter given with
    /// --python (default .gates/venv); no server.
    GilProbe(GilProbeArgs),
    /// Throughput and latency of one or more routes under closed-loop load,
    /// on a fresh server per setting of threads and workers, with the
    /// server's CPU: the table users pick their thread and worker counts from.
    Sweep(SweepArgs),
    /// The deployment rule (docs/deployment-rule.md) for one view: does its work release the
    /// GIL (a pair with the scheduler witness, or --call's GIL probe), is
    /// there headroom (a short sweep over 1, 2 and 4 threads), and one
    /// recommendation: threads, spawned workers, no more threads, or the pool.
    Advise(AdviseArgs),
    /// One closed-loop load against a server already running on loopback
    /// (no fresh server, no CPU figures): the runner's client side by side
    /// with wrk and oha (bench/anchors.py).
    Load(LoadArgs),
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
            SchemaOf::Row => crate::spec::row::row_schema(),
            SchemaOf::Report => crate::report::json::report_schema(),
            SchemaOf::SweepRow => crate::sweep::row::schema(),
            SchemaOf::SweepReport => crate::sweep::report_schema(),
            SchemaOf::AdviseReport => crate::advise::report_schema(),
        }
    }

    /// Where it is checked in, from the project root.
    pub fn checked_in(self) -> &'static str {
        match self {
            SchemaOf::Row => "specs/row.schema.json",
            SchemaOf::Report => "runner/schema/report.schema.json",
            SchemaOf::SweepRow => "specs/sweeps/row.schema.json",
            SchemaOf::SweepReport => "runner/schema/sweep-report.schema.json",
            SchemaOf::AdviseReport => "runner/schema/advise-report.schema.json",
        }
    }
}

#[derive(Debug, Args)]
pub struct GilProbeArgs {
    /// The call under test (time:sleep, package.module:Class.method); or
    /// give --setup instead.
    #[arg(value_name = "MODULE:FUNCTION")]
    pub call: Option<String>,

    /// An argument as a Python literal, repeatable: --arg 0.005 --arg "'text'".
    /// With --setup, the setup's arguments.
    #[arg(long = "arg", value_name = "LITERAL", allow_hyphen_values = true)]
    pub args: Vec<String>,

    /// A function run once per worker thread that returns (callable, args),
    /// so a per-thread handle can be opened there (zimsearch:setup).
    #[arg(long, value_name = "MODULE:FUNCTION")]
    pub setup: Option<String>,

    /// Make it a gate: exit 1 when the call does the other thing.
    #[arg(long, value_name = "releases|holds")]
    pub expect: Option<String>,

    /// Rounds per arm (the call and each control), interleaved.
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,

    /// Length of one round of one arm.
    #[arg(long, value_name = "MS")]
    pub round_ms: Option<u32>,

    /// Also measure calls/s on N threads and on N processes, for each N.
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub scale: Vec<u32>,

    /// The stage table: probe the setup once per stage, the stage's name
    /// given as its first argument (--setup minilmstages:stage --stage
    /// tokenize,to_numpy,forward,tolist,dumps), then each stage's ms,
    /// share, releases or holds, the held share and the ceilings.
    #[arg(long, value_delimiter = ',', value_name = "NAME,NAME,...")]
    pub stage: Vec<String>,

    /// auto (schedstat where the kernel has it), schedstat, or iterations
    /// (the lost-iteration fallback).
    #[arg(long, default_value = "auto", value_name = "auto|schedstat|iterations")]
    pub instrument: String,

    /// Print the verdict, figures and raw run as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// How long to wait for a gate running on this machine (they take turns).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

#[derive(Debug, Args)]
pub struct StressArgs {
    /// The row: an id (E19) or a path to a row file.
    #[arg(value_name = "ROW")]
    pub row: String,

    /// How many times to run the gate.
    #[arg(long, value_name = "N")]
    pub runs: u32,

    /// Server profile: a name from specs/servers/ or a path to a profile file.
    #[arg(long, default_value = "granian", value_name = "NAME|PATH")]
    pub server: String,

    /// Background CPU load the runner starts for each gate and kills after
    /// it.
    #[arg(long, value_enum, default_value_t = Noise::None)]
    pub noise: Noise,

    /// The verdict this row should get here; runs reaching the opposite one
    /// are counted wrong (cannot judge never is) and make the exit code 1.
    #[arg(long, value_enum)]
    pub expect: Option<Expect>,

    /// Print the summary and every run as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// The verdicts `runner stress --expect` takes: the two that claim something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Expect {
    /// The claim holds here.
    Pass,
    /// The claim does not hold here.
    Fail,
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

    /// Also write the JSON report (the `--json` document) to PATH.
    #[arg(long, value_name = "PATH")]
    pub json_file: Option<PathBuf>,

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

    /// Also write the matrix and every gate's result as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    #[command(flatten)]
    pub run: RunArgs,
}

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
    pub run: RunArgs,
}

/// How gates run: shared by every command that runs them.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run exactly N trials per gate (default: the row's `trials` budget;
    /// sign-off: the row's `trials.max`).
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,

    /// Bound on any one request, and on each capacity-control sample.
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    /// How long a gate waits for another gate on this machine (they take
    /// turns: two at once would measure each other).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The server: a loopback address and port (127.0.0.1:8000).
    #[arg(long, value_name = "IP:PORT")]
    pub addr: String,

    /// The route to load. `/work` is taken to be the fixture's (a fresh seed
    /// per request, every digest checked) unless --no-digest.
    #[arg(
        long,
        default_value = "/work?mode=release&kib=8192",
        value_name = "PATH"
    )]
    pub path: String,

    /// Check status and body length only, for a `/work` that is not the
    /// fixture's.
    #[arg(long)]
    pub no_digest: bool,

    #[arg(long, default_value_t = 8, value_name = "N")]
    pub connections: u32,

    #[arg(long, default_value = "5s", value_name = "TIME")]
    pub duration: String,

    #[arg(long, default_value = "0s", value_name = "TIME")]
    pub warmup: String,

    /// Bound on any one request (and on opening a connection).
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    /// Print the result as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// A sweep row to run: an id from specs/sweeps/ or a path to a sweep
    /// row file. Its keys stand for the route and knob flags; --server
    /// overrides its server, and the report flags still apply.
    #[arg(
        value_name = "ROW",
        conflicts_with_all = ["paths", "threads", "workers", "connections", "duration", "warmup", "app", "app_dir", "request_timeout_ms"]
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
        default_value = "/work?mode=release&kib=8192"
    )]
    pub paths: Vec<String>,

    /// Server profile: a name from specs/servers/ or a path to a profile
    /// file [default: granian, or the row's].
    #[arg(long, value_name = "NAME|PATH")]
    pub server: Option<String>,

    /// Handler threads to sweep, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8",
        value_name = "N,..."
    )]
    pub threads: Vec<u32>,

    /// Worker processes to sweep, comma-separated (default: the server's own).
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub workers: Vec<u32>,

    /// Kept-alive connections, each sending its next request as soon as its
    /// last reply arrives.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub connections: u32,

    /// The measured window of each setting (5s, 500ms, 1m).
    #[arg(long, default_value = "5s", value_name = "TIME")]
    pub duration: String,

    /// Load before the measured window, on the same connections (not counted).
    #[arg(long, default_value = "1s", value_name = "TIME")]
    pub warmup: String,

    /// Your own WSGI app, as MODULE:ATTR (needs --app-dir); the fixture
    /// (fixtures/bareapp, app:app) by default.
    #[arg(long, value_name = "MODULE:ATTR")]
    pub app: Option<String>,

    /// The folder --app is imported from (the server's working directory).
    #[arg(long, value_name = "DIR")]
    pub app_dir: Option<PathBuf>,

    /// Also write every setting's figures as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

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
    /// The flags left at their defaults, for a sweep row to fill in (the
    /// row's keys take the flags' defaults: `sweep::row`).
    pub fn default_for_row() -> Self {
        Self {
            row: None,
            paths: Vec::new(),
            server: None,
            threads: Vec::new(),
            workers: Vec::new(),
            connections: crate::sweep::row::DEFAULT_CONNECTIONS,
            duration: crate::sweep::row::DEFAULT_DURATION.into(),
            warmup: crate::sweep::row::DEFAULT_WARMUP.into(),
            app: None,
            app_dir: None,
            json: None,
            csv: None,
            markdown: None,
            svg: None,
            request_timeout_ms: Limits::DEFAULT_REQUEST_MS,
            machine_wait_ms: Limits::DEFAULT_MACHINE_WAIT_MS,
        }
    }
}

#[derive(Debug, Args)]
pub struct AdviseArgs {
    /// The view to advise on. The fixture's /work gets a fresh seed per
    /// request and every digest checked; other routes are checked for
    /// status and body length only.
    #[arg(
        long,
        default_value = "/work?mode=release&kib=8192",
        value_name = "PATH"
    )]
    pub path: String,

    /// Answer question 1 with the GIL probe of this call instead of a pair
    /// on the view (time:sleep, package.module:Class.method).
    #[arg(long, value_name = "MODULE:FUNCTION")]
    pub call: Option<String>,

    /// An argument of --call as a Python literal, repeatable: --arg 0.005.
    #[arg(long = "arg", value_name = "LITERAL", allow_hyphen_values = true)]
    pub args: Vec<String>,

    /// Server profile: a name from specs/servers/ or a path to a profile file.
    #[arg(long, default_value = "granian", value_name = "NAME|PATH")]
    pub server: String,

    /// Your own WSGI app, as MODULE:ATTR (needs --app-dir); the fixture
    /// (fixtures/bareapp, app:app) by default.
    #[arg(long, value_name = "MODULE:ATTR")]
    pub app: Option<String>,

    /// The folder --app is imported from (the server's working directory).
    #[arg(long, value_name = "DIR")]
    pub app_dir: Option<PathBuf>,

    /// Print the answer as JSON on stdout (its JSON Schema:
    /// `runner::advise::report_schema`).
    #[arg(long)]
    pub json: bool,

    /// Bound on any one request (and on opening a connection).
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    /// How long each measurement waits for a gate or sweep running on this
    /// machine (they take turns).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}
