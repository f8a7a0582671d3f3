//! Sweep rows: `specs/sweeps/ID.yaml`, a sweep written down so that it is
//! run the same way each time (`runner sweep ID`). A sweep row has no
//! verdict (a throughput figure is the machine's as much as the server's,
//! rule 1), so it is a file of its own kind in a folder of its own, never
//! listed among the gates.
//!
//! The block's keys are the flags of `runner sweep`, and are checked by the
//! same code ([`SweepOptions::from_args`]); a bad value is reported at its
//! file, line, column and key, as a gate row's is.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::options::SweepOptions;
use crate::cli::SweepArgs;
use crate::host::limits::Limits;
use crate::spec::error::from_yaml;
use crate::spec::locate::locate;
use crate::spec::{read_bounded, row_files, SpecError};

/// The flags' defaults, which a row's omitted keys take too (a test below
/// checks they match the flags').
pub const DEFAULT_SERVER: &str = "granian";
pub const DEFAULT_THREADS: [u32; 4] = [1, 2, 4, 8];
pub const DEFAULT_CONNECTIONS: u32 = 8;
pub const DEFAULT_DURATION: &str = "5s";
pub const DEFAULT_WARMUP: &str = "1s";

/// A sweep row as written in its YAML file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepRowFile {
    /// The row's id: the file's name without `.yaml` (`runner sweep ID`).
    pub id: String,
    pub title: String,
    /// The server's claim the figures bear on, in words.
    pub claim: String,
    pub sweep: SweepBlock,
}

/// What to sweep: the flags of `runner sweep`, as keys.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepBlock {
    /// Server profile: a name from specs/servers/ (`--server` overrides it).
    #[serde(default = "default_server")]
    pub server: String,
    /// Routes, interleaved at every setting; each is a line on the plot.
    pub paths: Vec<String>,
    /// Handler threads per setting.
    #[serde(default = "default_threads")]
    pub threads: Vec<u32>,
    /// Worker processes per setting; empty: the server's own.
    #[serde(default)]
    pub workers: Vec<u32>,
    /// Kept-alive connections of the closed loop.
    #[serde(default = "default_connections")]
    pub connections: u32,
    /// The measured window of each setting (`5s`, `500ms`, `1m`).
    #[serde(default = "default_duration")]
    pub duration: String,
    /// Load before the window, not counted.
    #[serde(default = "default_warmup")]
    pub warmup: String,
    /// Bound on any one request.
    #[serde(default = "default_request_timeout_ms")]
    pub request_timeout_ms: u64,
    /// Your own WSGI app, `MODULE:ATTR` (needs `app_dir`); the fixture by
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// The folder `app` is imported from, relative to this file's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_dir: Option<PathBuf>,
    /// The path polled until the server answers; default: the route under
    /// test with `app`, the profile's `ready.path` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_path: Option<String>,
}

fn default_server() -> String {
    DEFAULT_SERVER.into()
}
fn default_threads() -> Vec<u32> {
    DEFAULT_THREADS.to_vec()
}
fn default_connections() -> u32 {
    DEFAULT_CONNECTIONS
}
fn default_duration() -> String {
    DEFAULT_DURATION.into()
}
fn default_warmup() -> String {
    DEFAULT_WARMUP.into()
}
fn default_request_timeout_ms() -> u64 {
    Limits::DEFAULT_REQUEST_MS
}

/// A sweep row that passed validation.
#[derive(Debug, Clone)]
pub struct SweepRow {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub file: PathBuf,
    pub block: SweepBlock,
}

/// What a sweep report says of the row it ran.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RowRef {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub file: PathBuf,
}

impl SweepRow {
    pub fn reference(&self) -> RowRef {
        RowRef {
            id: self.id.clone(),
            title: self.title.clone(),
            claim: self.claim.clone(),
            file: self.file.clone(),
        }
    }

