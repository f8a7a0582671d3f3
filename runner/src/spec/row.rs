//! SPEC rows: the YAML gate definitions under `specs/`, parsed strictly and
//! validated into a plan the engine can run.
//!
//! Every number that belongs to a claim (thread counts, work size, trials,
//! thresholds) lives in the row, not in Rust. Unknown keys are errors, and
//! every error names the file, line, column and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{from_yaml, SpecError};
use super::locate::locate;

/// The largest file we read as a row; a row is a few hundred bytes.
const MAX_ROW_BYTES: u64 = 256 * 1024;

/// A row as written in its YAML file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RowFile {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub probe: ProbeKind,
    #[serde(default)]
    pub server: ServerSettings,
    pub trials: Trials,
    #[serde(rename = "pair-ratio", default)]
    pub pair_ratio: Option<PairRatioFile>,
    #[serde(rename = "keepalive-isolation", default)]
    pub keepalive_isolation: Option<KeepaliveFile>,
    #[serde(rename = "worker-census", default)]
    pub worker_census: Option<CensusFile>,
}

/// The trial budget: at least `min`, then more while the verdict is
/// ambiguous, up to `max`; still ambiguous at `max` means "cannot judge".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trials {
    pub min: u32,
    pub max: u32,
}

/// Which measurement a row runs; the row's block of the same name holds its
/// parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeKind {
    /// One request, then two at once on two connections, per mode (E19).
    PairRatio,
    /// A slow view on one kept-alive connection, a fast one on another (C5).
    KeepaliveIsolation,
    /// Which workers serve, and whether each one's runtime really runs (E15).
    WorkerCensus,
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 3] = [
        ProbeKind::PairRatio,
        ProbeKind::KeepaliveIsolation,
        ProbeKind::WorkerCensus,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::PairRatio => "pair-ratio",
            ProbeKind::KeepaliveIsolation => "keepalive-isolation",
            ProbeKind::WorkerCensus => "worker-census",
        }
    }
}

/// How the server is started: the knobs a profile maps to flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Handler threads per worker (`--blocking-threads` on granian).
    pub threads: Option<u32>,
    /// Worker processes.
    pub workers: Option<u32>,
    /// Whether the app is imported once in the master and inherited by
    /// forked workers (`true`), or imported by each worker itself, by spawn
    /// or by import after fork (`false`). Unset: the server's default.
    pub preload: Option<bool>,
    /// Extra environment for the server process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

impl ServerSettings {
    /// `self` with every knob `over` sets taken from `over`.
    pub fn overlaid(&self, over: &ServerSettings) -> ServerSettings {
        let mut env = self.env.clone();
        env.extend(over.env.clone());
        ServerSettings {
            threads: over.threads.or(self.threads),
            workers: over.workers.or(self.workers),
            preload: over.preload.or(self.preload),
            env,
        }
    }

    /// Short form for reports: `threads=2 workers=1`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = self.threads {
            parts.push(format!("threads={t}"));
        }
        if let Some(w) = self.workers {
            parts.push(format!("workers={w}"));
        }
        if let Some(p) = self.preload {
            parts.push(format!("preload={p}"));
        }
        if parts.is_empty() {
            "server defaults".into()
        } else {
            parts.join(" ")
        }
    }
}

/// One mode of a row, as written.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeFile {
    pub role: Role,
    /// The route (pair-ratio); `/work` routes get `kib` and `seed` added.
    pub path: Option<String>,
    /// Knobs for this mode's server, over the row's `server:`.
    pub server: Option<ServerSettings>,
    pub ratio_at_most: Option<f64>,
    pub ratio_at_least: Option<f64>,
}

/// The `pair-ratio:` block.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairRatioFile {
    /// KiB of fixed work per request.
    pub work_kib: u32,
    /// Untimed pairs per mode before trial 1.
    pub warmup: u32,
    pub modes: BTreeMap<String, ModeFile>,
    /// The control's ratio minus the mode under test's must reach this.
    pub gap_at_least: f64,
    /// The no-server control must read at most this, or there is no free core.
    pub capacity_at_most: f64,
    /// A figure this close to its bound is ambiguous: take more trials.
    pub margin: f64,
}

