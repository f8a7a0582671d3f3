//! Pair-ratio verdicts (E19): a pass needs the no-server capacity control to
//! show a free core, the control mode to separate as designed, and then the
//! mode under test to meet its bound with the gap to the control. If the
//! capacity or the control does not hold, the probe could not have failed,
//! so the verdict is "cannot judge", never pass.

use serde::Serialize;

use super::{margin, Figures, Judgement, Verdict, Warning};
use crate::probe::pair_ratio::{ModeRun, PairRatioRun};
use crate::spec::row::{Bound, PairRatioPlan};
use crate::stats::{ratio_of_minima, Spread};

/// Figures of one mode.
#[derive(Debug, Clone, Serialize)]
pub struct ModeFigures {
    pub name: String,
    pub path: String,
    /// min(pair) / min(single): the figure the verdict uses.
    pub ratio: f64,
    pub bound: Bound,
    pub holds: bool,
    /// Per-trial pair/single ratios.
    pub trial_ratios: Spread,
    pub single_ms: Spread,
    pub pair_ms: Spread,
    /// Trials whose own ratio also met the bound.
    pub agreeing_trials: usize,
    pub pair_threads: usize,
}

/// The judged figures of a pair-ratio run.
#[derive(Debug, Clone, Serialize)]
pub struct PairRatioFigures {
    pub under_test: ModeFigures,
    pub control: ModeFigures,
    /// How far the control stands from the mode under test, in the
    /// direction the row expects them to separate.
    pub gap: f64,
    pub gap_at_least: f64,
    /// min(pair)/min(single) of the no-server control.
    pub capacity: f64,
    pub capacity_at_most: f64,
    pub capacity_trials: Spread,
    pub trials: u32,
    pub margins: Margins,
}

/// A judgement before it is wrapped for reporting.
struct Assessed {
    verdict: Verdict,
    reason: String,
    confidence: String,
    figures: Option<PairRatioFigures>,
    warnings: Vec<Warning>,
}

fn mode_figures(run: &ModeRun, bound: Bound) -> Option<ModeFigures> {
    let ratio = ratio_of_minima(&run.pair_ms, &run.single_ms)?;
    let per_trial: Vec<f64> = run
        .pair_ms
        .iter()
        .zip(&run.single_ms)
        .map(|(p, s)| p / s)
        .collect();
    Some(ModeFigures {
        name: run.name.clone(),
        path: run.path.clone(),
        ratio,
        bound,
        holds: bound.holds(ratio),
        trial_ratios: Spread::of(&per_trial)?,
        single_ms: Spread::of(&run.single_ms)?,
        pair_ms: Spread::of(&run.pair_ms)?,
        agreeing_trials: per_trial.iter().filter(|r| bound.holds(**r)).count(),
        pair_threads: run.pair_threads,
    })
}

/// How far each figure stands from its bound, on the side it is on
/// (positive: the bound holds; negative: it is violated).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Margins {
    pub under_test: f64,
    pub control: f64,
    pub gap: f64,
    pub capacity: f64,
}


/// Whether a run's figures already decide its verdict: every figure that
/// the verdict rests on stands at least `plan.margin` from its bound. The
/// trial loop stops on this; a run that never gets there is ambiguous.
pub fn settled(plan: &PairRatioPlan, run: &PairRatioRun) -> bool {
    if run.broken.is_some() {
        return true;
    }
    let j = assess(plan, run);
    let Some(f) = &j.figures else { return false };
    let m = f.margins;
    let clear = |x: f64| x.abs() >= plan.margin;
    match j.verdict {
        // Every bound holds with room to spare.
        Verdict::Pass => clear(m.under_test) && clear(m.control) && clear(m.gap),
        // The control clearly separates and the claim clearly misses.
        Verdict::Fail => {
            clear(m.control) && (m.under_test <= -plan.margin || m.gap <= -plan.margin)
        }
        // No free core or a control that does not separate may be noise
        // that more trials outlast; keep going until the budget ends.
        Verdict::CannotJudge | Verdict::NotApplicable => false,
    }
}

/// Judges a pair-ratio run against its plan. With `last` set (the trial
/// budget is spent), a verdict that [`settled`] would not accept becomes
/// "cannot judge: ambiguous".
pub fn judge_pair_ratio(plan: &PairRatioPlan, run: &PairRatioRun, last: bool) -> Judgement {
    let mut a = assess(plan, run);
    if last && matches!(a.verdict, Verdict::Pass | Verdict::Fail) && !settled(plan, run) {
        a.reason = format!(
            "ambiguous after {} trials: a figure stayed within {:.2} of its bound ({}); would have been {}",
            run.trials_done,
            plan.margin,
            a.reason,
            a.verdict.label()
        );
        a.verdict = Verdict::CannotJudge;
    }
    let headline = a.figures.as_ref().map_or(String::new(), |f| format!("{:.2}x/{:.2}x", f.under_test.ratio, f.control.ratio));
    Judgement {
        verdict: a.verdict,
        reason: a.reason,
        confidence: a.confidence,
        figures: a.figures.map(Figures::PairRatio),
        warnings: a.warnings,
        headline,
    }
}

