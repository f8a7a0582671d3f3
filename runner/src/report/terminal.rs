//! Human output: progress while gates run (a live line on a terminal, plain
//! lines otherwise), a table per gate, and one verdict line naming the row.

use std::io::Write;

use crate::console::Console;

use crate::gate::event::Event;
use crate::gate::result::GateResult;
use crate::verdict::Verdict;

/// Writes progress to the console's notes and results to `out`.
pub struct Terminal<W: Write> {
    out: W,
    notes: Box<dyn Write>,
    live: bool,
    /// Whether a live line is currently drawn and must be cleared.
    dirty: bool,
}

impl<W: Write> Terminal<W> {
    pub fn new(out: W, console: &dyn Console) -> Self {
        Self {
            out,
            notes: console.notes(),
            live: console.live(),
            dirty: false,
        }
    }

    fn progress(&mut self, line: &str) {
        let err = &mut self.notes;
        if self.live {
            let _ = write!(err, "\r\x1b[2K{line}");
            self.dirty = true;
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    fn clear(&mut self) {
        if self.dirty {
            let _ = write!(self.notes, "\r\x1b[2K");
            self.dirty = false;
        }
    }

    /// Handles one engine event.
    pub fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::GateStarted {
                row,
                server,
                index,
                of,
            } => {
                self.progress(&format!(
                    "[{index}/{of}] {row} on {server}: {}",
                    if *server == crate::gate::NO_SERVER {
                        "starting"
                    } else {
                        "starting the server"
                    }
                ));
            }
            Event::ServerReady { row, after, .. } => {
                self.progress(&format!(
                    "{row}: server ready in {} ms, warming up",
                    after.as_millis()
                ));
            }
            Event::Trial { row, progress } => {
                if self.live {
                    self.progress(&format!("{row}: trial {}/{}", progress.trial, progress.of));
                }
            }
            Event::GateFinished(result) => {
                self.clear();
                let _ = self.out.write_all(render_gate(result).as_bytes());
                let _ = self.out.flush();
            }
        }
    }

    /// The closing summary for several gates.
    pub fn summary(&mut self, results: &[GateResult]) {
        if results.len() < 2 {
            return;
        }
        let mut grid = crate::text::table::Grid::new(["verdict", "row", "server", "figures"]);
        for r in results {
            grid.row([
                r.verdict().label().to_string(),
                r.row.id.clone(),
                r.profile.clone(),
                headline(r),
            ]);
        }
        let _ = write!(self.out, "summary:\n{}", grid.render("  "));
    }
}

fn headline(r: &GateResult) -> String {
    r.judgement.headline.clone()
}

/// A gate's table and verdict line.
pub fn render_gate(r: &GateResult) -> String {
    let mut s = String::new();
    s.push_str(&format!("{}  {}\n", r.row.id, r.row.title));
    for server in r.servers() {
        let ready = server
            .ready_ms
            .map_or(String::new(), |ms| format!(", ready in {ms:.0} ms"));
        s.push_str(&format!(
            "  server {} ({}){ready}; log {}\n",
            server.profile,
            server.settings,
            server.log.display()
        ));
    }
    if r.servers.is_empty() {
        s.push_str(&format!("  no server ({})\n", r.profile));
    }
    if let Some(f) = &r.judgement.figures {
        f.render(&mut s);
    }
    for w in &r.judgement.warnings {
        s.push_str(&format!("  warning: {w}\n"));
    }
    s.push_str(&format!(
        "{} {} on {}: {}\n",
        r.verdict().label().to_uppercase(),
        r.row.id,
        r.profile,
        r.judgement.reason
    ));
    if r.verdict() == Verdict::Pass || r.verdict() == Verdict::Fail {
        s.push_str(&format!("  confidence: {}\n", r.judgement.confidence));
    }
    if let Some(because) = &r.by_design {
        s.push_str(&format!(
            "  by design ({} declares it; it does not fail the run): {because}\n",
            r.profile
        ));
    }
    if let (Some(tail), Some(log)) = (&r.log_tail, r.first_log()) {
        if r.verdict() != Verdict::Pass {
            s.push_str(&format!("  server log tail ({}):\n", log.display()));
            for line in tail.lines() {
                s.push_str(&format!("    | {line}\n"));
            }
        }
    }
    s.push('\n');
    s
}
