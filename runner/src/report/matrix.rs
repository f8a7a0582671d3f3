//! The conformance matrix: rows by servers, one cell per gate (a verdict and
//! its key figure, `pass 1.04x/2.01x`), rendered as a terminal table,
//! Markdown and JSON. Cells that are not a pass carry a numbered note with
//! the gate's reason, because "fail" alone tells a user nothing to act on.
//! The cells come from a run's results or, for `matrix --from`, from the
//! reports of runs elsewhere (`report/merge.rs`), read as [`Entry`]s; a cell
//! neither gives reads "not run" (a run cut short) or "missing" (a merge).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::gate::result::{counts_as, GateResult, RowRef};
use crate::probe::ProbeKind;
use crate::report::json::Interrupted;
use crate::server::status::ServerStatus;
use crate::verdict::Verdict;

/// One gate as the matrix reads it: the fields of a result that its cell
/// shows, from a run or from a report's JSON (which has them at the top of
/// each result; every other field is ignored).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub row: RowRef,
    pub profile: String,
    pub verdict: Verdict,
    pub reason: String,
    #[serde(default)]
    pub headline: String,
    #[serde(default)]
    pub confidence: String,
    #[serde(default)]
    pub by_design: Option<String>,
    #[serde(default)]
    pub elapsed_ms: f64,
    /// The report it came from (a merge), for notes.
    #[serde(skip)]
    pub source: Option<PathBuf>,
    /// Why this cell cannot be shown (from another row set, reports that
    /// disagree): it reads "missing", with this as its note.
    #[serde(skip)]
    pub unusable: Option<String>,
}

impl From<&GateResult> for Entry {
    fn from(r: &GateResult) -> Self {
        Entry {
            row: r.row.clone(),
            profile: r.profile.clone(),
            verdict: r.verdict(),
            reason: r.judgement.reason.clone(),
            headline: r.judgement.headline.clone(),
            confidence: r.judgement.confidence.clone(),
            by_design: r.by_design.clone(),
            elapsed_ms: r.elapsed_ms,
            source: None,
            unusable: None,
        }
    }
}

/// A row of the matrix.
#[derive(Debug, Clone, Serialize)]
pub struct RowHead {
    pub id: String,
    pub title: String,
    /// What it claims and the probe that checks it: a report's row with the
    /// same id but another claim or probe is from another row set.
    pub claim: String,
    pub probe: String,
    /// Whether the row runs on a server (a gil-probe row does not: it has
    /// one cell, in the `python` column).
    pub on_servers: bool,
}

/// Everything the matrix shows. `entries` are in job order: for each row,
/// each server; a run cut short has fewer, and the rest read "not run".
pub struct Matrix {
    pub rows: Vec<RowHead>,
    pub servers: Vec<ServerStatus>,
    pub entries: Vec<Entry>,
    /// Every gate's full result, as the JSON document carries it.
    pub results: Vec<serde_json::Value>,
    pub wall: Duration,
    pub interrupted: Option<Interrupted>,
    /// Set for a merge: the reports it read, and what they held that is
    /// not a cell of this matrix (said under the table, never dropped).
    pub merged: Option<Merged>,
}

/// Where a merged matrix came from.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Merged {
    pub reports: Vec<PathBuf>,
    /// One line per result outside this matrix's rows and servers, and per
    /// report that was interrupted.
    pub outside: Vec<String>,
    /// The grid is the reports' own (no rows nor servers asked for): a cell
    /// no report holds is blank, not missing.
    #[serde(skip)]
    pub held_only: bool,
}

/// One cell, as the JSON document carries it.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub row: String,
    pub server: String,
    /// `None` when the gate never ran (an interrupted matrix) or no
    /// report gives it (a merge: "missing").
    pub verdict: Option<Verdict>,
    /// Set when the verdict is a "cannot judge" the profile declares by
    /// design: why.
    pub by_design: Option<String>,
    /// What the table shows: `pass 1.04x/2.01x`, `fail ...`, `cannot judge`, `n/a`.
    pub text: String,
    /// The gate's key figure (`1.04x/2.01x`: the mode under test's ratio,
    /// then the control's, for a pair-ratio row); empty when there is none.
    pub headline: String,
    /// The probe the row runs, which says what the figure means.
    pub probe: Option<String>,
    pub reason: Option<String>,
    /// The note number under the table, for every cell that is not a pass.
    pub note: Option<usize>,
}

impl Matrix {
    /// The verdicts as the exit code counts them: a cell with no verdict
    /// (not run, missing) counts as cannot judge, a "cannot judge" declared
    /// by design as not applicable.
    pub fn exit_verdicts(&self) -> Vec<Verdict> {
        self.cells()
            .iter()
            .filter(|c| c.text != BLANK)
            .map(|c| match c.verdict {
                None => Verdict::CannotJudge,
                Some(v) => counts_as(v, c.by_design.is_some()),
            })
            .collect()
    }