/// The `keepalive-isolation:` block.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeepaliveFile {
    /// How long the slow view on connection A sleeps (S).
    pub slow_ms: u64,
    /// How long after A's request the fast request goes out on B.
    pub fast_after_ms: u64,
    /// KiB of fixed work in each fast request (its digest is checked).
    pub fast_kib: u32,
    /// Modes: the ratio is B's latency over S.
    pub modes: BTreeMap<String, ModeFile>,
    /// Under test: B's warm-up request (before any slow view) over S.
    pub warmup_at_most: f64,
    /// Under test: A's slow reply arrives whole in about S.
    pub slow_at_least: f64,
    pub slow_at_most: f64,
    /// Under test: a third, fresh connection opened while A is busy, over S.
    pub third_at_most: f64,
    pub margin: f64,
}

/// The `worker-census:` block.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CensusFile {
    /// The route that reports whether this worker's runtime runs.
    pub runtime_path: String,
    /// Census requests, spread over fresh connections.
    pub requests: u32,
    /// Distinct worker pids the census must see.
    pub workers_at_least: u32,
    /// The most connections opened to find two distinct workers for a pair.
    pub connections_at_most: u32,
    /// Optional: the same work in parallel across processes.
    #[serde(rename = "pair-ratio")]
    pub pair_ratio: Option<PairRatioFile>,
}

/// What a mode is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The claim: this mode must meet its expectation.
    UnderTest,
    /// The proof the probe can fail: this mode must separate from the other,
    /// or the verdict is "cannot judge".
    Control,
}

/// A row that passed validation.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub probe: ProbeKind,
    pub server: ServerSettings,
    pub trials: Trials,
    pub plan: Plan,
    /// Where the row came from, for messages and annotations.
    pub file: PathBuf,
    /// The line of `id:`, for annotations pointing at the row.
    pub line: usize,
}

/// The probe-specific part of a validated row.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Plan {
    PairRatio(PairRatioPlan),
    KeepaliveIsolation(KeepalivePlan),
    WorkerCensus(CensusPlan),
}

/// A validated pair-ratio measurement.
#[derive(Debug, Clone, Serialize)]
pub struct PairRatioPlan {
    pub work_kib: u32,
    pub warmup: u32,
    pub under_test: Mode,
    pub control: Mode,
    pub gap_at_least: f64,
    pub capacity_at_most: f64,
    pub margin: f64,
}

/// A validated keepalive-isolation measurement.
#[derive(Debug, Clone, Serialize)]
pub struct KeepalivePlan {
    pub slow_ms: u64,
    pub fast_after_ms: u64,
    pub fast_kib: u32,
    pub under_test: Mode,
    pub control: Mode,
    pub warmup_at_most: f64,
    pub slow_at_least: f64,
    pub slow_at_most: f64,
    pub third_at_most: f64,
    pub margin: f64,
}

/// A validated worker census.
#[derive(Debug, Clone, Serialize)]
pub struct CensusPlan {
    pub runtime_path: String,
    pub requests: u32,
    pub workers_at_least: u32,
    pub connections_at_most: u32,
    pub pair_ratio: Option<PairRatioPlan>,
}

/// A validated mode: its route (where it has one), the server it runs on
/// (the row's settings with the mode's own over them) and its bound.
#[derive(Debug, Clone, Serialize)]
pub struct Mode {
    pub name: String,
    pub path: String,
    pub server: ServerSettings,
    pub bound: Bound,
}

/// A one-sided limit on a ratio.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    AtMost(f64),
    AtLeast(f64),
}

impl Bound {
    pub fn holds(self, value: f64) -> bool {
        match self {
            Bound::AtMost(limit) => value <= limit,
            Bound::AtLeast(limit) => value >= limit,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::AtMost(v) => write!(f, "<= {v:.2}x"),
            Bound::AtLeast(v) => write!(f, ">= {v:.2}x"),
        }
    }
}

/// Reads and validates one row file.
pub fn load_row(file: &Path) -> Result<Row, SpecError> {
    let source = read_bounded(file)?;
    parse_row(file, &source)
}

/// Reads a spec file, refusing oversized and non-UTF-8 files with a message.
pub fn read_bounded(file: &Path) -> Result<String, SpecError> {
    let meta =
        std::fs::metadata(file).map_err(|e| SpecError::new(file, format!("cannot read: {e}")))?;
    if meta.len() > MAX_ROW_BYTES {
        return Err(SpecError::new(
            file,
            format!(
                "is {} bytes; a spec file is at most {MAX_ROW_BYTES}",
                meta.len()
            ),
        ));
    }
    let bytes =
        std::fs::read(file).map_err(|e| SpecError::new(file, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let valid = &e.as_bytes()[..offset];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        let column = offset - valid.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) + 1;
        SpecError::new(file, "is not UTF-8 text").at(super::locate::Location { line, column })
    })
}

