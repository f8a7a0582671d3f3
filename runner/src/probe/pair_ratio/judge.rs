//! Judging a pair-ratio run (E19). The headline is the gap in wall time
//! between the modes (docs/gap-not-threshold.md). Beside it stands the scheduler witness
//! (Linux): the serving threads' runnable parallelism over each pair, which
//! noise cannot move the way it moves wall time (waiting for a core is
//! run-queue time and counts as runnable; waiting for the GIL or a lock is
//! sleep and does not).
//!
//! - With a free core (at least `free_core_trials` trials whose capacity sample
//!   found one), the wall gap decides and the witness must agree; where
//!   they disagree the verdict is "cannot judge", naming both.
//! - With no free core, the wall ratio is not usable and the witness
//!   decides alone, and the reason says so.
//! - Where the witness is unavailable (not Linux, frozen counters) or the
//!   row sets no witness bounds, the wall rules alone apply: a fail must
//!   then hold over `fail_confirm_factor` x `trials.min` trials with a free
//!   core, since noise only adds time and can fake a fail but not a pass. A
//!   fail the witness confirms (the threads were not runnable together)
//!   needs no extra trials: noise adds run-queue time, not sleep.
//! - A control that does not separate, or unverified work, is "cannot
//!   judge", never pass: the probe could not have failed.

use schemars::JsonSchema;
use serde::Serialize;

use super::measure::{ModeRun, PairRatioRun};
use super::rulebook::{self, Medians, Rules, Ruling};
use super::PairRatioPlan;
use crate::kernel::pairs::{self, Counted, PairsReading};
use crate::spec::{Bound, Trials};
use crate::stats::{ratio_of_minima, Spread};
use crate::verdict::{margin, Judged, Verdict, Warning};

/// Figures of one mode.
#[derive(Debug, Clone, Serialize, JsonSchema)]
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
    /// The scheduler witness over every witnessed pair of this mode (all
    /// trials: the witness needs no free core); None where there is none.
    pub witness: Option<ModeWitness>,
}

/// The scheduler witness of one mode: its pairs reduced once
/// (`kernel/pairs.rs`), and what the rulebook made of them.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ModeWitness {
    #[serde(flatten)]
    pub reading: PairsReading,
    /// The row's bound on `parallelism.median`, if it sets one.
    pub bound: Option<Bound>,
    /// The rulebook's call on this mode: for the mode under test, whether
    /// the pair ran at once (None: it cannot tell); for the control,
    /// whether it separates.
    pub holds: Option<bool>,
}

/// What the witness said about the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WitnessRole {
    /// The wall gap decided and the witness agreed.
    Agrees,
    /// The wall gap and the witness disagreed: cannot judge.
    Disagrees,
    /// No free core: the wall ratio was not usable; the witness decided.
    Decides,
    /// The witness's own control did not separate; it said nothing.
    Silent,
    /// No witness here (not Linux, frozen counters, no bounds in the row).
    Unavailable,
}

/// The judged figures of a pair-ratio run.
#[derive(Debug, Clone, Serialize, JsonSchema)]
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
    /// Trials whose capacity sample found a free core: the only ones the
    /// mode figures are computed from.
    pub valid_trials: u32,
    pub margins: Margins,
    pub witness: WitnessRole,
    /// Why there is no witness, where there is none.
    pub witness_note: Option<String>,
    /// The rulebook's ruling on the witness (`rulebook.rs`), where the row
    /// sets its bounds and both modes were witnessed.
    pub ruling: Option<Ruling>,
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
        witness: None,
    })
}

/// The witness over every witnessed pair of `run` (every serving thread
/// read; one thread that served both requests reads about 1, as it must);
/// None with no such pair. `holds` is the rulebook's, set by [`assess`].
fn mode_witness(run: &ModeRun, bound: Option<Bound>) -> Option<ModeWitness> {
    Some(ModeWitness {
        reading: pairs::reduce(&run.witness, Counted::EveryServed)?,
        bound,
        holds: None,
    })
}

/// How far each figure stands from its bound, on the side it is on
/// (positive: the bound holds; negative: it is violated).
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub struct Margins {
    pub under_test: f64,
    pub control: f64,
    pub gap: f64,
    pub capacity: f64,
    /// The witness's parallelism against its bounds, where there is one.
    pub witness_under_test: Option<f64>,
    pub witness_control: Option<f64>,
}

