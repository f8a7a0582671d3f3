//! The pair-ratio table: one line per mode, then the capacity control.

use super::judge::{ModeFigures, PairRatioFigures};

fn ok(holds: bool) -> &'static str {
    if holds {
        "ok"
    } else {
        "no"
    }
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
        ok(m.holds)
    )
}

/// The table of a pair-ratio run's figures.
pub fn table(f: &PairRatioFigures, s: &mut String) {
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