/// Parses and validates a row from its source text.
pub fn parse_row(file: &Path, source: &str) -> Result<Row, SpecError> {
    if source.trim().is_empty() {
        return Err(SpecError::new(file, "is empty; a row needs id, title, claim, probe, trials and its probe block (see specs/README.md)"));
    }
    let raw: RowFile = serde_norway::from_str(source).map_err(|e| from_yaml(file, &e))?;
    validate(file, source, raw)
}

fn validate(file: &Path, source: &str, raw: RowFile) -> Result<Row, SpecError> {
    let err = |path: &[&str], message: String| {
        SpecError::new(file, message)
            .at(locate(source, path))
            .key(path.join("."))
    };
    if raw.id.trim().is_empty()
        || !raw
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(err(
            &["id"],
            format!("{:?} is not a row id (letters, digits, - and _)", raw.id),
        ));
    }
    if let Some(stem) = file.file_stem().and_then(|s| s.to_str()) {
        if stem != raw.id && file.parent().and_then(|p| p.file_name()) == Some("specs".as_ref()) {
            return Err(err(
                &["id"],
                format!(
                    "is {:?} but the file is {stem}.yaml; rename one so `runner gate {}` finds it",
                    raw.id, raw.id
                ),
            ));
        }
    }
    if !(1..=1000).contains(&raw.trials.min) {
        return Err(err(
            &["trials", "min"],
            format!("is {}; it must be between 1 and 1000", raw.trials.min),
        ));
    }
    if !(raw.trials.min..=1000).contains(&raw.trials.max) {
        return Err(err(
            &["trials", "max"],
            format!(
                "is {}; it must be between trials.min ({}) and 1000",
                raw.trials.max, raw.trials.min
            ),
        ));
    }
    check_settings(&["server"], &raw.server, &err)?;
    let blocks = [
        (ProbeKind::PairRatio, raw.pair_ratio.is_some()),
        (
            ProbeKind::KeepaliveIsolation,
            raw.keepalive_isolation.is_some(),
        ),
        (ProbeKind::WorkerCensus, raw.worker_census.is_some()),
    ];
    for (kind, present) in blocks {
        if present && kind != raw.probe {
            return Err(err(
                &[kind.name()],
                format!(
                    "is a {} block, but the row's probe is {}; remove it or change `probe`",
                    kind.name(),
                    raw.probe.name()
                ),
            ));
        }
    }
    let missing = |kind: ProbeKind| {
        err(
            &["probe"],
            format!(
                "is {} but the row has no `{}:` block",
                kind.name(),
                kind.name()
            ),
        )
    };
    let plan = match raw.probe {
        ProbeKind::PairRatio => {
            let block = raw.pair_ratio.as_ref().ok_or_else(|| missing(raw.probe))?;
            Plan::PairRatio(validate_pair_ratio(
                &["pair-ratio"],
                block,
                &raw.server,
                &err,
            )?)
        }
        ProbeKind::KeepaliveIsolation => {
            let block = raw
                .keepalive_isolation
                .as_ref()
                .ok_or_else(|| missing(raw.probe))?;
            Plan::KeepaliveIsolation(validate_keepalive(block, &raw.server, &err)?)
        }
        ProbeKind::WorkerCensus => {
            let block = raw
                .worker_census
                .as_ref()
                .ok_or_else(|| missing(raw.probe))?;
            Plan::WorkerCensus(validate_census(block, &raw.server, &err)?)
        }
    };
    Ok(Row {
        line: locate(source, &["id"]).line,
        id: raw.id,
        title: raw.title,
        claim: raw.claim,
        probe: raw.probe,
        server: raw.server,
        trials: raw.trials,
        plan,
        file: file.to_path_buf(),
    })
}

type ErrAt<'a> = dyn Fn(&[&str], String) -> SpecError + 'a;

fn ratio_in_range(path: &[&str], v: f64, err: &ErrAt<'_>) -> Result<(), SpecError> {
    if !v.is_finite() || !(0.0..=100.0).contains(&v) {
        return Err(err(
            path,
            format!("is {v}; it must be a ratio between 0 and 100"),
        ));
    }
    Ok(())
}

