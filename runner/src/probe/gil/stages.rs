//! The stage table: one request cut into stages (tokenize, to numpy, the
//! forward pass, tolist, `json.dumps`), each read by the GIL probe, and the
//! two ceilings they imply (`runner gil-probe --setup M:F --stage NAME...`).
//!
//! - A stage's ms is its median time per call alone, timed by the probe
//!   before its spinner starts (under the spinner, a stage that drops the
//!   GIL often waits for it at every return: the MiniLM forward pass read
//!   1.3 s a call there, 25 ms alone); its share is of the stages' sum;
//!   releases or holds is the probe's answer for it.
//! - The held share is the share of the request in stages that hold.
//!   Threads of one process run at most 1 / held share requests' worth at
//!   once: the held parts take turns on the one lock.
//! - The machine runs at most cores / (CPU per request / request wall)
//!   requests at once: a request whose library already keeps 1.8 cores
//!   busy leaves room for little more on two.
//! - The lower of the two binds: more threads help only up to it.
//!
//! Reduction only: the figures come from [`mod@super::judge`], the words are
//! [`render`]'s.

use serde::Serialize;

use super::judge::GilFigures;
use super::plan::Expect;
use crate::text::table::Grid;

/// One stage's reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageRow {
    pub name: String,
    pub ms: f64,
    /// Of the stages' summed ms.
    pub share: f64,
    /// The probe's answer; None when it could not judge the stage.
    pub answer: Option<Expect>,
    /// The probe's reading (the spinner's blocked share while it ran).
    pub reading: f64,
    /// CPU per call over every thread of the process, ms.
    pub cpu_ms: Option<f64>,
}

/// Which ceiling is the lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Binds {
    /// The GIL: threads stop helping at 1 / held share.
    Gil,
    /// The cores: the work already fills them.
    Cores,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageTable {
    pub rows: Vec<StageRow>,
    pub request_ms: f64,
    pub held_share: f64,
    /// 1 / held share (None when nothing holds: no GIL ceiling).
    pub threads_ceiling: Option<f64>,
    pub cores: u32,
    /// The stages' summed CPU, ms; None if a stage has no CPU figure.
    pub cpu_per_request_ms: Option<f64>,
    /// cores / (CPU per request / request ms).
    pub cores_ceiling: Option<f64>,
    pub binds: Option<Binds>,
    /// Stages the probe could not judge (then there is no held share).
    pub unjudged: Vec<String>,
}

/// What the table takes of one stage's probe.
#[derive(Debug, Clone, PartialEq)]
pub struct StageInput {
    pub name: String,
    pub call_us: Option<f64>,
    pub cpu_us: Option<f64>,
    pub answer: Option<Expect>,
    pub reading: f64,
}

impl StageInput {
    pub fn from_figures(name: &str, f: &GilFigures) -> Self {
        Self {
            name: name.to_string(),
            // The stage alone where the instrument timed it so: under the
            // spinner a stage that drops the GIL often reads the convoy.
            call_us: f.alone.as_ref().map(|a| a.call_us).or(f.call.call_us),
            cpu_us: f.alone.as_ref().map(|a| a.cpu_us).or(f.call.cpu_us),
            answer: f.answer,
            reading: f.call.reading.median,
        }
    }
}

/// Builds the table from each stage's reading. None when a stage has no
/// time per call (nothing to share out).
pub fn table(stages: &[StageInput], cores: u32) -> Option<StageTable> {
    let mut rows = Vec::with_capacity(stages.len());
    for s in stages {
        rows.push(StageRow {
            name: s.name.clone(),
            ms: s.call_us? / 1e3,
            share: 0.0,
            answer: s.answer,
            reading: s.reading,
            cpu_ms: s.cpu_us.map(|c| c / 1e3),
        });
    }
    let request_ms: f64 = rows.iter().map(|r| r.ms).sum();
    if rows.is_empty() || request_ms <= 0.0 || !request_ms.is_finite() {
        return None;
    }
    for r in &mut rows {
        r.share = r.ms / request_ms;
    }
    let unjudged: Vec<String> = rows
        .iter()
        .filter(|r| r.answer.is_none())
        .map(|r| r.name.clone())
        .collect();
    let held_share: f64 = rows
        .iter()
        .filter(|r| r.answer == Some(Expect::Holds))
        .map(|r| r.share)
        .sum();
    let threads_ceiling = (held_share > 0.0 && unjudged.is_empty()).then(|| 1.0 / held_share);
    let cpu_per_request_ms: Option<f64> = rows.iter().map(|r| r.cpu_ms).sum();
    let cores_ceiling = cpu_per_request_ms
        .filter(|c| *c > 0.0)
        .map(|c| f64::from(cores) / (c / request_ms));
    let binds = match (threads_ceiling, cores_ceiling, unjudged.is_empty()) {
        (_, _, false) => None,
        (Some(t), Some(c), true) if t < c => Some(Binds::Gil),
        (_, Some(_), true) => Some(Binds::Cores),
        (Some(_), None, true) => None,
        (None, None, true) => None,
    };
    Some(StageTable {
        rows,
        request_ms,
        held_share,
        threads_ceiling,
        cores,
        cpu_per_request_ms,
        cores_ceiling,
        binds,
        unjudged,
    })
}

