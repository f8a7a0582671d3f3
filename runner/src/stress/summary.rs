//! A stress run reduced: the verdicts counted, the wrong ones (against the
//! expected verdict), and each figure's spread over the runs, read from the
//! typed results (each probe kind names its figures: `Probe::numbers`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::StressPlan;
use crate::gate::result::GateResult;
use crate::host::signals;
use crate::kernel::noise::Noise;
use crate::stats::Spread;
use crate::verdict::Verdict;

/// One run, as the summary keeps it.
#[derive(Debug, Clone, Serialize)]
pub struct RunLine {
    pub verdict: Verdict,
    pub wrong: bool,
    pub reason: String,
    pub figures: BTreeMap<String, f64>,
    /// The gate's raw trial times and samples, for working out why a run
    /// went the way it did.
    pub run: Value,
}

/// The whole stress run, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub row: String,
    /// The server profile, or `python` for a row that runs no server (a
    /// gil-probe row), as gate reports name it.
    pub server: String,
    pub noise: Noise,
    pub runs: usize,
    pub expect: Option<Verdict>,
    pub verdicts: BTreeMap<String, usize>,
    pub wrong: usize,
    pub figures: BTreeMap<String, Spread>,
    pub interrupted: Option<String>,
    /// Process groups of the loads started (all stopped by now).
    pub load_pgids: Vec<i32>,
    pub results: Vec<RunLine>,
}

/// Whether `got` contradicts `expect` (cannot judge never does).
pub fn is_wrong(expect: Option<Verdict>, got: Verdict) -> bool {
    matches!(
        (expect, got),
        (Some(Verdict::Pass), Verdict::Fail) | (Some(Verdict::Fail), Verdict::Pass)
    )
}

/// The figures of one result worth a spread: the kind's own
/// ([`crate::probe::Figures::numbers`]), plus time to ready and time in all.
pub fn figures_of(result: &GateResult) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = result
        .judgement
        .figures
        .as_ref()
        .map(|f| f.numbers())
        .unwrap_or_default()
        .into_iter()
        .collect();
    if let Some(ms) = result.servers.first().and_then(|s| s.ready_ms) {
        out.insert("ready ms".into(), ms);
    }
    out.insert("gate ms".into(), result.elapsed_ms);
    // A figure the report cannot write (not a number) is none.
    out.retain(|_, x| x.is_finite());
    out
}

/// The summary of `results`.
pub fn summarise(
    plan: &StressPlan,
    results: &[GateResult],
    signal: Option<i32>,
    load_pgids: Vec<i32>,
) -> Summary {
    let mut verdicts = BTreeMap::new();
    let mut series: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut lines = Vec::new();
    for r in results {
        let verdict = r.verdict();
        *verdicts.entry(verdict.name().to_string()).or_insert(0) += 1;
        let figures = figures_of(r);
        for (k, x) in &figures {
            series.entry(k.clone()).or_default().push(*x);
        }
        lines.push(RunLine {
            verdict,
            wrong: is_wrong(plan.expect, verdict),
            reason: r.judgement.reason.clone(),
            figures,
            run: serde_json::to_value(&r.run).unwrap_or(Value::Null),
        });
    }
    Summary {
        row: plan.row.id.clone(),
        server: if plan.row.servers().is_empty() {
            crate::gate::NO_SERVER.into()
        } else {
            plan.profile.name.clone()
        },
        noise: plan.noise,
        runs: results.len(),
        expect: plan.expect,
        wrong: lines.iter().filter(|l| l.wrong).count(),
        verdicts,
        figures: series
            .iter()
            .filter_map(|(k, xs)| Spread::of(xs).map(|s| (k.clone(), s)))
            .collect(),
        interrupted: signal.map(|s| signals::name(s).to_string()),
        load_pgids,
        results: lines,
    }
}

/// The summary as terminal lines.
pub fn render(s: &Summary) -> String {
    let on = if s.server == crate::gate::NO_SERVER {
        "(a Python call, no server)".to_string()
    } else {
        format!("on {}", s.server)
    };
    let mut out = format!(
        "{} {on}: {} run(s), noise {}\n  verdicts:",
        s.row,
        s.runs,
        s.noise.name()
    );
    for (v, n) in &s.verdicts {
        out.push_str(&format!(" {v} {n}"));
    }
    out.push('\n');
    if let Some(e) = s.expect {
        out.push_str(&format!(
            "  wrong: {} of {} (expected {}; cannot judge is never wrong)\n",
            s.wrong,
            s.runs,
            e.name()
        ));
    }
    if !s.figures.is_empty() {
        let mut grid = crate::text::table::Grid::new(["figure", "median", "min", "max"]);
        for (k, sp) in &s.figures {
            grid.row([
                k.to_string(),
                format!("{:.2}", sp.median),
                format!("{:.2}", sp.min),
                format!("{:.2}", sp.max),
            ]);
        }
        out.push_str(&grid.right(&[1, 2, 3]).render("  "));
    }
    if let Some(i) = &s.interrupted {
        out.push_str(&format!("  interrupted by {i}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(row: &str) -> StressPlan {
        let specs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs");
        StressPlan {
            row: crate::spec::row::load_row(&specs.join(format!("{row}.yaml"))).unwrap(),
            profile: crate::spec::resolve_profile(&specs.join("servers"), "granian").unwrap(),
            noise: Noise::None,
            expect: None,
            runs: 1,
            limits: crate::host::limits::Limits::DEFAULT,
        }
    }

    #[test]
    fn a_row_without_a_server_is_not_said_to_run_on_one() {
        let s = summarise(&plan("GIL-numpy"), &[], None, Vec::new());
        assert_eq!(s.server, "python");
        let text = render(&s);
        assert!(
            text.starts_with("GIL-numpy (a Python call, no server):"),
            "{text}"
        );
        assert!(!text.contains("granian"), "{text}");
        // Its twin: a row on a server names it.
        let s = summarise(&plan("E19"), &[], None, Vec::new());
        assert!(render(&s).starts_with("E19 on granian:"), "{}", render(&s));
    }

    #[test]
    fn only_the_opposite_verdict_is_wrong() {
        use Verdict::*;
        assert!(is_wrong(Some(Pass), Fail));
        assert!(is_wrong(Some(Fail), Pass));
        assert!(!is_wrong(Some(Pass), Pass));
        assert!(!is_wrong(Some(Pass), CannotJudge));
        assert!(!is_wrong(Some(Fail), CannotJudge));
        assert!(!is_wrong(None, Fail));
    }
}
