//! The words of a pair-ratio verdict: the reason and confidence for each
//! decision of `rules.rs`, why it is still open, and the headline. Text
//! only.

use super::super::rulebook::{
    Ruling, NEVER_TURNS_AT, TOGETHER_AT_ONCE_AT_LEAST, TOGETHER_GAP_AT_LEAST,
    TOGETHER_P_GAP_AT_LEAST,
};
use super::super::PairRatioPlan;
use super::figures::{CapacitySource, ModeFigures, PairRatioFigures};
use super::rules::{wall_passes_clearly, Decision, Near, Open, Wall};
use crate::spec::{RatioBound, Trials};

/// A parallelism bound as the reports show it (`P >= 1.60`).
pub fn p_bound(b: RatioBound) -> String {
    match b {
        RatioBound::AtMost(v) => format!("P <= {v:.2}"),
        RatioBound::AtLeast(v) => format!("P >= {v:.2}"),
    }
}

/// The witness's figures, both modes.
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
    let both = format!("{}, {}", one(&f.under_test), one(&f.control));
    match (f.ruling, f.together()) {
        (Some(Ruling::AtOnceTogether), Some([t, c])) => format!(
            "{both}; at once by the samples' order: both serving threads runnable in {:.0}% of the samples \
             against the control's {:.0}% (>= {:.0}% and {:.0} points over), P past {NEVER_TURNS_AT:.2} \
             and {TOGETHER_P_GAP_AT_LEAST:.2} over the control's",
            t * 100.0,
            c * 100.0,
            TOGETHER_AT_ONCE_AT_LEAST * 100.0,
            TOGETHER_GAP_AT_LEAST * 100.0
        ),
        _ => both,
    }
}

/// One line: the wall ratios, then the witness's P where there is one.
pub fn headline(f: &PairRatioFigures) -> String {
    let wall = format!("{:.2}x/{:.2}x", f.under_test.ratio, f.control.ratio);
    match (&f.under_test.witness, &f.control.witness) {
        (Some(u), Some(c)) => format!(
            "{wall} P {:.2}/{:.2}",
            u.reading.parallelism.median, c.reading.parallelism.median
        ),
        _ => wall,
    }
}