    /// Every cell, row by row, numbering the notes in that order.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = Vec::new();
        let mut notes = 0;
        for row in &self.rows {
            for server in &self.servers {
                let python_column = server.name == crate::gate::NO_SERVER;
                if python_column == row.on_servers {
                    // A server row has no python cell; a python row no
                    // server cells.
                    cells.push(blank(&row.id, &server.name));
                    continue;
                }
                let entry = self
                    .entries
                    .iter()
                    .find(|r| r.row.id == row.id && r.profile == server.name);
                if entry.is_none() && self.merged.as_ref().is_some_and(|m| m.held_only) {
                    cells.push(blank(&row.id, &server.name));
                    continue;
                }
                let mut cell = cell(&row.id, &server.name, entry, self.merged.is_some());
                if cell.reason.is_some() && cell.verdict != Some(Verdict::Pass) {
                    notes += 1;
                    cell.note = Some(notes);
                }
                cells.push(cell);
            }
        }
        cells
    }

    fn header(&self, server: &ServerStatus) -> String {
        match &server.version {
            Some(v) if v.starts_with(&server.name) => v.clone(),
            Some(v) => format!("{} ({v})", server.name),
            None => server.name.clone(),
        }
    }

    fn footer(&self) -> String {
        let n = self.entries.len();
        if let Some(m) = &self.merged {
            let mut s = format!(
                "{n} gate{} merged from {} report{}",
                if n == 1 { "" } else { "s" },
                m.reports.len(),
                if m.reports.len() == 1 { "" } else { "s" }
            );
            for line in &m.outside {
                s.push_str(&format!("\nnot in this matrix: {line}"));
            }
            return s;
        }
        let mut s = format!(
            "{n} gate{} in {:.1} s wall time",
            if n == 1 { "" } else { "s" },
            self.wall.as_secs_f64()
        );
        if let Some(i) = &self.interrupted {
            s.push_str(&format!(
                "; interrupted by {} during {}",
                i.signal,
                i.during.as_deref().unwrap_or("set-up")
            ));
        }
        s
    }

    /// What the figures in the cells are, once per probe kind present.
    fn legend(&self, cells: &[Cell]) -> Vec<String> {
        let mut out = Vec::new();
        for c in cells {
            if c.headline.is_empty() {
                continue;
            }
            let Some(kind) = c
                .probe
                .as_deref()
                .and_then(|p| ProbeKind::ALL.iter().find(|k| k.name() == p))
            else {
                continue;
            };
            let line = kind.legend().to_string();
            if !out.contains(&line) {
                out.push(line);
            }
        }
        out
    }

    /// The terminal table, with numbered notes for every cell but a pass.
    pub fn render_text(&self) -> String {
        let cells = self.cells();
        let shown = |c: &Cell| match c.note {
            Some(n) => format!("{} [{n}]", c.text),
            None => c.text.clone(),
        };
        let mut head = vec!["row".to_string()];
        head.extend(self.servers.iter().map(|sv| self.header(sv)));
        let mut grid = crate::text::table::Grid::new(head);
        let n = self.servers.len();
        for (i, row) in self.rows.iter().enumerate() {
            let mut fields = vec![row.id.clone()];
            fields.extend(cells[i * n..(i + 1) * n].iter().map(shown));
            grid.row(fields);
        }
        let mut s = grid.render("");
        s.push('\n');
        for l in self.legend(&cells) {
            s.push_str(&format!("{l}\n"));
        }
        for c in &cells {
            if let (Some(n), Some(reason)) = (c.note, &c.reason) {
                s.push_str(&format!("[{n}] {} on {}: {reason}\n", c.row, c.server));
            }
        }
        s.push_str(&self.footer());
        s.push('\n');
        s
    }

    /// The same table as GitHub Markdown.
    pub fn render_markdown(&self) -> String {
        let cells = self.cells();
        let esc = crate::text::markdown_cell;
        let mut s = String::new();
        s.push_str("| row |");
        for server in &self.servers {
            s.push_str(&format!(" {} |", esc(&self.header(server))));
        }
        s.push_str("\n|---|");
        s.push_str(&"---|".repeat(self.servers.len()));
        s.push('\n');
        for (i, row) in self.rows.iter().enumerate() {
            s.push_str(&format!("| {} |", esc(&row.id)));
            let n = self.servers.len();
            for c in &cells[i * n..(i + 1) * n] {
                let text = match c.note {
                    Some(k) => format!("{} [{k}]", c.text),
                    None => c.text.clone(),
                };
                s.push_str(&format!(" {} |", esc(&text)));
            }
            s.push('\n');
        }
        s.push('\n');
        for l in self.legend(&cells) {
            s.push_str(&format!("{l}.  \n"));
        }
        let notes: Vec<&Cell> = cells.iter().filter(|c| c.note.is_some()).collect();
        if !notes.is_empty() {
            s.push('\n');
            for c in notes {
                s.push_str(&format!(
                    "{}. **{} on {}**: {}\n",
                    c.note.unwrap_or_default(),
                    esc(&c.row),
                    esc(&c.server),
                    esc(c.reason.as_deref().unwrap_or_default())
                ));
            }
        }
        s.push('\n');
        s.push_str(&self.footer());
        s.push_str(".\n");
        s
    }

    /// The JSON document: the table's cells plus every gate's full result.
    pub fn render_json(&self) -> String {
        #[derive(Serialize)]
        struct Doc<'a> {
            runner_version: &'static str,
            wall_ms: f64,
            interrupted: &'a Option<Interrupted>,
            rows: &'a [RowHead],
            servers: &'a [ServerStatus],
            cells: Vec<Cell>,
            merged: &'a Option<Merged>,
            results: &'a [serde_json::Value],
        }
        let doc = Doc {
            runner_version: env!("CARGO_PKG_VERSION"),
            wall_ms: self.wall.as_secs_f64() * 1000.0,
            interrupted: &self.interrupted,
            rows: &self.rows,
            servers: &self.servers,
            cells: self.cells(),
            merged: &self.merged,
            results: &self.results,
        };
        serde_json::to_string_pretty(&doc)
            .unwrap_or_else(|e| format!("{{\"error\": \"cannot render the matrix: {e}\"}}"))
    }
}

