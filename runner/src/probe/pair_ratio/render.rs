//! The pair-ratio table: one line per mode, then the capacity control.

use super::judge::{p_bound, CapacitySource, ModeFigures, PairRatioFigures, WitnessRole};
use crate::text::table::Grid;

fn ok(holds: bool) -> &'static str {
    if holds {
        "ok"
    } else {
        "no"
    }
}

fn mode_row(grid: &mut Grid, m: &ModeFigures) {
    grid.row([
        m.name.to_string(),
        format!("{:.1}", m.single_ms.min),
        format!("{:.1}", m.pair_ms.min),
        format!("{:.2}x", m.ratio),
        format!(
            "{:.2} [{:.2}-{:.2}]",
            m.trial_ratios.median, m.trial_ratios.min, m.trial_ratios.max
        ),
        m.bound.to_string(),
        ok(m.holds).to_string(),
    ]);
}

/// The table of a pair-ratio run's figures.
pub fn table(f: &PairRatioFigures, s: &mut String) {
    let mut grid = Grid::new([
        "mode",
        "single ms",
        "pair ms",
        "ratio",
        "trials med [range]",
        "bound",
        "",
    ]);
    grid.right(&[1, 2, 3, 5]);
    mode_row(&mut grid, &f.under_test);
    mode_row(&mut grid, &f.control);
    grid.row([
        "capacity".to_string(),
        String::new(),
        String::new(),
        format!("{:.2}x", f.capacity),
        format!(
            "{:.2} [{:.2}-{:.2}]",
            f.capacity_trials.median, f.capacity_trials.min, f.capacity_trials.max
        ),
        format!("<= {:.2}x", f.capacity_at_most),
        ok(f.capacity <= f.capacity_at_most).to_string(),
    ]);
    s.push_str(&grid.render("  "));
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

fn witness_row(m: &ModeFigures) -> Option<[String; 8]> {
    let wit = m.witness.as_ref()?;
    let w = &wit.reading;
    let verdict = match wit.holds {
        Some(true) => "ok",
        Some(false) => "no",
        None => "-",
    };
    Some([
        m.name.to_string(),
        format!("{:.2}", w.parallelism.median),
        format!("{:.2}", w.unconvoyed.median),
        format!("{:.2}", w.blocked.median),
        format!("{:.2}", w.run_queue.median),
        format!(
            "[{:.2}-{:.2}] n={}",
            w.parallelism.min, w.parallelism.max, w.pairs
        ),
        wit.bound.map_or("-".to_string(), p_bound),
        verdict.to_string(),
    ])
}

/// The scheduler witness beside the wall figures (Linux).
fn witness_table(f: &PairRatioFigures, s: &mut String) {
    let rows: Vec<[String; 8]> = [&f.under_test, &f.control]
        .into_iter()
        .filter_map(witness_row)
        .collect();
    if rows.is_empty() {
        if let Some(note) = &f.witness_note {
            s.push_str(&format!("  scheduler witness: {note}\n"));
        }
        return;
    }
    let mut grid = Grid::new([
        "witness",
        "P",
        "unconvoyed",
        "blocked",
        "run-queue",
        "P range",
        "bound",
        "",
    ]);
    grid.right(&[1, 2, 3, 4, 6]);
    for row in rows {
        grid.row(row);
    }
    s.push_str(&grid.render("  "));
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