/// The terminal table.
pub fn render(t: &StageTable) -> String {
    let num = |x: Option<f64>, d: usize| x.map_or_else(|| "-".into(), |v| format!("{v:.d$}"));
    let mut grid = Grid::new(["stage", "ms", "share", "GIL", "reading", "cpu ms"]);
    grid.right(&[1, 2, 3, 4, 5]);
    for r in &t.rows {
        grid.row([
            r.name.clone(),
            format!("{:.3}", r.ms),
            format!("{:.1}%", r.share * 100.0),
            r.answer.map_or("?", |a| a.name()).to_string(),
            format!("{:.2}", r.reading),
            num(r.cpu_ms, 3),
        ]);
    }
    let mut out = grid.render("  ");
    out.push_str(&format!(
        "  request {:.3} ms; {:.3} ms of it holds the GIL (held share {:.1}%)\n",
        t.request_ms,
        t.held_share * t.request_ms,
        t.held_share * 100.0
    ));
    out.push_str(&format!(
        "  ceilings: threads 1/held share = {}; cores {}/(CPU {} ms per request / {:.3} ms) = {}\n",
        num(t.threads_ceiling, 1),
        t.cores,
        num(t.cpu_per_request_ms, 3),
        t.request_ms,
        num(t.cores_ceiling, 2)
    ));
    out.push_str(&match t.binds {
        Some(Binds::Gil) => "  binds: the GIL (more threads stop helping before the cores are full; workers go further)\n".to_string(),
        Some(Binds::Cores) => format!(
            "  binds: the cores (about {} requests at once fill them: more threads than that only queue)\n",
            num(t.cores_ceiling, 1)
        ),
        None if !t.unjudged.is_empty() => format!(
            "  binds: cannot tell; the probe could not judge {}\n",
            t.unjudged.join(", ")
        ),
        None => "  binds: cannot tell; no CPU figure per request (schedstat missing)\n".to_string(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(name: &str, call_us: f64, cpu_us: Option<f64>, answer: Option<Expect>) -> StageInput {
        StageInput {
            name: name.into(),
            call_us: Some(call_us),
            cpu_us,
            answer,
            reading: 0.5,
        }
    }

    #[test]
    fn a_small_held_share_and_a_parallel_forward_pass_bind_on_the_cores() {
        let stages = [
            stage("tokenize", 140.0, Some(140.0), Some(Expect::Holds)),
            stage("forward", 5000.0, Some(9000.0), Some(Expect::Releases)),
            stage("dumps", 60.0, Some(60.0), Some(Expect::Holds)),
        ];
        let t = table(&stages, 2).unwrap();
        assert!((t.request_ms - 5.2).abs() < 1e-9);
        assert!((t.held_share - 0.2 / 5.2).abs() < 1e-9);
        assert!((t.threads_ceiling.unwrap() - 26.0).abs() < 1e-6);
        // 9.2 ms of CPU in 5.2 ms: 1.77 cores per request, 2 cores: 1.13.
        assert!((t.cores_ceiling.unwrap() - 2.0 / (9.2 / 5.2)).abs() < 1e-9);
        assert_eq!(t.binds, Some(Binds::Cores));
        let text = render(&t);
        assert!(text.contains("binds: the cores"), "{text}");
        assert!(text.contains("held share 3.8%"), "{text}");
    }

    #[test]
    fn a_holding_forward_pass_binds_on_the_gil() {
        // The twin: the same request with the forward pass holding.
        let stages = [
            stage("tokenize", 140.0, Some(140.0), Some(Expect::Holds)),
            stage("forward", 5000.0, Some(5000.0), Some(Expect::Holds)),
        ];
        let t = table(&stages, 2).unwrap();
        assert!((t.held_share - 1.0).abs() < 1e-9);
        assert_eq!(t.binds, Some(Binds::Gil));
        assert!(render(&t).contains("binds: the GIL"));
    }

    #[test]
    fn an_unjudged_stage_or_a_missing_time_gives_no_answer() {
        let stages = [
            stage("tokenize", 140.0, Some(140.0), None),
            stage("forward", 5000.0, Some(9000.0), Some(Expect::Releases)),
        ];
        let t = table(&stages, 2).unwrap();
        assert_eq!(t.binds, None);
        assert_eq!(t.unjudged, vec!["tokenize".to_string()]);
        assert!(render(&t).contains("could not judge tokenize"));
        let mut none = stage("x", 1.0, None, Some(Expect::Holds));
        none.call_us = None;
        assert!(table(&[none], 2).is_none());
        assert!(table(&[], 2).is_none());
    }

    /// Where the second column ends on each of `lines` (in characters).
    fn ms_column_ends(lines: &[&str]) -> Vec<usize> {
        lines
            .iter()
            .map(|l| {
                let rest = l.trim_start();
                let name_end = l.len() - rest.len() + rest.find(' ').unwrap();
                let after = &l[name_end..];
                let figure = after.trim_start();
                l[..name_end].chars().count()
                    + (after.len() - figure.len())
                    + figure.find(" ").unwrap_or(figure.len())
            })
            .collect()
    }

    #[test]
    fn a_long_stage_name_keeps_the_columns_in_line() {
        let stages = [
            stage(
                "tokenize_and_normalise",
                140.0,
                Some(140.0),
                Some(Expect::Holds),
            ),
            stage("forward", 5000.0, Some(9000.0), Some(Expect::Releases)),
        ];
        let text = render(&table(&stages, 2).unwrap());
        let lines: Vec<&str> = text.lines().take(3).collect();
        let ends = ms_column_ends(&lines);
        assert!(ends.iter().all(|e| *e == ends[0]), "{ends:?}\n{text}");
        // Its twin: the fixed widths the table had before cannot hold the
        // long name, and the same check sees the column break.
        let padded: Vec<String> = [
            ("stage", "ms"),
            ("tokenize_and_normalise", "0.140"),
            ("forward", "5.000"),
        ]
        .iter()
        .map(|(n, ms)| format!("  {n:<12} {ms:>9}"))
        .collect();
        let padded: Vec<&str> = padded.iter().map(String::as_str).collect();
        let ends = ms_column_ends(&padded);
        assert!(ends.iter().any(|e| *e != ends[0]), "{ends:?}");
    }
}