/// What a cell the row's shape leaves empty reads.
const BLANK: &str = "-";

/// A cell the row's shape leaves empty.
fn blank(row: &str, server: &str) -> Cell {
    Cell {
        row: row.into(),
        server: server.into(),
        verdict: None,
        by_design: None,
        text: BLANK.into(),
        headline: String::new(),
        probe: None,
        reason: None,
        note: None,
    }
}

/// The cell for one gate's result; without one, "not run" (a run cut
/// short) or, in a merge, "missing" with a note saying why.
fn cell(row: &str, server: &str, entry: Option<&Entry>, merged: bool) -> Cell {
    let mut c = Cell {
        row: row.into(),
        server: server.into(),
        verdict: None,
        by_design: None,
        text: if merged { MISSING } else { "not run" }.into(),
        headline: String::new(),
        probe: None,
        reason: merged.then(|| "no report gives this cell".to_string()),
        note: None,
    };
    let Some(r) = entry else { return c };
    if let Some(why) = &r.unusable {
        c.text = MISSING.into();
        c.reason = Some(why.clone());
        return c;
    }
    let verdict = r.verdict;
    c.verdict = Some(verdict);
    c.by_design = r
        .by_design
        .clone()
        .filter(|_| verdict == Verdict::CannotJudge);
    c.reason = Some(match &c.by_design {
        Some(because) => format!(
            "by design (the profile declares it): {because}; the gate said: {}",
            r.reason
        ),
        None => r.reason.clone(),
    });
    c.headline = r.headline.clone();
    c.probe = Some(r.row.probe.clone());
    let figures = if c.headline.is_empty() {
        String::new()
    } else {
        format!(" {}", c.headline)
    };
    // Figures only where they back a verdict on the claim.
    c.text = match verdict {
        Verdict::Pass | Verdict::Fail => format!("{}{figures}", verdict.spelling().cell),
        Verdict::CannotJudge if c.by_design.is_some() => {
            format!("{} (by design)", verdict.spelling().cell)
        }
        Verdict::CannotJudge | Verdict::NotApplicable => verdict.spelling().cell.into(),
    };
    c
}

/// What a cell no usable report gives reads in a merged matrix.
pub const MISSING: &str = "missing";

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn status(name: &str, version: Option<&str>) -> ServerStatus {
        ServerStatus {
            name: name.into(),
            file: PathBuf::from(format!("specs/servers/{name}.yaml")),
            ready: version.is_some(),
            version: version.map(String::from),
            note: None,
            interface: None,
        }
    }

    fn matrix(results: &[GateResult]) -> Matrix {
        Matrix {
            rows: vec![RowHead {
                id: "E19".into(),
                title: "t".into(),
                claim: "c".into(),
                probe: "pair-ratio".into(),
                on_servers: true,
            }],
            servers: vec![
                status("granian", Some("granian 2.8.9")),
                status("m0serve", None),
            ],
            entries: results.iter().map(Entry::from).collect(),
            results: Vec::new(),
            wall: Duration::from_millis(1500),
            interrupted: None,
            merged: None,
        }
    }

    #[test]
    fn cells_that_never_ran_read_not_run() {
        let m = matrix(&[]);
        let cells = m.cells();
        assert_eq!(cells.len(), 2);
        assert!(cells
            .iter()
            .all(|c| c.text == "not run" && c.verdict.is_none()));
        let text = m.render_text();
        assert!(text.contains("granian 2.8.9"), "{text}");
        assert!(text.contains("0 gates in 1.5 s"), "{text}");
        let md = m.render_markdown();
        assert!(
            md.starts_with(
                "| row | granian 2.8.9 | m0serve |\n|---|---|---|\n| E19 | not run | not run |"
            ),
            "{md}"
        );
        let json: serde_json::Value = serde_json::from_str(&m.render_json()).unwrap();
        assert_eq!(json["cells"].as_array().unwrap().len(), 2);
        assert_eq!(json["servers"][0]["version"], "granian 2.8.9");
    }
}