/// The reason and the confidence of decision `d` on `f`.
pub fn reason(
    plan: &PairRatioPlan,
    trials: Trials,
    d: Decision,
    f: &PairRatioFigures,
) -> (String, String) {
    let witness_said = describe_witness(f);
    let (n, k) = (f.trials, f.valid_trials);
    let (u, c) = (&f.under_test, &f.control);
    let gap = f.gap;
    let summary = format!(
        "{} {:.2}x ({}), {} {:.2}x ({}), gap {gap:.2} (needs >= {:.2})",
        u.name, u.ratio, u.bound, c.name, c.ratio, c.bound, plan.gap_at_least
    );
    let bare = |reason: String| (reason, "no verdict".to_string());
    let no_core = || {
        match f.capacity_source {
        CapacitySource::Control => format!(
            "no free core: in only {k} of {n} trials did the same releasing work twice at once with no server in \
             the path read <= {:.2}x (best {:.2}x; needs {} such trials)",
            plan.capacity_at_most,
            f.capacity,
            plan.free_core_trials_needed(trials)
        ),
        CapacitySource::Kernel => format!(
            "no free core: in only {k} of {n} trials did the serving threads wait for a core at most {:.0}% of \
             the pair's wall (1 + run-queue / wall <= {:.2}x; best {:.2}x; needs {} such trials)",
            (plan.capacity_at_most - 1.0) * 100.0,
            plan.capacity_at_most,
            f.capacity,
            plan.free_core_trials_needed(trials)
        ),
    }
    };
    let wall_reason = |wall: Wall| match wall {
        Wall::Pass => summary.clone(),
        Wall::Outside => format!(
            "{} read {:.2}x, outside {}: {summary}",
            u.name, u.ratio, u.bound
        ),
        Wall::GapShort => format!(
            "the gap to the control is {gap:.2}, under {:.2}: {summary}",
            plan.gap_at_least
        ),
    };
    let wall_confidence = || {
        let m = f.margins;
        format!(
            "{n} trials ({k} with a free core); {} of {k} alone agree for {}, {} of {k} for {}; margins {:+.2}x, \
             {:+.2}x, gap {:+.2} (ambiguous under {:.2}); capacity {:.2}x; witness: {}",
            u.agreeing_trials,
            u.name,
            c.agreeing_trials,
            c.name,
            m.under_test,
            m.control,
            m.gap,
            plan.margin,
            f.capacity,
            f.witness_note.as_deref().unwrap_or(&witness_said)
        )
    };
    match d {
        Decision::Unverified { control } => {
            let m = if control { c } else { u };
            bare(format!(
                "mode {} ({}) does work the runner cannot verify, so no verdict rests on it; \
                 {} read {:.2}x and {} {:.2}x. Use a /work route",
                m.name, m.path, u.name, u.ratio, c.name, c.ratio
            ))
        }
        Decision::NoFreeCore { witness: None } => {
            let witness = match &f.witness_note {
                Some(note) => format!("; {note}"),
                None => format!(
                    "; the scheduler witness could not decide either ({witness_said}; a pass needs the mode under \
                     test on its bound by both figures and the control on its own, a fail an unconvoyed figure at \
                     most {})",
                    plan.serialised_at_most
                        .map_or("(unset)".to_string(), |v| format!("{v:.2}"))
                ),
            };
            bare(format!(
                "{}{witness}. Something else is using the machine, so a serialised pair would look the same \
                 as a parallel one. Run on a quieter machine or one with more cores",
                no_core()
            ))
        }
        Decision::NoFreeCore { witness: Some(claim) } => (
            format!(
                "{} by the scheduler witness ({witness_said}); wall ratio not usable: {}",
                d.verdict().label(),
                no_core()
            ),
            format!(
                "{n} trials, {} witnessed pairs of {} and {} of {}; the witness counts waiting for a core as \
                 runnable, so it needs no free core; wall figures {}: {summary}",
                u.witness.as_ref().map_or(0, |w| w.reading.pairs),
                u.name,
                c.witness.as_ref().map_or(0, |w| w.reading.pairs),
                c.name,
                if claim && wall_passes_clearly(plan, f) {
                    "over every trial (they pass too, past their margins, which noise cannot fake: it settles a \
                     witness pass near its bound)"
                } else {
                    "(not used)"
                },
            ),
        ),
        Decision::ControlShortWitnessDecides { .. } => (
            format!(
                "{} by the scheduler witness ({witness_said}); wall ratio not usable: the control did not \
                 separate ({} read {:.2}x, needs {})",
                d.verdict().label(),
                c.name,
                c.ratio,
                c.bound
            ),
            format!(
                "{n} trials ({k} with a free core), {} witnessed pairs of {} and {} of {}; the witness's own \
                 control separated, so its call can fail; wall figures (not used): {summary}",
                u.witness.as_ref().map_or(0, |w| w.reading.pairs),
                u.name,
                c.witness.as_ref().map_or(0, |w| w.reading.pairs),
                c.name,
            ),
        ),
        Decision::WallPassWithoutFreeCore { .. } => (
            format!(
                "{summary}, over every trial: only {k} of {n} had a free core, but noise only adds time, and more \
                 to a pair that needs two cores than to one request, so it cannot make a serialised pair pass; \
                 the scheduler witness {}",
                match &f.witness_note {
                    Some(note) => format!("is not here ({note})"),
                    None => format!("could not decide ({witness_said})"),
                }
            ),
            wall_confidence(),
        ),
        Decision::WallPassAgainstWitness => bare(format!(
            "the wall clock and the scheduler witness disagree: the wall ratios over every trial pass ({summary}; \
             only {k} of {n} trials had a free core), the witness says the pair took turns ({witness_said}). \
             Run on a quieter machine"
        )),
        Decision::ControlDidNotSeparate => {
            // Only the trials with a free core count, and on a busy machine
            // even those are noisy: the remedy is then a quieter machine,
            // not the control route.
            let remedy = if k < n {
                format!(
                    "only {k} of {n} trials had a free core, so something else using the machine may have blurred \
                     it: run on a quieter machine, or with the scheduler witness, which needs no free core"
                )
            } else {
                "check that the control route does fixed work that holds the GIL".to_string()
            };
            bare(format!(
                "the control did not separate: {} read {:.2}x (needs {}) after {n} trials, so this probe could not \
                 fail here and a pass would mean nothing; {remedy}",
                c.name, c.ratio, c.bound
            ))
        }
        Decision::UnconfirmedFailGivesWay { wall } => (
            format!(
                "pass by the scheduler witness ({witness_said}); the wall gap's fail ({}) rests on {k} \
                 trials with a free core, fewer than the {} a fail needs",
                wall_reason(wall),
                plan.fail_needs(trials)
            ),
            wall_confidence(),
        ),
        Decision::WallFailWithoutWitness { wall } => bare(format!(
            "the wall gap reads {} ({}), but with no scheduler witness nothing shows the pairs had a core each: \
             the capacity control ran in another process at another moment ({k} of {n} trials found a free core \
             there), and a busy machine serialises a parallel pair just as a lock would. Run with the witness \
             (`--witness on` or `portable`), which reads each pair itself",
            wall.verdict().label(),
            wall_reason(wall)
        )),
        Decision::Wall { wall, witness } => {
            use super::figures::WitnessRole;
            let reason = wall_reason(wall);
            let reason = match witness {
                WitnessRole::Agrees => {
                    format!("{reason}; the scheduler witness agrees ({witness_said})")
                }
                WitnessRole::Disagrees => format!(
                    "the wall clock and the scheduler witness disagree: the wall gap says {} ({reason}), the witness \
                     says {} ({witness_said})",
                    wall.verdict().label(),
                    if wall == Wall::Pass { "FAIL" } else { "pass" }
                ),
                WitnessRole::Silent => format!(
                    "{reason}; the scheduler witness could not decide ({witness_said})"
                ),
                WitnessRole::Decides | WitnessRole::Unavailable => reason,
            };
            (reason, wall_confidence())
        }
    }
}