fn assess(plan: &PairRatioPlan, run: &PairRatioRun) -> Assessed {
    let mut warnings = Vec::new();
    for m in [&run.under_test, &run.control] {
        if !m.digest_checked {
            warnings.push(Warning::UnverifiedWork {
                mode: m.name.clone(),
                path: m.path.clone(),
            });
        }
    }
    let cannot =
        |reason: String, figures: Option<PairRatioFigures>, warnings: Vec<Warning>| Assessed {
            verdict: Verdict::CannotJudge,
            reason,
            confidence: "no verdict".into(),
            figures,
            warnings,
        };
    if let Some(broken) = &run.broken {
        return cannot(
            format!(
                "broken measurement after {} trial(s): {broken}",
                run.trials_done
            ),
            None,
            warnings,
        );
    }
    let singles: Vec<f64> = run.capacity.iter().map(|c| c.single_ms).collect();
    let pairs: Vec<f64> = run.capacity.iter().map(|c| c.pair_ms).collect();
    let per_trial: Vec<f64> = run
        .capacity
        .iter()
        .map(|c| c.pair_ms / c.single_ms)
        .collect();
    let (Some(u), Some(c), Some(capacity), Some(capacity_trials)) = (
        mode_figures(&run.under_test, plan.under_test.bound),
        mode_figures(&run.control, plan.control.bound),
        ratio_of_minima(&pairs, &singles),
        Spread::of(&per_trial),
    ) else {
        return cannot("no trial completed".into(), None, warnings);
    };
    if u.pair_threads == 1 && c.pair_threads == 1 {
        warnings.push(Warning::OneThread {
            mode: u.name.clone(),
        });
    }
    let gap = match plan.under_test.bound {
        Bound::AtMost(_) => c.ratio - u.ratio,
        Bound::AtLeast(_) => u.ratio - c.ratio,
    };
    let margins = Margins {
        under_test: margin(u.ratio, u.bound),
        control: margin(c.ratio, c.bound),
        gap: gap - plan.gap_at_least,
        capacity: plan.capacity_at_most - capacity,
    };
    let figures = PairRatioFigures {
        gap,
        gap_at_least: plan.gap_at_least,
        capacity,
        capacity_at_most: plan.capacity_at_most,
        capacity_trials,
        trials: run.trials_done,
        margins,
        under_test: u,
        control: c,
    };
    let (u, c) = (&figures.under_test, &figures.control);
    let n = figures.trials;
    if capacity > plan.capacity_at_most {
        return cannot(
            format!(
                "no free core: the same releasing work twice at once with no server in the path read {capacity:.2}x \
                 (needs <= {:.2}x) after {n} trials; something else is using the machine, so a serialised pair would \
                 look the same as a parallel one. Run on a quieter machine or one with more cores",
                plan.capacity_at_most
            ),
            Some(figures),
            warnings,
        );
    }
    if !c.holds {
        return cannot(
            format!(
                "the control did not separate: {} read {:.2}x (needs {}) after {n} trials, so this probe could not \
                 fail here and a pass would mean nothing; check that the control route does fixed work that holds the GIL",
                c.name, c.ratio, c.bound
            ),
            Some(figures),
            warnings,
        );
    }
    let confidence = format!(
        "{n} trials; {} of {n} alone agree for {}, {} of {n} for {}; margins {:+.2}x, {:+.2}x, gap {:+.2} (ambiguous under {:.2}); capacity {capacity:.2}x",
        u.agreeing_trials,
        u.name,
        c.agreeing_trials,
        c.name,
        margins.under_test,
        margins.control,
        margins.gap,
        plan.margin
    );
    let summary = format!(
        "{} {:.2}x ({}), {} {:.2}x ({}), gap {gap:.2} (needs >= {:.2})",
        u.name, u.ratio, u.bound, c.name, c.ratio, c.bound, plan.gap_at_least
    );
    let (verdict, reason) = if u.holds && gap >= plan.gap_at_least {
        (Verdict::Pass, summary)
    } else if !u.holds {
        (
            Verdict::Fail,
            format!(
                "{} read {:.2}x, outside {}: {summary}",
                u.name, u.ratio, u.bound
            ),
        )
    } else {
        (
            Verdict::Fail,
            format!(
                "the gap to the control is {gap:.2}, under {:.2}: {summary}",
                plan.gap_at_least
            ),
        )
    };
    Assessed { verdict, reason, confidence, figures: Some(figures), warnings }
}