/// What the witness alone says: the pair ran at once (Some(true)) or not
/// (Some(false)); None when it cannot say.
fn witness_call(f: &PairRatioFigures) -> Option<bool> {
    f.ruling?.at_once()
}

fn describe_witness(f: &PairRatioFigures) -> String {
    let one = |m: &ModeFigures| match &m.witness {
        Some(w) => format!(
            "{} P {:.2} (unconvoyed {:.2}){}",
            m.name,
            w.reading.parallelism.median,
            w.reading.unconvoyed.median,
            w.bound
                .map_or(String::new(), |b| format!(" ({})", p_bound(b)))
        ),
        None => format!("{} unwitnessed", m.name),
    };
    format!("{}, {}", one(&f.under_test), one(&f.control))
}

/// A parallelism bound as the reports show it (`P >= 1.60`).
pub fn p_bound(b: Bound) -> String {
    match b {
        Bound::AtMost(v) => format!("P <= {v:.2}"),
        Bound::AtLeast(v) => format!("P >= {v:.2}"),
    }
}

/// Why more trials could still change a provisional verdict, naming the
/// figure; None once the figures decide it. "Cannot judge" always wants
/// more trials: noise may pass.
fn unsettled(
    plan: &PairRatioPlan,
    trials: Trials,
    v: Verdict,
    f: &PairRatioFigures,
) -> Option<String> {
    let m = f.margins;
    let n = f.trials;
    let near = |name: &str, value: f64, bound: String, room: f64| {
        (room.abs() < plan.margin).then(|| {
            format!(
                "ambiguous after {n} trials: {name} read {value:.2}, within {:.2} of its bound ({bound})",
                plan.margin
            )
        })
    };
    let u = &f.under_test;
    let c = &f.control;
    let wall_u = || near(&u.name, u.ratio, u.bound.to_string(), m.under_test);
    let wall_c = || near(&c.name, c.ratio, c.bound.to_string(), m.control);
    let gap = || near("the gap", f.gap, format!(">= {:.2}", f.gap_at_least), m.gap);
    let witness_near = |mf: &ModeFigures, room: Option<f64>| {
        let w = mf.witness.as_ref()?;
        near(
            &format!("{}'s witness P", mf.name),
            w.reading.parallelism.median,
            p_bound(w.bound?),
            room?,
        )
    };
    let wit_u = || witness_near(u, m.witness_under_test);
    let wit_c = || witness_near(c, m.witness_control);
    match (v, f.witness) {
        // The witness decides alone: the mode under test must clear its
        // bound by the margin. The control only has to hold its own bound,
        // which a row sets a margin below the pass bound (E19: P <= 1.6
        // against P >= 1.7), so a pass needs the modes at least twice the
        // margin apart (under test >= 1.8 to settle) with no second margin
        // on the control: at the end of the budget that margin turned a
        // holding control at 1.52 into "ambiguous" while releasing read 1.97.
        (Verdict::Pass, WitnessRole::Decides) => wit_u(),
        // The wall gap decides; the witness only has to agree, which it did.
        (Verdict::Pass, WitnessRole::Agrees) => wall_u().or_else(wall_c).or_else(gap),
        (Verdict::Pass, _) => wall_u().or_else(wall_c).or_else(gap),
        (Verdict::Fail, WitnessRole::Decides) => {
            // The witness alone holds a fail to the same count of trials
            // the wall does: a serving thread starved of its request by a
            // loaded event loop would sleep, and sleep reads as serialised.
            let needs = plan.fail_needs(trials);
            if n < needs {
                return Some(format!(
                    "a fail by the scheduler witness alone needs {needs} trials; {n} so far"
                ));
            }
            wit_c()
        }
        (Verdict::Fail, role) => {
            // The witness confirming a fail stands in for the extra trials.
            let needs = plan.fail_needs(trials);
            if role != WitnessRole::Agrees && f.valid_trials < needs {
                return Some(format!(
                    "not enough trials with a free core to confirm a fail: {} of {n} (a fail needs {needs}; \
                     no scheduler witness to confirm it sooner)",
                    f.valid_trials
                ));
            }
            if let Some(why) = wall_c() {
                return Some(why);
            }
            let clearly_missed = m.under_test <= -plan.margin || m.gap <= -plan.margin;
            (!clearly_missed).then(|| {
                wall_u()
                    .or_else(gap)
                    .unwrap_or_else(|| format!("ambiguous after {n} trials"))
            })
        }
        (Verdict::CannotJudge | Verdict::NotApplicable, _) => Some("no verdict yet".into()),
    }
}

