//! `matrix --from REPORT.json...`: the conformance matrix from the JSON
//! reports of gate runs made elsewhere (one CI job per server and OS), the
//! same table `runner matrix` prints. The matrix's rows and columns are
//! this checkout's (the rows asked for, the servers asked for), never the
//! reports': a cell no report gives, or one a report ran from another row
//! set (the same id with another claim or probe), or one two reports
//! disagree on, reads "missing" with a note; a result outside the matrix is
//! listed under it. Nothing is dropped silently. A report is untrusted
//! input: it is read with a size cap and any shape error names the file.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::gate::NO_SERVER;
use crate::report::json::Interrupted;
use crate::report::matrix::{Entry, Matrix, Merged, RowHead};
use crate::server::status::ServerStatus;

/// The largest report read (a full signoff report is a few MiB).
const REPORT_CAP_BYTES: u64 = 64 * 1024 * 1024;

/// One report, as read.
#[derive(Debug, Clone)]
pub struct Report {
    pub path: PathBuf,
    pub servers: Vec<ServerStatus>,
    pub interrupted: Option<Interrupted>,
    /// Each result's cell fields, with the result as written.
    pub results: Vec<(Entry, serde_json::Value)>,
}

#[derive(Deserialize)]
struct Doc {
    #[serde(default)]
    interrupted: Option<Interrupted>,
    #[serde(default)]
    servers: Vec<ServerStatus>,
    results: Vec<serde_json::Value>,
}

/// Reads one `gate --json-file` report.
pub fn read(path: &Path) -> Result<Report, String> {
    let file = std::fs::File::open(path)
        .map_err(|e| format!("--from {}: cannot read it: {e}", path.display()))?;
    let mut text = String::new();
    file.take(REPORT_CAP_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("--from {}: cannot read it: {e}", path.display()))?;
    if text.len() as u64 > REPORT_CAP_BYTES {
        return Err(format!(
            "--from {}: larger than {} MiB; not a gate report",
            path.display(),
            REPORT_CAP_BYTES / (1024 * 1024)
        ));
    }
    parse(path, &text)
}

/// Parses a report's text (`path` names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<Report, String> {
    let doc: Doc = serde_json::from_str(text).map_err(|e| {
        format!(
            "--from {}: not a `gate --json-file` report: {e}",
            path.display()
        )
    })?;
    let mut results = Vec::new();
    for (i, raw) in doc.results.into_iter().enumerate() {
        let mut entry: Entry = serde_json::from_value(raw.clone()).map_err(|e| {
            format!(
                "--from {}: result {} is not a gate result: {e}",
                path.display(),
                i + 1
            )
        })?;
        entry.source = Some(path.to_path_buf());
        results.push((entry, raw));
    }
    Ok(Report {
        path: path.to_path_buf(),
        servers: doc.servers,
        interrupted: doc.interrupted,
        results,
    })
}

/// What the user named for a merge. A scope not named is the reports'
/// own: the rows and servers they hold, in this checkout's order, and a
/// cell of that grid no report holds is left blank (not run, not asked
/// for) rather than missing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked {
    /// ROW arguments were given.
    pub rows: bool,
    /// `--servers` was given.
    pub servers: bool,
}