    /// The row as `runner sweep` flags, with the command line's report
    /// paths, machine wait and `--server` (which overrides the row's).
    pub fn args(&self, cli: &SweepArgs) -> SweepArgs {
        let b = &self.block;
        let base = self.file.parent().unwrap_or(Path::new("."));
        SweepArgs {
            row: None,
            paths: b.paths.clone(),
            server: Some(cli.server.clone().unwrap_or_else(|| b.server.clone())),
            threads: b.threads.clone(),
            workers: b.workers.clone(),
            connections: b.connections,
            duration: b.duration.clone(),
            warmup: b.warmup.clone(),
            app: b.app.clone(),
            app_dir: b.app_dir.as_ref().map(|d| base.join(d)),
            ready_path: b.ready_path.clone(),
            json: cli.json.clone(),
            csv: cli.csv.clone(),
            markdown: cli.markdown.clone(),
            svg: cli.svg.clone(),
            request_timeout_ms: b.request_timeout_ms,
            machine_wait_ms: cli.machine_wait_ms,
        }
    }
}

/// Each `runner sweep` flag and the row key it is written as, longest
/// first (`--app-dir` before `--app`).
const KEYS: [(&str, &str); 10] = [
    ("--request-timeout-ms", "request_timeout_ms"),
    ("--ready-path", "ready_path"),
    ("--connections", "connections"),
    ("--duration", "duration"),
    ("--app-dir", "app_dir"),
    ("--threads", "threads"),
    ("--workers", "workers"),
    ("--warmup", "warmup"),
    ("--path", "paths"),
    ("--app", "app"),
];

/// Reads and validates one sweep row. `fixture_dir` is the project's
/// fixtures/bareapp (the default app).
pub fn load(file: &Path, fixture_dir: &Path) -> Result<SweepRow, SpecError> {
    let source = read_bounded(file)?;
    parse(file, &source, fixture_dir)
}

/// Parses and validates a sweep row from its source text.
pub fn parse(file: &Path, source: &str, fixture_dir: &Path) -> Result<SweepRow, SpecError> {
    if source.trim().is_empty() {
        return Err(SpecError::new(
            file,
            "is empty; a sweep row needs id, title, claim and a `sweep:` block with `paths` (see specs/README.md)",
        ));
    }
    let raw: SweepRowFile = serde_norway::from_str(source).map_err(|e| from_yaml(file, &e))?;
    let err = |path: &[&str], message: String| {
        SpecError::new(file, message)
            .at(locate(source, path))
            .key(path.join("."))
    };
    crate::spec::row::check_id(file, &raw.id, Some("sweep"), &err)?;
    let row = SweepRow {
        id: raw.id,
        title: raw.title,
        claim: raw.claim,
        file: file.to_path_buf(),
        block: raw.sweep,
    };
    // The flags' own checks, so a row cannot say what the command line
    // could not; their messages name the flag, which is turned into the key.
    let cli = SweepArgs::default_for_row();
    if let Err(message) = SweepOptions::from_args(&row.args(&cli), fixture_dir) {
        let (key, rest) = KEYS
            .iter()
            .find_map(|(flag, key)| message.strip_prefix(flag).map(|rest| (*key, rest)))
            .unwrap_or(("paths", message.as_str()));
        let rest = rest.trim_start_matches([':', ' ']);
        return Err(err(&["sweep", key], rest.to_string()));
    }
    Ok(row)
}

/// Resolves `wanted`: a row id in `dir` (specs/sweeps) or a path to a row
/// file.
pub fn resolve(dir: &Path, wanted: &str, fixture_dir: &Path) -> Result<SweepRow, SpecError> {
    let as_path = Path::new(wanted);
    if crate::spec::names_a_file(wanted) {
        return load(as_path, fixture_dir);
    }
    let file = dir.join(format!("{wanted}.yaml"));
    if !file.is_file() {
        return Err(SpecError::new(
            dir,
            format!(
                "no sweep row {wanted:?}; known sweep rows: {} (or give a path to a sweep row file)",
                crate::spec::known_ids(dir)?
            ),
        ));
    }
    load(&file, fixture_dir)
}

