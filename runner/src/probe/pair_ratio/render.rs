//! The pair-ratio table: one line per mode, then the capacity control.

use super::judge::{p_bound, CapacitySource, ModeFigures, PairRatioFigures, WitnessRole};

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
    let capacity = match f.capacity_source {
        CapacitySource::Control => "capacity: the control's min pair / min single",
        CapacitySource::Kernel => {
            "capacity: 1 + the serving threads' run-queue time / the pair's wall"
        }
    };
    s.push_str(&format!(
        "  ({} trials, {} with a free core; single and pair are the fastest of each; ratio = min pair / min single; {capacity})\n",
        f.trials, f.valid_trials
    ));
    witness_table(f, s);
}

fn witness_line(m: &ModeFigures) -> Option<String> {
    let wit = m.witness.as_ref()?;
    let w = &wit.reading;
    let verdict = match wit.holds {
        Some(true) => "ok",
        Some(false) => "no",
        None => "-",
    };
    Some(format!(
        "  {:<12} {:>8.2} {:>11.2} {:>8.2} {:>9.2}   {:<16} {:>10}   {}\n",
        m.name,
        w.parallelism.median,
        w.unconvoyed.median,
        w.blocked.median,
        w.run_queue.median,
        format!(
            "[{:.2}-{:.2}] n={}",
            w.parallelism.min, w.parallelism.max, w.pairs
        ),
        wit.bound.map_or("-".to_string(), p_bound),
        verdict
    ))
}

/// The scheduler witness beside the wall figures (Linux).
fn witness_table(f: &PairRatioFigures, s: &mut String) {
    let lines: Vec<String> = [&f.under_test, &f.control]
        .into_iter()
        .filter_map(witness_line)
        .collect();
    if lines.is_empty() {
        if let Some(note) = &f.witness_note {
            s.push_str(&format!("  scheduler witness: {note}\n"));
        }
        return;
    }
    s.push_str(&format!(
        "  {:<12} {:>8} {:>11} {:>8} {:>9}   {:<16} {:>10}\n",
        "witness", "P", "unconvoyed", "blocked", "run-queue", "P range", "bound"
    ));
    for l in lines {
        s.push_str(&l);
    }
    let role = match f.witness {
        WitnessRole::Agrees => "agrees with the wall gap",
        WitnessRole::Disagrees => "DISAGREES with the wall gap",
        WitnessRole::Decides => "decides alone (the wall ratio had no free core)",
        WitnessRole::Silent => {
            "is silent (its own control did not separate, or noise could explain it)"
        }
        WitnessRole::Unavailable => "is not judged",
    };
    s.push_str(&format!(
        "  (P: serving threads' runnable time / pair wall, median; blocked and run-queue: their shares; the witness {role}{})\n",
        f.witness_note.as_deref().map_or(String::new(), |n| format!("; {n}"))
    ));
}