/// Judges a pair-ratio run against its plan. The verdict is provisional
/// while `unsettled` is set; [`Judged::concluded`] makes it final.
pub fn judge(plan: &PairRatioPlan, trials: Trials, run: &PairRatioRun) -> Judged<PairRatioFigures> {
    let mut j = assess(plan, trials, run);
    j.headline = j.figures.as_ref().map_or(String::new(), |f| {
        let wall = format!("{:.2}x/{:.2}x", f.under_test.ratio, f.control.ratio);
        match (&f.under_test.witness, &f.control.witness) {
            (Some(u), Some(c)) => format!(
                "{wall} P {:.2}/{:.2}",
                u.reading.parallelism.median, c.reading.parallelism.median
            ),
            _ => wall,
        }
    });
    j.unsettled = match (&run.broken, &j.figures) {
        (Some(_), _) => None,
        (None, Some(f)) => unsettled(plan, trials, j.verdict, f),
        (None, None) => Some("no trial completed".into()),
    };
    j
}

fn assess(plan: &PairRatioPlan, trials: Trials, run: &PairRatioRun) -> Judged<PairRatioFigures> {
    let mut warnings = Vec::new();
    for m in [&run.under_test, &run.control] {
        if !m.digest_checked {
            warnings.push(Warning::UnverifiedWork {
                mode: m.name.clone(),
                path: m.path.clone(),
            });
        }
    }
    let cannot = |reason: String, figures: Option<PairRatioFigures>, warnings: Vec<Warning>| {
        let mut j = Judged::bare(Verdict::CannotJudge, reason);
        j.figures = figures;
        j.warnings = warnings;
        j
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
    // Only trials whose own capacity sample found a free core are evidence
    // for the wall figures. Measured under intermittent load (other
    // processes compiling), a run's best capacity sample alone was too
    // optimistic: one lucky sample let trials whose pairs never had two
    // cores read as a failed claim.
    let valid: Vec<usize> = (0..per_trial.len())
        .filter(|&t| per_trial[t] <= plan.capacity_at_most)
        .collect();
    let evidence = |m: &ModeRun| -> ModeRun {
        let pick = |v: &[f64]| {
            valid
                .iter()
                .filter_map(|&t| v.get(t).copied())
                .collect::<Vec<f64>>()
        };
        let mut kept = m.clone();
        if !valid.is_empty() {
            kept.single_ms = pick(&m.single_ms);
            kept.pair_ms = pick(&m.pair_ms);
        }
        kept
    };
    let (Some(mut u), Some(mut c), Some(capacity), Some(capacity_trials)) = (
        mode_figures(&evidence(&run.under_test), plan.under_test.bound),
        mode_figures(&evidence(&run.control), plan.control.bound),
        ratio_of_minima(&pairs, &singles),
        Spread::of(&per_trial),
    ) else {
        return cannot("no trial completed".into(), None, warnings);
    };
    u.witness = mode_witness(&run.under_test, plan.under_test.witness_bound);
    c.witness = mode_witness(&run.control, plan.control.witness_bound);
    let rules = Rules::of_plan(plan);
    let ruled = match (rules, &u.witness, &c.witness) {
        (Some(rules), Some(uw), Some(cw)) => {
            let (view, control) = (Medians::of(&uw.reading), Medians::of(&cw.reading));
            Some((
                rulebook::rule(&view, &control, &rules),
                rules.control_separates(&control),
            ))
        }
        _ => None,
    };
    if let Some((ruling, separates)) = ruled {
        if let Some(w) = u.witness.as_mut() {
            w.holds = ruling.at_once();
        }
        if let Some(w) = c.witness.as_mut() {
            w.holds = Some(separates);
        }
    }
    let ruling = ruled.map(|(r, _)| r);
    if run.peer_port_byte_swapped {
        warnings.push(Warning::SwappedPeerPort);
    }
    if u.pair_threads == 1 && c.pair_threads == 1 {
        warnings.push(Warning::OneThread {
            mode: u.name.clone(),
        });
    }
    let gap = match plan.under_test.bound {
        Bound::AtMost(_) => c.ratio - u.ratio,
        Bound::AtLeast(_) => u.ratio - c.ratio,
    };
    let witness_margin = |m: &ModeFigures| {
        let w = m.witness.as_ref()?;
        Some(margin(w.reading.parallelism.median, w.bound?))
    };
    let margins = Margins {
        under_test: margin(u.ratio, u.bound),
        control: margin(c.ratio, c.bound),
        gap: gap - plan.gap_at_least,
        capacity: plan.capacity_at_most - capacity,
        witness_under_test: witness_margin(&u),
        witness_control: witness_margin(&c),
    };
    let witness_note = run.witness_unavailable.clone().or_else(|| {
        rules.is_none().then(|| {
            "the row sets no parallelism bounds for its modes (parallelism_at_least on the mode under test, \
             parallelism_at_most on the control), so the scheduler witness is shown but not judged"
                .to_string()
        })
    });
    let mut figures = PairRatioFigures {
        gap,
        gap_at_least: plan.gap_at_least,
        capacity,
        capacity_at_most: plan.capacity_at_most,
        capacity_trials,
        trials: run.trials_done,
        valid_trials: valid.len() as u32,
        margins,
        under_test: u,
        control: c,
        witness: WitnessRole::Unavailable,
        witness_note,
        ruling,
    };
    let call = witness_call(&figures);
    let witness_said = describe_witness(&figures);
    let n = figures.trials;
    let k = figures.valid_trials;
    let (u, c) = (&figures.under_test, &figures.control);
    // Rule 5: only verified work can carry a verdict. A route without a
    // digest (a deadline spin, a sleep, a stub) could separate by noise
    // alone, as two identical /busy modes did once under load.
    if let Some(m) = [&run.under_test, &run.control]
        .into_iter()
        .find(|m| !m.digest_checked)
    {
        let reason = format!(
            "mode {} ({}) does work the runner cannot verify, so no verdict rests on it; \
             {} read {:.2}x and {} {:.2}x. Use a /work route",
            m.name, m.path, u.name, u.ratio, c.name, c.ratio
        );
        return cannot(reason, Some(figures), warnings);
    }
    let summary = format!(
        "{} {:.2}x ({}), {} {:.2}x ({}), gap {gap:.2} (needs >= {:.2})",
        u.name, u.ratio, u.bound, c.name, c.ratio, c.bound, plan.gap_at_least
    );
    let needs_free = plan.free_core_trials_needed(trials);
    if k < needs_free {
        let no_core = format!(
            "no free core: in only {k} of {n} trials did the same releasing work twice at once with no server in \
             the path read <= {:.2}x (best {capacity:.2}x; needs {} such trials)",
            plan.capacity_at_most, needs_free
        );
        let Some(claim) = call else {
            let witness = match &figures.witness_note {
                Some(note) => format!("; {note}"),
                None => format!(
                    "; the scheduler witness could not decide either ({witness_said}; a pass needs the mode under \
                     test on its bound by both figures and the control on its own, a fail an unconvoyed figure at \
                     most {})",
                    plan.serialised_at_most.map_or("(unset)".to_string(), |v| format!("{v:.2}"))
                ),
            };
            let reason = format!(
                "{no_core}{witness}. Something else is using the machine, so a serialised pair would look the same \
                 as a parallel one. Run on a quieter machine or one with more cores"
            );
            return cannot(reason, Some(figures), warnings);
        };
        figures.witness = WitnessRole::Decides;
        let verdict = if claim { Verdict::Pass } else { Verdict::Fail };
        let reason = format!(
            "{} by the scheduler witness ({witness_said}); wall ratio not usable: {no_core}",
            verdict.label()
        );
        let confidence = format!(
            "{n} trials, {} witnessed pairs of {} and {} of {}; the witness counts waiting for a core as runnable, \
             so it needs no free core; wall figures (not used): {summary}",
            figures.under_test.witness.as_ref().map_or(0, |w| w.reading.pairs),
            figures.under_test.name,
            figures.control.witness.as_ref().map_or(0, |w| w.reading.pairs),
            figures.control.name,
        );
        return Judged {
            verdict,
            reason,
            confidence,
            figures: Some(figures),
            warnings,
            headline: String::new(),
            unsettled: None,
        };
    }
    if !c.holds {
        let reason = format!(
            "the control did not separate: {} read {:.2}x (needs {}) after {n} trials, so this probe could not \
             fail here and a pass would mean nothing; check that the control route does fixed work that holds the GIL",
            c.name, c.ratio, c.bound
        );
        return cannot(reason, Some(figures), warnings);
    }
    let wall = if u.holds && gap >= plan.gap_at_least {
        (Verdict::Pass, summary.clone())
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
    let confidence = format!(
        "{n} trials ({k} with a free core); {} of {k} alone agree for {}, {} of {k} for {}; margins {:+.2}x, {:+.2}x, \
         gap {:+.2} (ambiguous under {:.2}); capacity {capacity:.2}x; witness: {}",
        u.agreeing_trials,
        u.name,
        c.agreeing_trials,
        c.name,
        margins.under_test,
        margins.control,
        margins.gap,
        plan.margin,
        figures.witness_note.as_deref().unwrap_or(&witness_said)
    );
    let (verdict, reason) = match (wall, call, &figures.witness_note) {
        (wall, _, Some(_)) => wall,
        ((v, reason), Some(claim), None) if claim == (v == Verdict::Pass) => {
            figures.witness = WitnessRole::Agrees;
            (
                v,
                format!("{reason}; the scheduler witness agrees ({witness_said})"),
            )
        }
        ((Verdict::Fail, reason), Some(true), None) if k < plan.fail_needs(trials) => {
            // A wall fail on fewer trials with a free core than a fail needs
            // is no verdict yet (noise can fake a fail); the witness, which
            // noise cannot push toward a pass, decides.
            figures.witness = WitnessRole::Decides;
            (
                Verdict::Pass,
                format!(
                    "pass by the scheduler witness ({witness_said}); the wall gap's fail ({reason}) rests on {k} \
                     trials with a free core, fewer than the {} a fail needs",
                    plan.fail_needs(trials)
                ),
            )
        }
        ((v, reason), Some(_), None) => {
            figures.witness = WitnessRole::Disagrees;
            (
                Verdict::CannotJudge,
                format!(
                    "the wall clock and the scheduler witness disagree: the wall gap says {} ({reason}), the witness \
                     says {} ({witness_said})",
                    v.label(),
                    if v == Verdict::Pass { "FAIL" } else { "pass" }
                ),
            )
        }
        ((v, reason), None, None) => {
            figures.witness = WitnessRole::Silent;
            (
                v,
                format!("{reason}; the scheduler witness could not decide ({witness_said})"),
            )
        }
    };
    Judged {
        verdict,
        reason,
        confidence,
        figures: Some(figures),
        warnings,
        headline: String::new(),
        unsettled: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::control::ControlSample;
    use crate::spec::{Mode, ServerSettings};

    fn plan(under_path: &str, control_path: &str) -> PairRatioPlan {
        let mode = |name: &str, path: &str, bound| Mode {
            name: name.into(),
            path: path.into(),
            server: ServerSettings::default(),
            bound,
            witness_bound: None,
        };
        PairRatioPlan {
            work_kib: 64,
            warmup: 0,
            under_test: mode("releasing", under_path, Bound::AtMost(1.35)),
            control: mode("holding", control_path, Bound::AtLeast(1.7)),
            gap_at_least: 0.5,
            capacity_at_most: 1.3,
            margin: 0.1,
            connections_at_most: 2,
            fail_confirm_factor: 2,
            serialised_at_most: None,
            free_core_trials: 5,
            infer_serving_threads: false,
        }
    }

    fn mode_run(name: &str, path: &str, single: f64, ratio: f64, trials: usize) -> ModeRun {
        ModeRun {
            name: name.into(),
            path: path.into(),
            digest_checked: path.starts_with("/work"),
            single_ms: vec![single; trials],
            pair_ms: vec![single * ratio; trials],
            pair_threads: 2,
            pair_pids: 1,
            connection_ports: [1, 2],
            witness: Vec::new(),
        }
    }

    /// A run whose figures read `under` and `control` with capacity `capacity`.
    fn run(
        p: &PairRatioPlan,
        under: f64,
        control: f64,
        capacity: f64,
        trials: usize,
    ) -> PairRatioRun {
        PairRatioRun {
            under_test: mode_run("releasing", &p.under_test.path, 20.0, under, trials),
            control: mode_run("holding", &p.control.path, 20.0, control, trials),
            capacity: vec![
                ControlSample {
                    single_ms: 20.0,
                    pair_ms: 20.0 * capacity
                };
                trials
            ],
            connection_ports: [1, 2],
            trials_done: trials as u32,
            broken: None,
            peer_port_byte_swapped: false,
            witness_unavailable: None,
        }
    }

    const BUDGET: Trials = Trials { min: 5, max: 15 };

    fn verdict(p: &PairRatioPlan, r: &PairRatioRun) -> (Verdict, String) {
        let j = judge(p, BUDGET, r).concluded();
        (j.verdict, j.reason)
    }

    #[test]
    fn clear_gap_passes_and_no_gap_fails() {
        let p = plan("/work?mode=release", "/work?mode=hold");
        assert_eq!(verdict(&p, &run(&p, 1.02, 2.01, 1.03, 5)).0, Verdict::Pass);
        // A fail is confirmed over twice the minimum trials...
        let (v, reason) = verdict(&p, &run(&p, 1.98, 2.01, 1.03, 10));
        assert_eq!(v, Verdict::Fail);
        assert!(reason.contains("releasing read 1.98x"), "{reason}");
        // ...so five trials are not yet enough to settle on it.
        assert!(!judge(&p, BUDGET, &run(&p, 1.98, 2.01, 1.03, 5)).settled());
        assert!(judge(&p, BUDGET, &run(&p, 1.02, 2.01, 1.03, 5)).settled());
    }

    #[test]
    fn only_trials_with_a_free_core_are_evidence() {
        // The releasing pairs of trials 0-3 ran while something else held a
        // core (their capacity samples read 2.0x); one trial was clean. The
        // old figure (best capacity sample, all pairs) read a false fail.
        let p = plan("/work?mode=release", "/work?mode=hold");
        let mut r = run(&p, 1.98, 2.01, 2.0, 15);
        for t in 5..15 {
            r.capacity[t].pair_ms = 20.0 * 1.03;
            r.under_test.pair_ms[t] = 20.0 * 1.02;
        }
        let j = judge(&p, BUDGET, &r).concluded();
        assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
        // Twin: with only one clean trial there is no verdict at all.
        let mut r = run(&p, 1.98, 2.01, 2.0, 15);
        r.capacity[7].pair_ms = 20.0 * 1.03;
        let (v, reason) = verdict(&p, &r);
        assert_eq!(v, Verdict::CannotJudge);
        assert!(reason.contains("in only 1 of 15 trials"), "{reason}");
    }

    #[test]
    fn no_free_core_cannot_judge_even_when_the_figures_fail() {
        let p = plan("/work?mode=release", "/work?mode=hold");
        let (v, reason) = verdict(&p, &run(&p, 2.0, 2.0, 2.0, 15));
        assert_eq!(v, Verdict::CannotJudge);
        assert!(reason.starts_with("no free core"), "{reason}");
    }

    #[test]
    fn a_control_that_does_not_separate_cannot_judge_even_when_the_claim_holds() {
        let p = plan("/work?mode=release", "/work?mode=hold");
        let (v, reason) = verdict(&p, &run(&p, 1.0, 1.0, 1.0, 15));
        assert_eq!(v, Verdict::CannotJudge);
        assert!(reason.contains("control did not separate"), "{reason}");
    }

    #[test]
    fn unverified_work_never_passes() {
        // Figures that would pass, on routes without a digest.
        let p = plan("/busy?ms=25", "/busy?ms=26");
        let (v, reason) = verdict(&p, &run(&p, 1.02, 2.01, 1.03, 5));
        assert_eq!(v, Verdict::CannotJudge);
        assert!(reason.contains("cannot verify"), "{reason}");
    }

    #[test]
    fn a_figure_near_its_bound_is_ambiguous_at_the_end_of_the_budget() {
        let p = plan("/work?mode=release", "/work?mode=hold");
        // 1.30 is within 0.10 of 1.35: not settled; at the last trial it is
        // "cannot judge", never a pass.
        let r = run(&p, 1.30, 2.0, 1.03, 15);
        assert!(!judge(&p, BUDGET, &r).settled());
        let (v, reason) = verdict(&p, &r);
        assert_eq!(v, Verdict::CannotJudge);
        assert!(reason.starts_with("ambiguous after 15 trials"), "{reason}");
        // Twin: the same figures before the budget ends are a provisional pass.
        assert_eq!(judge(&p, BUDGET, &r).verdict, Verdict::Pass);
    }

    #[test]
    fn ratio_of_minima_drives_the_verdict_not_one_noisy_trial() {
        let p = plan("/work?mode=release", "/work?mode=hold");
        let mut r = run(&p, 1.02, 2.01, 1.03, 5);
        // One pair of the releasing mode caught a burst of load.
        r.under_test.pair_ms[2] = 60.0;
        let j = judge(&p, BUDGET, &r).concluded();
        assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
        assert!(
            j.confidence.contains("4 of 5 alone agree for releasing"),
            "{}",
            j.confidence
        );
    }

    use crate::kernel::witness::{ThreadFigures, Witness};

    const MS: u64 = 1_000_000;

    /// A pair's witness over 40 ms: each serving thread (on-CPU ms,
    /// run-queue ms); the others' run-queue time is what the other thread
    /// of the pair spent waiting for a core.
    fn pair_witness(threads: &[(u64, u64)]) -> Witness {
        let wall = 40 * MS;
        let total_rq: u64 = threads.iter().map(|t| t.1 * MS).sum();
        Witness {
            wall_ns: wall,
            parallelism: None,
            on_cpu_ns: 0,
            run_queue_ns: total_rq,
            threads: threads
                .iter()
                .enumerate()
                .map(|(i, &(on, rq))| ThreadFigures {
                    tid: i as i32 + 1,
                    on_cpu_ns: on * MS,
                    run_queue_ns: rq * MS,
                    blocked_ns: wall.saturating_sub((on + rq) * MS),
                    others_run_queue_ns: total_rq - rq * MS,
                })
                .collect(),
            unseen: Vec::new(),
            appeared: 0,
            vanished: 0,
        }
    }

    /// The E19 plan with witness bounds.
    fn witnessed_plan() -> PairRatioPlan {
        let mut p = plan("/work?mode=release", "/work?mode=hold");
        p.under_test.witness_bound = Some(Bound::AtLeast(1.7));
        p.control.witness_bound = Some(Bound::AtMost(1.6));
        p.serialised_at_most = Some(1.4);
        p
    }

    /// Both threads runnable all along (some of it waiting for a core).
    fn parallel() -> Witness {
        pair_witness(&[(25, 15), (26, 14)])
    }

    /// Two threads taking turns behind a lock, nobody waiting for a core.
    fn serialised() -> Witness {
        pair_witness(&[(20, 0), (20, 0)])
    }

    fn witnessed(
        p: &PairRatioPlan,
        wall: (f64, f64, f64),
        under: fn() -> Witness,
        control: fn() -> Witness,
        trials: usize,
    ) -> PairRatioRun {
        let mut r = run(p, wall.0, wall.1, wall.2, trials);
        r.under_test.witness = (0..trials).map(|_| Some(under())).collect();
        r.control.witness = (0..trials).map(|_| Some(control())).collect();
        r
    }

    #[test]
    fn with_no_free_core_the_witness_decides_a_pass_alone() {
        let p = witnessed_plan();
        // The wall ratios are useless (no free core: capacity 2.0x)...
        let r = witnessed(&p, (2.0, 2.0, 2.0), parallel, serialised, 5);
        let j = judge(&p, BUDGET, &r).concluded();
        assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
        assert!(
            j.reason.starts_with("pass by the scheduler witness"),
            "{}",
            j.reason
        );
        assert!(
            j.reason.contains("wall ratio not usable: no free core"),
            "{}",
            j.reason
        );
        // Twin: the same machine with a serialised mode under test is no pass.
        let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, serialised, 5);
        assert_ne!(judge(&p, BUDGET, &r).concluded().verdict, Verdict::Pass);
    }

    #[test]
    fn a_witness_fail_alone_needs_the_confirming_trials() {
        let p = witnessed_plan();
        let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, serialised, 5);
        let j = judge(&p, BUDGET, &r);
        assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
        assert!(
            !j.settled(),
            "5 trials are not enough for a witness fail alone"
        );
        let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, serialised, 10);
        let j = judge(&p, BUDGET, &r);
        assert!(j.settled(), "{:?}", j.unsettled);
        assert_eq!(j.concluded().verdict, Verdict::Fail);
    }

    #[test]
    fn a_wall_fail_the_witness_confirms_needs_no_extra_trials() {
        let p = witnessed_plan();
        let r = witnessed(&p, (1.98, 2.01, 1.03), serialised, serialised, 5);
        let j = judge(&p, BUDGET, &r);
        assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
        assert!(j.settled(), "{:?}", j.unsettled);
        assert!(
            j.reason.contains("the scheduler witness agrees"),
            "{}",
            j.reason
        );
        // Twin: with no witness the same fail waits for 10 trials with a
        // free core, and says so.
        let r = run(&p, 1.98, 2.01, 1.03, 5);
        let j = judge(&p, BUDGET, &r);
        assert!(!j.settled());
        assert!(
            j.unsettled
                .as_deref()
                .unwrap()
                .starts_with("not enough trials with a free core to confirm a fail: 5 of 5"),
            "{:?}",
            j.unsettled
        );
    }

    #[test]
    fn the_wall_and_the_witness_disagreeing_cannot_judge() {
        let p = witnessed_plan();
        // The wall says parallel; the witness says the threads took turns.
        let r = witnessed(&p, (1.02, 2.01, 1.03), serialised, serialised, 15);
        let (v, reason) = verdict(&p, &r);
        assert_eq!(v, Verdict::CannotJudge);
        assert!(reason.contains("disagree"), "{reason}");
        // Twin: agreeing, it passes.
        let r = witnessed(&p, (1.02, 2.01, 1.03), parallel, serialised, 5);
        assert_eq!(verdict(&p, &r).0, Verdict::Pass);
    }

    #[test]
    fn blocked_time_that_noise_could_explain_never_fails_a_row() {
        let p = witnessed_plan();
        // One thread idled after its reply while its partner waited 20 ms
        // for a core: plain parallelism reads low, but the other's run-queue
        // time explains the idle tail, so the witness says nothing...
        let tail = || pair_witness(&[(20, 0), (20, 20)]);
        let r = witnessed(&p, (2.0, 2.0, 2.0), tail, serialised, 15);
        let (v, reason) = verdict(&p, &r);
        assert_eq!(v, Verdict::CannotJudge, "{reason}");
        assert!(reason.starts_with("no free core"), "{reason}");
        // ...where the same reading with nobody waiting for a core fails.
        let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, serialised, 15);
        assert_eq!(verdict(&p, &r).0, Verdict::Fail);
    }

    #[test]
    fn without_a_witness_the_wall_rules_apply_and_say_why() {
        let p = witnessed_plan();
        let mut r = run(&p, 1.02, 2.01, 1.03, 5);
        r.witness_unavailable = Some("no per-thread scheduler accounting on this platform".into());
        let j = judge(&p, BUDGET, &r).concluded();
        assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
        assert!(
            j.confidence.contains("no per-thread scheduler accounting"),
            "{}",
            j.confidence
        );
        let f = j.figures.unwrap();
        assert_eq!(f.witness, WitnessRole::Unavailable);
    }

    #[test]
    fn an_unconfirmed_wall_fail_gives_way_to_a_witness_pass() {
        let p = witnessed_plan();
        // Five trials with a free core read a fail (noise on the releasing
        // pairs); a fail needs ten. The witness saw both threads runnable.
        let r = witnessed(&p, (1.98, 2.01, 1.03), parallel, serialised, 5);
        let j = judge(&p, BUDGET, &r).concluded();
        assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
        assert!(
            j.reason.contains("fewer than the 10 a fail needs"),
            "{}",
            j.reason
        );
        // Twin: the same wall fail confirmed over ten trials is a
        // disagreement, never a pass.
        let r = witnessed(&p, (1.98, 2.01, 1.03), parallel, serialised, 10);
        let (v, reason) = verdict(&p, &r);
        assert_eq!(v, Verdict::CannotJudge);
        assert!(reason.contains("disagree"), "{reason}");
    }
}