/// The sweep row files in `dir`, sorted; none when the folder is missing.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, SpecError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    row_files(dir)
}

/// The JSON Schema of a sweep row file (`specs/sweeps/row.schema.json`).
pub fn schema() -> String {
    let schema = schemars::schema_for!(SweepRowFile);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .join("fixtures/bareapp")
    }

    fn parse_at(name: &str, source: &str) -> Result<SweepRow, SpecError> {
        parse(
            Path::new(&format!("specs/sweeps/{name}.yaml")),
            source,
            &fixture(),
        )
    }

    const GOOD: &str = "id: s1\ntitle: t\nclaim: c\nsweep:\n  paths: ['/work?mode=release&kib=64']\n  threads: [1, 2]\n";

    #[test]
    fn a_row_takes_the_flags_defaults() {
        let row = parse_at("s1", GOOD).unwrap();
        assert_eq!(row.block.threads, [1, 2]);
        assert_eq!(row.block.connections, DEFAULT_CONNECTIONS);
        assert_eq!(row.block.duration, DEFAULT_DURATION);
        assert_eq!(row.block.server, DEFAULT_SERVER);
        let args = row.args(&SweepArgs::default_for_row());
        assert_eq!(args.paths, ["/work?mode=release&kib=64"]);
        assert_eq!(args.server.as_deref(), Some("granian"));
    }

    #[test]
    fn a_bad_value_names_its_key_and_line() {
        let bad = GOOD.replace("threads: [1, 2]", "threads: [1, 0]");
        let e = parse_at("s1", &bad).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("sweep.threads"), "{e}");
        assert_eq!(e.location.unwrap().line, 6, "{e}");
        assert!(e.message.contains("use 1 to 256"), "{e}");
        // The same row with good threads passes (above); each key's error
        // is the flag's.
        for (from, to, key) in [
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  connections: 0\n",
                "sweep.connections",
            ),
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  duration: 5\n",
                "sweep.duration",
            ),
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  warmup: 1h\n",
                "sweep.warmup",
            ),
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  app: nope\n  app_dir: .\n",
                "sweep.app",
            ),
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  app: a:b\n  app_dir: no/such\n",
                "sweep.app_dir",
            ),
            (
                "paths: ['/work?mode=release&kib=64']",
                "paths: []",
                "sweep.paths",
            ),
        ] {
            let e = parse_at("s1", &GOOD.replace(from, to)).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
        }
    }

    #[test]
    fn the_flags_defaults_are_the_rows() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["runner", "sweep"]).unwrap();
        let crate::cli::Command::Sweep(args) = cli.command else {
            panic!("not a sweep")
        };
        assert_eq!(args.threads, DEFAULT_THREADS);
        assert_eq!(args.connections, DEFAULT_CONNECTIONS);
        assert_eq!(args.duration, DEFAULT_DURATION);
        assert_eq!(args.warmup, DEFAULT_WARMUP);
        assert_eq!(args.request_timeout_ms, default_request_timeout_ms());
        // A row with route flags beside it is refused: the row stands for them.
        for extra in [["--threads", "1"], ["--path", "/"], ["--duration", "1s"]] {
            let e = crate::cli::Cli::try_parse_from(
                ["runner", "sweep", "blocking-threads"]
                    .into_iter()
                    .chain(extra),
            )
            .unwrap_err();
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ArgumentConflict,
                "{extra:?}"
            );
        }
        // Its twin: report flags and --server go with a row.
        assert!(crate::cli::Cli::try_parse_from([
            "runner",
            "sweep",
            "blocking-threads",
            "--server",
            "waitress",
            "--json",
            "x.json"
        ])
        .is_ok());
    }

    #[test]
    fn unknown_keys_and_a_wrong_id_are_errors() {
        let e = parse_at("s1", &GOOD.replace("  threads:", "  thread:")).unwrap_err();
        assert!(e.message.contains("thread"), "{e}");
        let e = parse_at("other", GOOD).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("id"), "{e}");
        assert!(parse_at("s1", "").is_err());
    }
}
