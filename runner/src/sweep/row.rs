//! Sweep rows: `specs/sweeps/ID.yaml`, a sweep written down so that it is
//! run the same way each time (`runner sweep ID`). A sweep row has no
//! verdict (a throughput figure is the machine's as much as the server's,
//! rule 1), so it is a file of its own kind in a folder of its own, never
//! listed among the gates.
//!
//! The block is a [`SweepInput`], the same the flags of `runner sweep`
//! build, checked by the same code; a bad value is reported at its file,
//! line, column and key (`sweep.threads`), as a gate row's is.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::input::{SweepField, SweepInput};
use crate::spec::error::from_yaml;
use crate::spec::locate::locate;
use crate::spec::{read_bounded, row_files, SpecError};

/// A sweep row as written in its YAML file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepRowFile {
    /// The row's id: the file's name without `.yaml` (`runner sweep ID`).
    pub id: String,
    pub title: String,
    /// The server's claim the figures bear on, in words.
    pub claim: String,
    pub sweep: SweepInput,
}

/// A sweep row that passed validation.
#[derive(Debug, Clone)]
pub struct SweepRow {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub file: PathBuf,
    /// The `sweep:` block, its `app_dir` resolved from the file's folder.
    pub input: SweepInput,
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
}

/// The row key an input field is written as.
pub fn key(field: SweepField) -> &'static str {
    match field {
        SweepField::Server => "server",
        SweepField::Paths => "paths",
        SweepField::Threads => "threads",
        SweepField::Workers => "workers",
        SweepField::Connections => "connections",
        SweepField::Duration => "duration",
        SweepField::Warmup => "warmup",
        SweepField::RequestTimeoutMs => "request_timeout_ms",
        SweepField::App => "app",
        SweepField::AppDir => "app_dir",
        SweepField::ReadyPath => "ready_path",
        SweepField::Env => "env",
        SweepField::ReadyTimeoutMs => "ready_timeout_ms",
    }
}

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
    let mut input = raw.sweep;
    let base = file.parent().unwrap_or(Path::new("."));
    input.app_dir = input.app_dir.map(|d| base.join(d));
    // The input's own checks, the same the flags get: a row cannot say
    // what the command line could not.
    if let Err(e) = input.check(fixture_dir) {
        return Err(err(&["sweep", key(e.field)], e.detail()));
    }
    Ok(SweepRow {
        id: raw.id,
        title: raw.title,
        claim: raw.claim,
        file: file.to_path_buf(),
        input,
    })
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
    fn a_row_takes_the_inputs_defaults() {
        use crate::sweep::input::{DEFAULT_CONNECTIONS, DEFAULT_DURATION, DEFAULT_SERVER};
        let row = parse_at("s1", GOOD).unwrap();
        assert_eq!(row.input.threads, [1, 2]);
        assert_eq!(row.input.connections, DEFAULT_CONNECTIONS);
        assert_eq!(row.input.duration, DEFAULT_DURATION);
        assert_eq!(row.input.server, DEFAULT_SERVER);
        assert_eq!(row.input.paths, ["/work?mode=release&kib=64"]);
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
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  env:\n    1BAD: x\n",
                "sweep.env",
            ),
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  env:\n    A-B: x\n",
                "sweep.env",
            ),
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  env:\n    NUL: \"a\\0b\"\n",
                "sweep.env",
            ),
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  ready_timeout_ms: 10\n",
                "sweep.ready_timeout_ms",
            ),
            (
                "  threads: [1, 2]\n",
                "  threads: [1, 2]\n  ready_timeout_ms: 100000000\n",
                "sweep.ready_timeout_ms",
            ),
        ] {
            let e = parse_at("s1", &GOOD.replace(from, to)).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
        }
    }

    #[test]
    fn the_apps_settings_reach_the_servers_profile() {
        // The twin of the env and ready_timeout_ms errors above: good
        // values are taken, over the profile's own.
        let good = format!(
            "{GOOD}  env:\n    OPENBLAS_NUM_THREADS: \"1\"\n    _X2: ''\n  ready_timeout_ms: 180000\n"
        );
        let row = parse_at("s1", &good).unwrap();
        let servers = fixture().join("../../specs/servers");
        let plan = row.input.plan(&fixture(), &servers).unwrap();
        assert_eq!(plan.profile.env["OPENBLAS_NUM_THREADS"], "1");
        assert_eq!(plan.profile.env["PYTHONUNBUFFERED"], "1");
        assert_eq!(plan.profile.ready.timeout_ms, 180_000);
        // The report says them: they are the app's, not the profile's.
        assert_eq!(plan.app_env.len(), 2);
        // Without them, the profile's own.
        let plan = parse_at("s1", GOOD)
            .unwrap()
            .input
            .plan(&fixture(), &servers)
            .unwrap();
        assert!(!plan.profile.env.contains_key("OPENBLAS_NUM_THREADS"));
        assert!(plan.app_env.is_empty());
        assert_eq!(plan.profile.ready.timeout_ms, 20_000);
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
