//! The terminal tables of a GIL probe: one line per arm, and the optional
//! threads-against-processes table. Pure functions from figures to text.

use std::fmt::Write;

use super::instrument::GilRun;
use super::judge::{ArmFigures, GilFigures, GilJudgement, ScaleFigures};
use crate::text::table::Grid;
use crate::verdict::Verdict;

/// The arms table.
///
/// ```text
///   arm          blocked med [range]      busy   calls/s    µs/call  bound
///   call         0.49 [0.45-0.53]         1.00      4162      240.1  holds >= 0.30
///   releases     0.00 [0.00-0.01]         1.00        85    11700.0  <= 0.15 ok
/// ```
pub fn render(f: &GilFigures) -> String {
    let b = f.bounds;
    let reading = f.instrument.reading();
    let mut grid = Grid::new(
        [
            "arm",
            &format!("{reading} med [range]"),
            "busy",
            "calls/s",
            "µs/call",
            "bound",
        ]
        .map(String::from),
    );
    grid.right(&[2, 3, 4]);
    let call_bound = match f.answer {
        Some(super::Expect::Releases) => format!("releases <= {:.2}", b.releases_at_most),
        Some(super::Expect::Holds) => format!("holds >= {:.2}", b.holds_at_least),
        None => format!(
            "releases <= {:.2}, holds >= {:.2}",
            b.releases_at_most, b.holds_at_least
        ),
    };
    arm_row(&mut grid, &f.call, call_bound);
    let c = &f.controls;
    // The judge's reading of each control, never judged again here.
    for (arm, check) in [&c.releases, &c.holds_half, &c.holds_all]
        .into_iter()
        .zip(&f.control_checks)
    {
        arm_row(
            &mut grid,
            arm,
            format!(
                "{} {}",
                check.designed,
                if check.as_designed {
                    "ok"
                } else {
                    "NOT AS DESIGNED"
                }
            ),
        );
    }
    let mut out = grid.render("  ");
    let extra = if f.rounds_run > f.rounds {
        format!(
            " ({} more than planned: some had no reading)",
            f.rounds_run - f.rounds
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  ({} rounds{extra} of {} ms per arm, interleaved; {})",
        f.rounds_run, f.round_ms, f.instrument_note
    );
    let _ = writeln!(
        out,
        "  controls: {}; {}; {}",
        c.releases.description, c.holds_half.description, c.holds_all.description
    );
    let _ = writeln!(
        out,
        "  python {} {} at {}{}",
        f.python.implementation,
        f.python.version,
        f.python.executable,
        f.runqueue
            .map(|rq| format!("; spinner waited for a core {rq:.2} of the time"))
            .unwrap_or_default()
    );
    if let Some(s) = &f.scale {
        out.push_str(&render_scale(s));
    }
    out
}

fn arm_row(grid: &mut Grid, arm: &ArmFigures, bound: String) {
    let r = arm.reading;
    grid.row([
        arm.arm.to_string(),
        format!("{:.2} [{:.2}-{:.2}]", r.median, r.min, r.max),
        format!("{:.2}", arm.busy),
        format!("{:.0}", arm.calls_per_s),
        arm.call_us.map_or("-".into(), |us| format!("{us:.1}")),
        bound,
    ]);
}

/// The threads-against-processes table, with its capacity control.
///
/// ```text
///   workers   threads calls/s   vs 1t   processes calls/s   vs 1t   capacity
///         1              3020   1.00x                3105   1.03x      1.00x
///         2              2840   0.94x                5470   1.81x      1.97x
/// ```
pub fn render_scale(s: &ScaleFigures) -> String {
    let mut grid = Grid::new([
        "workers",
        "threads calls/s",
        "vs 1t",
        "processes calls/s",
        "vs 1t",
        "capacity",
        "threads PSS",
        "processes PSS",
    ]);
    grid.right(&[0, 1, 2, 3, 4, 5, 6, 7]);
    let num = |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |x| format!("{x:.prec$}"));
    for l in &s.lines {
        grid.row([
            l.workers.to_string(),
            num(l.threads_calls_per_s.map(|m| m.median), 0),
            num(l.threads_x, 2) + "x",
            num(l.processes_calls_per_s.map(|m| m.median), 0),
            num(l.processes_x, 2) + "x",
            num(l.capacity_x, 2) + "x",
            num(l.threads_pss_mib, 0) + " MiB",
            num(l.processes_pss_mib, 0) + " MiB",
        ]);
    }
    let mut out = grid.render("  ");
    let _ = writeln!(
        out,
        "  ({} calls per worker, {:.1} µs per call alone; medians of {} interleaved reps; \
         processes started with spawn; vs 1t = over one thread's calls/s in the same rep; \
         capacity = Python bytecode in as many processes, over one: about N with N free cores; \
         PSS = peak over reps, the N processes summed, and for threads the probe's own process, \
         which holds every thread pool at once: an upper bound)",
        s.calls_per_worker, s.single_call_us, s.reps
    );
    if let Some(short) = s
        .lines
        .iter()
        .find(|l| l.workers > 1 && l.capacity_x.is_some_and(|c| c < 0.8 * f64::from(l.workers)))
    {
        let _ = writeln!(
            out,
            "  note: {} processes of plain bytecode ran only {:.2}x one: the machine had no free \
             cores, so this table shows the machine's load, not the call (neither column can \
             show scaling here); run it on a quieter machine",
            short.workers,
            short.capacity_x.unwrap_or_default()
        );
    }
    out
}

/// `runner gil-probe`'s terminal report: a verdict line, the table, the
/// reason, the confidence.
pub fn verdict_text(target: &str, j: &GilJudgement, run: &GilRun) -> String {
    let answer = j.figures.as_ref().and_then(|f| f.answer);
    let word = match (j.verdict, answer) {
        (Verdict::Fail, Some(a)) => format!("FAIL ({})", a.name().to_uppercase()),
        (_, Some(a)) => a.name().to_uppercase(),
        _ => "CANNOT JUDGE".to_string(),
    };
    let mut out = format!("{word} {target}");
    if !j.headline.is_empty() {
        out.push_str(&format!(": {}", j.headline));
    }
    out.push('\n');
    if let Some(f) = &j.figures {
        out.push_str(&render(f));
    }
    out.push_str(&format!("  {}\n", j.reason));
    out.push_str(&format!(
        "  confidence: {}; {:.2} s\n",
        j.confidence,
        run.elapsed_ms / 1e3
    ));
    out
}