/// Why the verdict is still open, in words.
pub fn open(plan: &PairRatioPlan, f: &PairRatioFigures, o: Open) -> String {
    let n = f.trials;
    let (u, c) = (&f.under_test, &f.control);
    let near = |name: &str, value: f64, bound: String| {
        format!(
            "ambiguous after {n} trials: {name} read {value:.2}, within {:.2} of its bound ({bound})",
            plan.margin
        )
    };
    let witness = |mf: &ModeFigures| match &mf.witness {
        Some(w) => near(
            &format!("{}'s witness P", mf.name),
            w.reading.parallelism.median,
            w.bound.map_or("-".to_string(), p_bound),
        ),
        None => format!("ambiguous after {n} trials"),
    };
    match o {
        Open::Near(Near::UnderTest) => near(&u.name, u.ratio, u.bound.to_string()),
        Open::Near(Near::Control) => near(&c.name, c.ratio, c.bound.to_string()),
        Open::Near(Near::Gap) => near("the gap", f.gap, format!(">= {:.2}", f.gap_at_least)),
        Open::Near(Near::WitnessUnderTest) => witness(u),
        Open::Near(Near::WitnessControl) => witness(c),
        Open::WitnessFailNeeds(needs) => {
            format!("a fail by the scheduler witness alone needs {needs} trials; {n} so far")
        }
        Open::FreeCoreFailNeeds(needs) => format!(
            "not enough trials with a free core to confirm a fail: {} of {n} (a fail needs {needs}; \
             no scheduler witness to confirm it sooner)",
            f.valid_trials
        ),
        Open::TogetherShort(needs) => match f.together() {
            Some([t, ct]) => format!(
                "ambiguous after {n} trials: {}'s serving threads were runnable together in {:.0}% of the \
                 samples against {}'s {:.0}%, under the {:.0} points over it that settle a pass",
                u.name,
                t * 100.0,
                c.name,
                ct * 100.0,
                needs * 100.0
            ),
            None => format!("ambiguous after {n} trials"),
        },
        Open::Ambiguous => format!("ambiguous after {n} trials"),
        Open::NoVerdictYet => "no verdict yet".into(),
    }
}
