//! Human output: progress while gates run (a live line on a terminal, plain
//! lines otherwise), a table per gate, and one verdict line naming the row.

use std::io::{IsTerminal, Write};

use crate::event::Event;
use crate::gate::GateResult;
use crate::pyenv::EnvProgress;
use crate::verdict::{
    CensusFigures, Figures, KeepaliveFigures, ModeFigures, PairRatioFigures, Verdict,
};

/// Writes progress to stderr and results to `out`.
pub struct Terminal<W: Write> {
    out: W,
    live: bool,
    /// Whether a live line is currently drawn and must be cleared.
    dirty: bool,
}

impl<W: Write> Terminal<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            live: std::io::stderr().is_terminal(),
            dirty: false,
        }
    }

    fn progress(&mut self, line: &str) {
        let mut err = std::io::stderr();
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
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.dirty = false;
        }
    }

    /// Handles one engine event.
    pub fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Env(EnvProgress::Installing {
                venv,
                requirements,
                reason,
            }) => {
                self.clear();
                let _ = writeln!(
                    std::io::stderr(),
                    "preparing the Python environment ({reason}): creating {} and installing {} (this takes a minute once)",
                    venv.display(),
                    requirements.display()
                );
            }
            Event::Env(EnvProgress::Installed { elapsed }) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "Python environment ready in {:.1} s",
                    elapsed.as_secs_f64()
                );
            }
            Event::GateStarted {
                row,
                server,
                index,
                of,
            } => {
                self.progress(&format!(
                    "[{index}/{of}] {row} on {server}: starting the server"
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
        let _ = writeln!(self.out, "summary:");
        for r in results {
            let _ = writeln!(
                self.out,
                "  {:<14} {:<10} {:<8} {}",
                r.verdict().label(),
                r.row.id,
                r.server.profile,
                headline(r)
            );
        }
    }
}

fn headline(r: &GateResult) -> String {
    r.judgement.headline.clone()
}

fn mode_line(m: &ModeFigures) -> String {
    format!(
        "  {:<12} {:>9.1} {:>9.1} {:>7.2}x   {:<20} {:>9}   {}\n",
        m.name,
        m.single_ms.min,
        m.pair_ms.min,
        m.ratio,
        format!(
            "{:.2} [{:.2}-{:.2}]",
            m.trial_ratios.median, m.trial_ratios.min, m.trial_ratios.max
        ),
        m.bound.to_string(),
        if m.holds { "ok" } else { "no" }
    )
}

fn ok(holds: bool) -> &'static str {
    if holds {
        "ok"
    } else {
        "no"
    }
}

fn pair_ratio_table(f: &PairRatioFigures, s: &mut String) {
    s.push_str(&format!(
        "  {:<12} {:>9} {:>9} {:>8}   {:<20} {:>9}\n",
        "mode", "single ms", "pair ms", "ratio", "trials med [range]", "bound"
    ));
    s.push_str(&mode_line(&f.under_test));
    s.push_str(&mode_line(&f.control));
    s.push_str(&format!(
        "  {:<12} {:>9} {:>9} {:>7.2}x   {:<20} {:>9}   {}\n",
        "capacity",
        "",
        "",
        f.capacity,
        format!(
            "{:.2} [{:.2}-{:.2}]",
            f.capacity_trials.median, f.capacity_trials.min, f.capacity_trials.max
        ),
        format!("<= {:.2}x", f.capacity_at_most),
        ok(f.capacity <= f.capacity_at_most)
    ));
    s.push_str(&format!(
        "  ({} trials; single and pair are the fastest of each; ratio = min pair / min single)\n",
        f.trials
    ));
}

fn keepalive_table(f: &KeepaliveFigures, s: &mut String) {
    s.push_str(&format!(
        "  {:<40} {:>8}   {:>9}\n",
        "figure (over S = ".to_string() + &f.slow_ms.to_string() + " ms)",
        "value",
        "bound"
    ));
    for c in &f.checks {
        s.push_str(&format!(
            "  {:<40} {:>8.3}   {:>9}   {}\n",
            c.name,
            c.value,
            c.bound.to_string(),
            ok(c.holds)
        ));
    }
    s.push_str(&format!(
        "  {:<40} {:>8.3}   (control: B waits behind A)\n",
        "control B over S (best trial)", f.control_ratio
    ));
    s.push_str(&format!("  ({} trials)\n", f.trials));
}

fn census_table(f: &CensusFigures, s: &mut String) {
    s.push_str(&format!(
        "  workers {:?} (needs >= {}), at the end {:?}; runtime dead in {:?}; app imported in {:?}\n",
        f.workers, f.workers_at_least, f.workers_after, f.dead_runtimes, f.import_pids
    ));
    if let Some(fc) = &f.fork_control {
        s.push_str(&format!(
            "  fork control: parent alive={}, forked child alive={} (check: {})\n",
            fc.parent.alive, fc.child.alive, fc.child.check
        ));
    }
    if let Some(p) = &f.pair_ratio {
        s.push_str("  parallel across processes:\n");
        pair_ratio_table(p, s);
    }
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
    match &r.judgement.figures {
        Some(Figures::PairRatio(f)) => pair_ratio_table(f, &mut s),
        Some(Figures::Keepalive(f)) => keepalive_table(f, &mut s),
        Some(Figures::Census(f)) => census_table(f, &mut s),
        None => {}
    }
    for w in &r.judgement.warnings {
        s.push_str(&format!("  warning: {w}\n"));
    }
    s.push_str(&format!(
        "{} {} on {}: {}\n",
        r.verdict().label().to_uppercase(),
        r.row.id,
        r.server.profile,
        r.judgement.reason
    ));
    if r.verdict() == Verdict::Pass || r.verdict() == Verdict::Fail {
        s.push_str(&format!("  confidence: {}\n", r.judgement.confidence));
    }
    if let Some(tail) = &r.log_tail {
        if r.verdict() != Verdict::Pass {
            s.push_str(&format!(
                "  server log tail ({}):\n",
                r.server.log.display()
            ));
            for line in tail.lines() {
                s.push_str(&format!("    | {line}\n"));
            }
        }
    }
    s.push('\n');
    s
}