fn check_settings(path: &[&str], s: &ServerSettings, err: &ErrAt<'_>) -> Result<(), SpecError> {
    for (knob, value) in [("threads", s.threads), ("workers", s.workers)] {
        if let Some(v) = value {
            if !(1..=256).contains(&v) {
                let mut at = path.to_vec();
                at.push(knob);
                return Err(err(&at, format!("is {v}; it must be between 1 and 256")));
            }
        }
    }
    Ok(())
}

/// The one under-test and one control mode of a block.
fn validate_modes(
    block: &str,
    prefix: &[&str],
    modes: &BTreeMap<String, ModeFile>,
    row_server: &ServerSettings,
    needs_path: bool,
    err: &ErrAt<'_>,
) -> Result<(Mode, Mode), SpecError> {
    let mut at_modes = prefix.to_vec();
    at_modes.push("modes");
    if modes.len() != 2 {
        return Err(err(
            &at_modes,
            format!(
                "has {} modes; a {block} row has exactly two: one under-test, one control",
                modes.len()
            ),
        ));
    }
    let mut under_test = None;
    let mut control = None;
    for (name, mode) in modes {
        let at = |key: &'static str| {
            let mut v = at_modes.clone();
            v.push(name.as_str());
            v.push(key);
            v
        };
        let path = match (&mode.path, needs_path) {
            (Some(p), true) => {
                if !p.starts_with('/') || p.contains(char::is_whitespace) {
                    return Err(err(
                        &at("path"),
                        format!("{p:?} must be a route starting with / and without spaces"),
                    ));
                }
                p.clone()
            }
            (None, true) => {
                return Err(err(
                    &at("role"),
                    "needs a `path` (the route this mode requests)".into(),
                ))
            }
            (Some(_), false) => {
                return Err(err(
                    &at("path"),
                    format!("a {block} mode takes no `path`; its routes are fixed by the probe"),
                ))
            }
            (None, false) => String::new(),
        };
        let bound = match (mode.ratio_at_most, mode.ratio_at_least) {
            (Some(v), None) => Bound::AtMost(v),
            (None, Some(v)) => Bound::AtLeast(v),
            _ => {
                return Err(err(
                    &at("role"),
                    "needs exactly one of ratio_at_most and ratio_at_least".into(),
                ))
            }
        };
        let (Bound::AtMost(v) | Bound::AtLeast(v)) = bound;
        ratio_in_range(&at("role"), v, err)?;
        let server = match &mode.server {
            Some(over) => {
                check_settings(&at("server"), over, err)?;
                row_server.overlaid(over)
            }
            None => row_server.clone(),
        };
        let slot = match mode.role {
            Role::UnderTest => &mut under_test,
            Role::Control => &mut control,
        };
        if slot.is_some() {
            return Err(err(
                &at("role"),
                format!(
                    "a second {:?} mode; a {block} row has one mode under test and one control",
                    mode.role
                ),
            ));
        }
        *slot = Some(Mode {
            name: name.clone(),
            path,
            server,
            bound,
        });
    }
    match (under_test, control) {
        (Some(u), Some(c)) if u.path == c.path && u.server == c.server => Err(err(
            &at_modes,
            format!(
                "{} and {} are the same measurement (same route, same server); only noise could separate them. \
                 Give them different routes or different `server:` knobs",
                u.name, c.name
            ),
        )),
        (Some(u), Some(c)) => Ok((u, c)),
        _ => Err(err(&at_modes, "needs one mode with role under-test and one with role control".into())),
    }
}

fn validate_pair_ratio(
    prefix: &[&str],
    block: &PairRatioFile,
    row_server: &ServerSettings,
    err: &ErrAt<'_>,
) -> Result<PairRatioPlan, SpecError> {
    let at = |key: &'static str| {
        let mut v = prefix.to_vec();
        v.push(key);
        v
    };
    // 64 KiB is the releasing buffer; the work must be whole buffers.
    if block.work_kib == 0 || block.work_kib % 64 != 0 || block.work_kib > 1 << 20 {
        return Err(err(
            &at("work_kib"),
            format!(
                "is {}; it must be a multiple of 64 between 64 and 1048576",
                block.work_kib
            ),
        ));
    }
    if block.warmup > 100 {
        return Err(err(
            &at("warmup"),
            format!("is {}; at most 100", block.warmup),
        ));
    }
    ratio_in_range(&at("gap_at_least"), block.gap_at_least, err)?;
    ratio_in_range(&at("capacity_at_most"), block.capacity_at_most, err)?;
    ratio_in_range(&at("margin"), block.margin, err)?;
    let (under_test, control) =
        validate_modes("pair-ratio", prefix, &block.modes, row_server, true, err)?;
    Ok(PairRatioPlan {
        work_kib: block.work_kib,
        warmup: block.warmup,
        under_test,
        control,
        gap_at_least: block.gap_at_least,
        capacity_at_most: block.capacity_at_most,
        margin: block.margin,
    })
}