/// [`merge`] over the rows and servers `asked` names, or else the ones the
/// reports hold: a merge of E19 on granian and E19 on waitress is those two
/// cells, not every row by every profile with the rest missing.
pub fn merge_asked(
    rows: Vec<RowHead>,
    servers: &[String],
    reports: &[Report],
    asked: Asked,
) -> Matrix {
    let held: Vec<&Entry> = reports
        .iter()
        .flat_map(|r| r.results.iter().map(|(e, _)| e))
        .collect();
    // Reports that hold nothing (interrupted before a gate ended) narrow
    // nothing: the whole grid shows, every cell missing (exit 2), never an
    // empty matrix that exits 0.
    let asked = if held.is_empty() {
        Asked {
            rows: true,
            servers: true,
        }
    } else {
        asked
    };
    let rows: Vec<RowHead> = if asked.rows {
        rows
    } else {
        rows.into_iter()
            .filter(|r| held.iter().any(|e| e.row.id == r.id))
            .collect()
    };
    let servers: Vec<String> = if asked.servers {
        servers.to_vec()
    } else {
        // This checkout's profiles first, then any other a report ran (a
        // profile given by path); only those of the rows shown.
        let on_rows: Vec<&str> = held
            .iter()
            .filter(|e| rows.iter().any(|r| r.id == e.row.id) && e.profile != NO_SERVER)
            .map(|e| e.profile.as_str())
            .collect();
        let mut names: Vec<String> = servers
            .iter()
            .filter(|s| on_rows.contains(&s.as_str()))
            .cloned()
            .collect();
        for name in on_rows {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        names
    };
    let mut matrix = merge(rows, &servers, reports);
    if let Some(m) = &mut matrix.merged {
        m.held_only = !asked.rows && !asked.servers;
    }
    matrix
}

/// The matrix of `rows` by `servers` (names; the `python` column is added
/// when a row runs no server) from `reports`.
pub fn merge(rows: Vec<RowHead>, servers: &[String], reports: &[Report]) -> Matrix {
    let mut columns: Vec<String> = servers.to_vec();
    if rows.iter().any(|r| !r.on_servers) && !columns.iter().any(|c| c == NO_SERVER) {
        columns.push(NO_SERVER.into());
    }
    let statuses = columns
        .iter()
        .map(|name| {
            reports
                .iter()
                .flat_map(|r| &r.servers)
                .find(|s| &s.name == name)
                .cloned()
                .unwrap_or_else(|| ServerStatus {
                    name: name.clone(),
                    file: PathBuf::new(),
                    ready: false,
                    version: None,
                    note: Some("no report names its version".into()),
                    interface: None,
                })
        })
        .collect();
    let mut entries: Vec<Entry> = Vec::new();
    let mut results = Vec::new();
    let mut outside = Vec::new();
    for report in reports {
        let file = report.path.display();
        if let Some(i) = &report.interrupted {
            outside.push(format!(
                "{file} was interrupted by {} during {}; its missing cells are missing here",
                i.signal,
                i.during.as_deref().unwrap_or("set-up")
            ));
        }
        for (entry, raw) in &report.results {
            let (id, server) = (&entry.row.id, &entry.profile);
            let Some(row) = rows.iter().find(|r| &r.id == id) else {
                outside.push(format!("{id} on {server} ({file}): not a row asked for"));
                continue;
            };
            if !columns.contains(server) {
                outside.push(format!("{id} on {server} ({file}): not a server asked for"));
                continue;
            }
            let mut entry = entry.clone();
            if row.probe != entry.row.probe || row.claim != entry.row.claim {
                entry.unusable = Some(format!(
                    "from another row set: {file} ran {id} as {} claiming {:?}; this checkout's {id} is {} claiming {:?}",
                    entry.row.probe, entry.row.claim, row.probe, row.claim
                ));
            }
            match entries
                .iter_mut()
                .find(|e| &e.row.id == id && &e.profile == server)
            {
                None => {
                    entries.push(entry);
                    results.push(raw.clone());
                }
                Some(first) => {
                    if first.unusable.is_none()
                        && entry.unusable.is_none()
                        && first.verdict == entry.verdict
                    {
                        // The same cell twice, agreeing: the first stands.
                        continue;
                    }
                    let said = |e: &Entry| {
                        format!(
                            "{} says {}",
                            e.source
                                .as_deref()
                                .map(|p| p.display().to_string())
                                .unwrap_or_default(),
                            e.unusable.as_deref().unwrap_or(e.verdict.word())
                        )
                    };
                    let both = format!("{}; {}", said(first), said(&entry));
                    first.unusable = Some(match first.unusable.take() {
                        Some(earlier) if earlier.starts_with("the reports disagree") => {
                            format!("{earlier}; {}", said(&entry))
                        }
                        _ => format!("the reports disagree: {both}"),
                    });
                }
            }
        }
    }
    Matrix {
        rows,
        servers: statuses,
        entries,
        results,
        wall: Duration::ZERO,
        interrupted: None,
        merged: Some(Merged {
            reports: reports.iter().map(|r| r.path.clone()).collect(),
            outside,
            held_only: false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    fn row(id: &str) -> RowHead {
        RowHead {
            id: id.into(),
            title: "t".into(),
            claim: format!("{id} claim"),
            probe: "pair-ratio".into(),
            on_servers: true,
        }
    }

    fn report(path: &str, cells: &[(&str, &str, &str, &str)]) -> String {
        let results: Vec<serde_json::Value> = cells
            .iter()
            .map(|(id, server, verdict, claim)| {
                serde_json::json!({
                    "row": {"id": id, "title": "t", "claim": claim, "probe": "pair-ratio",
                            "file": format!("/elsewhere/specs/{id}.yaml"), "line": 4},
                    "servers": [], "profile": server, "verdict": verdict,
                    "reason": format!("{verdict} because"), "confidence": "5 trials",
                    "figures": null, "warnings": [], "headline": "1.04x/2.01x",
                    "run": null, "log_tail": null, "elapsed_ms": 900.0
                })
            })
            .collect();
        let _ = path;
        serde_json::json!({"runner_version": "0", "interrupted": null,
                           "servers": [{"name": cells[0].1, "file": "x", "ready": true,
                                        "version": format!("{} 1.0", cells[0].1), "note": null}],
                           "results": results})
        .to_string()
    }

    fn parsed(path: &str, cells: &[(&str, &str, &str, &str)]) -> Report {
        parse(Path::new(path), &report(path, cells)).unwrap()
    }

    #[test]
    fn cells_no_report_gives_or_from_another_row_set_read_missing() {
        let a = parsed("a.json", &[("E19", "granian", "pass", "E19 claim")]);
        let b = parsed("b.json", &[("E19", "waitress", "fail", "an older claim")]);
        let servers = ["granian".into(), "waitress".into(), "gunicorn".into()];
        let m = merge(vec![row("E19")], &servers, &[a, b]);
        let cells = m.cells();
        let texts: Vec<&str> = cells.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["pass 1.04x/2.01x", "missing", "missing"]);
        assert!(cells[1]
            .reason
            .as_deref()
            .unwrap()
            .starts_with("from another row set: b.json"));
        assert_eq!(
            cells[2].reason.as_deref(),
            Some("no report gives this cell")
        );
        assert_eq!(
            m.exit_verdicts(),
            [Verdict::Pass, Verdict::CannotJudge, Verdict::CannotJudge]
        );
        let text = m.render_text();
        assert!(
            text.starts_with("row  granian 1.0       waitress 1.0  gunicorn\n"),
            "{text}"
        );
        assert!(text.contains("2 gates merged from 2 reports"), "{text}");
        // The twin: every cell given, from this row set: nothing missing.
        let a = parsed("a.json", &[("E19", "granian", "pass", "E19 claim")]);
        let b = parsed("b.json", &[("E19", "waitress", "fail", "E19 claim")]);
        let m = merge(vec![row("E19")], &servers[..2], &[a, b]);
        assert_eq!(m.exit_verdicts(), [Verdict::Pass, Verdict::Fail]);
        assert!(!m.render_text().contains("missing"));
    }

    #[test]
    fn a_partial_merge_shows_the_cells_the_reports_hold_unless_asked_for_more() {
        // E19 on granian and E19 on waitress, with every row and profile of
        // the checkout on offer: two cells, both passes, exit 0.
        let rows = || vec![row("C5"), row("E19"), row("E15")];
        let servers: Vec<String> = ["gunicorn", "granian", "waitress", "granian-x"]
            .map(String::from)
            .to_vec();
        let a = parsed("a.json", &[("E19", "granian", "pass", "E19 claim")]);
        let b = parsed("b.json", &[("E19", "waitress", "pass", "E19 claim")]);
        let reports = [a, b];
        let m = merge_asked(rows(), &servers, &reports, Asked::default());
        let texts: Vec<String> = m.cells().into_iter().map(|c| c.text).collect();
        assert_eq!(texts, ["pass 1.04x/2.01x", "pass 1.04x/2.01x"]);
        assert_eq!(m.exit_verdicts(), [Verdict::Pass, Verdict::Pass]);
        let text = m.render_text();
        assert!(text.starts_with("row  granian 1.0"), "{text}");
        assert!(!text.contains("C5") && !text.contains("gunicorn"), "{text}");
        // Cells across the held grid that no report holds are blank, not
        // counted: E19 on granian, C5 on waitress.
        let c = parsed("c.json", &[("C5", "waitress", "fail", "C5 claim")]);
        let m = merge_asked(rows(), &servers, &[reports[0].clone(), c], Asked::default());
        let texts: Vec<String> = m.cells().into_iter().map(|c| c.text).collect();
        assert_eq!(
            (texts[0].as_str(), texts[3].as_str()),
            ("-", "-"),
            "{texts:?}"
        );
        assert_eq!(m.exit_verdicts(), [Verdict::Fail, Verdict::Pass]);
        // The twin: --servers asks for gunicorn too, which no report
        // holds: it reads missing and counts (cannot judge, exit 2).
        let asked = Asked {
            rows: false,
            servers: true,
        };
        let some = ["granian".into(), "waitress".into(), "gunicorn".into()];
        let m = merge_asked(rows(), &some, &reports, asked);
        assert_eq!(
            m.exit_verdicts(),
            [Verdict::Pass, Verdict::Pass, Verdict::CannotJudge]
        );
        // Reports with no result narrow nothing: every cell is missing.
        let empty = parse(
            Path::new("e.json"),
            r#"{"interrupted": null, "servers": [], "results": []}"#,
        )
        .unwrap();
        let m = merge_asked(rows(), &servers, &[empty], Asked::default());
        assert_eq!(m.exit_verdicts(), vec![Verdict::CannotJudge; 12]);
        // ROWs asked: C5 too, missing on both servers.
        let asked = Asked {
            rows: true,
            servers: false,
        };
        let m = merge_asked(vec![row("C5"), row("E19")], &servers, &reports, asked);
        assert_eq!(m.cells().iter().filter(|c| c.text == "missing").count(), 2);
    }

    #[test]
    fn disagreeing_reports_and_results_outside_the_matrix_are_said_not_dropped() {
        let a = parsed(
            "a.json",
            &[
                ("E19", "granian", "pass", "E19 claim"),
                ("E99", "granian", "pass", "x"),
            ],
        );
        let b = parsed("b.json", &[("E19", "granian", "fail", "E19 claim")]);
        let c = parsed("c.json", &[("E19", "granian", "pass", "E19 claim")]);
        let m = merge(
            vec![row("E19")],
            &["granian".into()],
            &[a.clone(), b, c.clone()],
        );
        let cells = m.cells();
        assert_eq!(cells[0].text, "missing");
        assert_eq!(
            cells[0].reason.as_deref(),
            Some("the reports disagree: a.json says pass; b.json says fail; c.json says pass")
        );
        let text = m.render_text();
        assert!(
            text.contains("not in this matrix: E99 on granian (a.json): not a row asked for"),
            "{text}"
        );
        // Twin: two reports that agree give the cell.
        let m = merge(vec![row("E19")], &["granian".into()], &[a, c]);
        assert_eq!(m.cells()[0].text, "pass 1.04x/2.01x");
    }

    #[test]
    fn a_report_that_is_not_one_is_an_error_naming_the_file() {
        let e = parse(Path::new("r.json"), "{\"results\": [{\"row\": 1}]}").unwrap_err();
        assert!(
            e.starts_with("--from r.json: result 1 is not a gate result"),
            "{e}"
        );
        let e = parse(Path::new("r.json"), "[").unwrap_err();
        assert!(
            e.starts_with("--from r.json: not a `gate --json-file` report"),
            "{e}"
        );
        let bad_verdict = report("r.json", &[("E19", "granian", "great", "E19 claim")]);
        let e = parse(Path::new("r.json"), &bad_verdict).unwrap_err();
        assert!(e.contains("verdict \"great\" is none of"), "{e}");
    }
}
