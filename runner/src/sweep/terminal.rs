//! Human output of a sweep: a live progress line on a terminal (plain
//! lines otherwise) while it runs, then the table.

use std::io::Write;

use super::table::{self, num};
use super::{SweepEvent, SweepResult};
use crate::console::Console;
use crate::text::table::Grid;

/// Progress on the console's notes.
pub struct Progress {
    notes: Box<dyn Write>,
    live: bool,
    dirty: bool,
}

impl Progress {
    pub fn new(console: &dyn Console) -> Self {
        Self {
            notes: console.notes(),
            live: console.live(),
            dirty: false,
        }
    }

    fn line(&mut self, text: &str, transient: bool) {
        let err = &mut self.notes;
        if self.dirty {
            let _ = write!(err, "\r\x1b[2K");
            self.dirty = false;
        }
        if self.live && transient {
            let _ = write!(err, "{text}");
            self.dirty = true;
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    /// Handles one engine event.
    pub fn event(&mut self, event: &SweepEvent<'_>) {
        match event {
            SweepEvent::SettingStarted { setting, index, of } => {
                let text = format!(
                    "[{}/{of}] {}: starting the server",
                    index + 1,
                    setting.describe()
                );
                self.line(&text, true);
            }
            SweepEvent::ServerReady { .. } => {}
            SweepEvent::Load { setting, progress } => {
                // Only a terminal gets the running count; a log gets the
                // start and end of each setting.
                if !self.live {
                    return;
                }
                let phase = if progress.measuring {
                    "measuring"
                } else {
                    "warming up"
                };
                let text = format!(
                    "  {}: {phase} {:.1}/{:.1} s, {} requests, {} errors",
                    setting.describe(),
                    progress.elapsed.as_secs_f64(),
                    progress.of.as_secs_f64(),
                    progress.requests,
                    progress.errors
                );
                self.line(&text, true);
            }
            SweepEvent::SettingFinished { result, index, of } => {
                let figures = match &result.load {
                    Some(l) => format!(
                        "{:.1} req/s, p99 {} ms, errors {}",
                        l.requests_per_s,
                        num(l.latency.map(|x| x.p99_ms), 2),
                        l.errors.describe()
                    ),
                    None => result.reason.clone().unwrap_or_default(),
                };
                let warm = result
                    .warmup
                    .as_ref()
                    .map_or_else(String::new, |w| format!("; {}", w.describe()));
                let text = format!(
                    "[{}/{of}] {}: {} ({figures}) in {:.1} s{warm}",
                    index + 1,
                    result.setting.describe(),
                    result.status.label(),
                    result.elapsed_s
                );
                self.line(&text, false);
            }
        }
    }
}

/// The table, for stdout.
pub fn render(result: &SweepResult) -> String {
    let rows = table::rows(result);
    let mut out = match &result.row {
        Some(row) => format!("{}: {}\n", row.id, row.title),
        None => String::new(),
    };
    out.push_str(&format!(
        "sweep on {}: {}\n",
        result.server,
        table::describe(result)
    ));
    let mut grid = Grid::new([
        "setting", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "cpu %", "rq %", "pss MiB",
        "scaling", "errors", "check",
    ]);
    for r in &rows {
        grid.row([
            r.setting.clone(),
            num(r.requests_per_s, 1),
            num(r.p50_ms, 2),
            num(r.p90_ms, 2),
            num(r.p99_ms, 2),
            num(r.max_ms, 2),
            num(r.cpu_pct, 0),
            num(r.run_queue_pct, 0),
            num(r.pss_mib, 0),
            r.scaling.map_or_else(|| "-".into(), |s| format!("{s:.2}x")),
            r.errors.clone(),
            r.check.clone(),
        ]);
    }
    out.push_str(&grid.right(&[1, 2, 3, 4, 5, 6, 7, 8, 9]).render("  "));
    for r in rows.iter().filter(|r| r.reason.is_some()) {
        out.push_str(&format!(
            "  {} {}: {}\n",
            r.setting,
            r.status.label(),
            r.reason.as_deref().unwrap_or_default()
        ));
    }
    if let Some(note) = result.settings.iter().find_map(|s| s.cpu_note.as_deref()) {
        out.push_str(&format!("  no server CPU figures: {note}\n"));
    }
    out.push_str(
        "  (cpu % and rq %: the server's on-CPU time and run-queue wait, every thread of its process group, as % of one core; pss: the peak over the window of the PSS summed over its processes; scaling: req/s against the route's first setting)\n",
    );
    let verdict = if result.clean() {
        format!(
            "CLEAN: {} setting(s), every request good{}",
            result.settings.len(),
            if rows
                .iter()
                .any(|r| r.check.starts_with("work not verified"))
            {
                " (work not verified on routes without a digest)"
            } else {
                ", every digest right"
            }
        )
    } else if let Some(sig) = &result.interrupted {
        format!(
            "INTERRUPTED by {sig}: {} setting(s) done",
            result.settings.len()
        )
    } else {
        let bad = result
            .settings
            .iter()
            .filter(|s| s.status != super::Status::Clean)
            .count();
        format!(
            "NOT CLEAN: {bad} of {} setting(s) had errors or were not measured; their figures are not the server's",
            result.settings.len()
        )
    };
    out.push_str(&verdict);
    out.push_str(&format!(" ({:.1} s)\n", result.elapsed_s));
    out
}