fn validate_keepalive(
    block: &KeepaliveFile,
    row_server: &ServerSettings,
    err: &ErrAt<'_>,
) -> Result<KeepalivePlan, SpecError> {
    const B: &str = "keepalive-isolation";
    if !(50..=60_000).contains(&block.slow_ms) {
        return Err(err(
            &[B, "slow_ms"],
            format!("is {}; it must be between 50 and 60000", block.slow_ms),
        ));
    }
    if block.fast_after_ms >= block.slow_ms / 2 {
        return Err(err(
            &[B, "fast_after_ms"],
            format!(
                "is {}; it must be under half of slow_ms ({})",
                block.fast_after_ms, block.slow_ms
            ),
        ));
    }
    if block.fast_kib == 0 || block.fast_kib % 64 != 0 || block.fast_kib > 1 << 16 {
        return Err(err(
            &[B, "fast_kib"],
            format!(
                "is {}; it must be a multiple of 64 between 64 and 65536",
                block.fast_kib
            ),
        ));
    }
    for (key, v) in [
        ("warmup_at_most", block.warmup_at_most),
        ("slow_at_least", block.slow_at_least),
        ("slow_at_most", block.slow_at_most),
        ("third_at_most", block.third_at_most),
        ("margin", block.margin),
    ] {
        ratio_in_range(&[B, key], v, err)?;
    }
    if block.slow_at_least > block.slow_at_most {
        return Err(err(&[B, "slow_at_least"], "is above slow_at_most".into()));
    }
    let (under_test, control) = validate_modes(B, &[B], &block.modes, row_server, false, err)?;
    Ok(KeepalivePlan {
        slow_ms: block.slow_ms,
        fast_after_ms: block.fast_after_ms,
        fast_kib: block.fast_kib,
        under_test,
        control,
        warmup_at_most: block.warmup_at_most,
        slow_at_least: block.slow_at_least,
        slow_at_most: block.slow_at_most,
        third_at_most: block.third_at_most,
        margin: block.margin,
    })
}

fn validate_census(
    block: &CensusFile,
    row_server: &ServerSettings,
    err: &ErrAt<'_>,
) -> Result<CensusPlan, SpecError> {
    const B: &str = "worker-census";
    if !block.runtime_path.starts_with('/') {
        return Err(err(
            &[B, "runtime_path"],
            format!("{:?} must start with /", block.runtime_path),
        ));
    }
    if !(1..=1000).contains(&block.requests) {
        return Err(err(
            &[B, "requests"],
            format!("is {}; it must be between 1 and 1000", block.requests),
        ));
    }
    let workers = row_server.workers.unwrap_or(1);
    if block.workers_at_least < 2 || block.workers_at_least > workers {
        return Err(err(
            &[B, "workers_at_least"],
            format!(
                "is {}; it must be at least 2 and at most the row's server.workers ({workers})",
                block.workers_at_least
            ),
        ));
    }
    if !(2..=256).contains(&block.connections_at_most) {
        return Err(err(
            &[B, "connections_at_most"],
            format!(
                "is {}; it must be between 2 and 256",
                block.connections_at_most
            ),
        ));
    }
    let pair_ratio = match &block.pair_ratio {
        Some(p) => Some(validate_pair_ratio(&[B, "pair-ratio"], p, row_server, err)?),
        None => None,
    };
    Ok(CensusPlan {
        runtime_path: block.runtime_path.clone(),
        requests: block.requests,
        workers_at_least: block.workers_at_least,
        connections_at_most: block.connections_at_most,
        pair_ratio,
    })
}

/// The JSON Schema of a row file (`specs/row.schema.json`), for editors.
pub fn row_schema() -> String {
    let schema = schemars::schema_for!(RowFile);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}
