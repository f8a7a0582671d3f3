//! The sweep as rows of cells, shared by the terminal, CSV and Markdown
//! outputs so that they always say the same thing.

use super::{SettingResult, Status, SweepResult};
use crate::load::LoadResult;

/// One setting, as the tables show it.
#[derive(Debug, Clone)]
pub struct Row {
    pub setting: String,
    pub route: String,
    pub path: String,
    pub threads: Option<u32>,
    pub workers: Option<u32>,
    pub requests: Option<u64>,
    pub requests_per_s: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub cpu_pct: Option<f64>,
    pub run_queue_pct: Option<f64>,
    /// The server's peak PSS over the window, MiB (every process).
    pub pss_mib: Option<f64>,
    pub scaling: Option<f64>,
    /// `none`, or counts by kind.
    pub errors: String,
    pub digest_mismatches: Option<u64>,
    /// How the work was checked: `digest N ok`, `digest N wrong of M`,
    /// `work not verified`.
    pub check: String,
    pub status: Status,
    pub reason: Option<String>,
}

/// How each reply's work was checked, in words.
pub fn check_text(load: &LoadResult) -> String {
    if !load.work_verified {
        return "work not verified (status and length only)".into();
    }
    let wrong = load.errors.get(crate::load::outcome::ErrorKind::Digest);
    if wrong == 0 {
        format!("digest {} ok", load.digests_checked)
    } else {
        format!("digest {wrong} WRONG of {}", load.digests_checked)
    }
}

fn row(r: &SettingResult) -> Row {
    let load = r.load.as_ref();
    let lat = load.and_then(|l| l.latency);
    let mut errors = load.map_or_else(|| "-".to_string(), |l| l.errors.describe());
    if let Some(l) = load {
        if l.warmup_errors.total() > 0 {
            errors = format!("{errors} (+ warm-up: {})", l.warmup_errors.describe());
        }
    }
    Row {
        setting: r.setting.describe(),
        route: r.setting.label.clone(),
        path: r.setting.path.clone(),
        threads: r.setting.threads,
        workers: r.setting.workers,
        requests: load.map(|l| l.requests),
        requests_per_s: load.map(|l| l.requests_per_s),
        p50_ms: lat.map(|l| l.p50_ms),
        p90_ms: lat.map(|l| l.p90_ms),
        p99_ms: lat.map(|l| l.p99_ms),
        max_ms: lat.map(|l| l.max_ms),
        cpu_pct: r.cpu.map(|c| c.cpu_pct),
        run_queue_pct: r.cpu.map(|c| c.run_queue_pct),
        pss_mib: r.pss.as_ref().map(|p| p.peak_mib()),
        scaling: r.scaling,
        errors,
        digest_mismatches: load
            .filter(|l| l.work_verified)
            .map(|l| l.errors.get(crate::load::outcome::ErrorKind::Digest)),
        check: load.map_or_else(|| "-".to_string(), check_text),
        status: r.status,
        reason: r.reason.clone(),
    }
}

pub fn rows(result: &SweepResult) -> Vec<Row> {
    result.settings.iter().map(row).collect()
}

/// A figure with `decimals`, or `-`.
pub fn num(x: Option<f64>, decimals: usize) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

/// The sweep's settings line: what was loaded, how, on what.
pub fn describe(result: &SweepResult) -> String {
    let mut out = format!(
        "{} connection(s), {:.1} s warm-up + {:.1} s measured per setting, request timeout {} ms; app {} in {}",
        result.connections,
        result.warmup_s,
        result.duration_s,
        result.request_timeout_ms,
        result.app,
        result.app_dir.display()
    );
    if !result.env.is_empty() {
        let env: Vec<String> = result.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!(" with {}", env.join(" ")));
    }
    out
}
