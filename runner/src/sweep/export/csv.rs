//! `--csv PATH`: the table, one row per setting, for spreadsheets and
//! scripts. Empty cells where a figure does not exist (never 0).

use crate::sweep::table::{self, Row};
use crate::sweep::SweepResult;

const HEADER: [&str; 20] = [
    "setting",
    "route",
    "path",
    "threads",
    "workers",
    "requests",
    "req_per_s",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
    "cpu_pct",
    "run_queue_pct",
    "pss_mib",
    "scaling",
    "errors",
    "digest_mismatches",
    "check",
    "status",
    "reason",
];

fn cells(r: &Row) -> [String; 20] {
    let f = |x: Option<f64>, d: usize| x.map_or_else(String::new, |v| format!("{v:.d$}"));
    let n = |x: Option<u64>| x.map_or_else(String::new, |v| v.to_string());
    [
        r.setting.clone(),
        r.route.clone(),
        r.path.clone(),
        n(r.threads.map(u64::from)),
        n(r.workers.map(u64::from)),
        n(r.requests),
        f(r.requests_per_s, 2),
        f(r.p50_ms, 3),
        f(r.p90_ms, 3),
        f(r.p99_ms, 3),
        f(r.max_ms, 3),
        f(r.cpu_pct, 1),
        f(r.run_queue_pct, 1),
        f(r.pss_mib, 1),
        f(r.scaling, 3),
        r.errors.clone(),
        n(r.digest_mismatches),
        r.check.clone(),
        r.status.label().to_string(),
        r.reason.clone().unwrap_or_default(),
    ]
}

pub fn render(result: &SweepResult) -> Result<String, String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER).map_err(|e| e.to_string())?;
    for r in table::rows(result) {
        w.write_record(cells(&r)).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}
