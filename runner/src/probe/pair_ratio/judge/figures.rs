//! A pair-ratio run reduced to figures: each mode's wall ratio over the
//! trials that found a free core, its witness (reduced once by
//! `kernel/pairs.rs`), the gap, the capacity control, the margins, and the
//! rulebook's ruling on the witness. No verdict here (`rules.rs`).

use schemars::JsonSchema;
use serde::Serialize;

use super::super::measure::{ModeRun, PairRatioRun};
use super::super::rulebook::{self, Medians, Rules, Ruling};
use super::super::PairRatioPlan;
use crate::kernel::pairs::{self, Counted, PairsReading};
use crate::spec::RatioBound;
use crate::stats::{ratio_of_minima, Spread};
use crate::verdict::{margin, Warning};

/// Figures of one mode.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ModeFigures {
    pub name: String,
    pub path: String,
    /// min(pair) / min(single): the figure the verdict uses.
    pub ratio: f64,
    pub bound: RatioBound,
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
    pub bound: Option<RatioBound>,
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

/// The judged figures of a pair-ratio run.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PairRatioFigures {
    pub under_test: ModeFigures,
    pub control: ModeFigures,
    /// How far the control stands from the mode under test, in the
    /// direction the row expects them to separate.
    pub gap: f64,
    pub gap_at_least: f64,
    /// The best trial's capacity figure: the no-server control's pair /
    /// single, or the kernel's core-wait ratio (`capacity_source`).
    pub capacity: f64,
    pub capacity_at_most: f64,
    pub capacity_trials: Spread,
    pub capacity_source: CapacitySource,
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

impl PairRatioFigures {
    /// What the witness alone says: the pair ran at once (Some(true)) or
    /// not (Some(false)); None when it cannot say.
    pub fn witness_call(&self) -> Option<bool> {
        self.ruling?.at_once()
    }

    /// The share of samples with both serving threads runnable at once,
    /// [under test, control], where both modes have one.
    pub fn together(&self) -> Option<[f64; 2]> {
        let of = |m: &ModeFigures| Some(m.witness.as_ref()?.reading.together?.median);
        Some([of(&self.under_test)?, of(&self.control)?])
    }
}

fn mode_figures(run: &ModeRun, bound: RatioBound) -> Option<ModeFigures> {
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
/// None with no such pair. `holds` is the rulebook's, set by [`reduce`].
fn mode_witness(run: &ModeRun, bound: Option<RatioBound>) -> Option<ModeWitness> {
    Some(ModeWitness {
        reading: pairs::reduce(&run.witness, Counted::EveryServed)?,
        bound,
        holds: None,
    })
}

/// What the run shows beside its figures.
pub fn warnings(run: &PairRatioRun) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for m in [&run.under_test, &run.control] {
        if !m.digest_checked {
            warnings.push(Warning::UnverifiedWork {
                mode: m.name.clone(),
                path: m.path.clone(),
            });
        }
    }
    if run.peer_port_byte_swapped {
        warnings.push(Warning::SwappedPeerPort);
    }
    if run.under_test.pair_threads == 1 && run.control.pair_threads == 1 {
        warnings.push(Warning::OneThread {
            mode: run.under_test.name.clone(),
        });
    }
    warnings
}

/// Where each trial's capacity reading came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CapacitySource {
    /// The capacity control: the releasing work twice at once in a plain
    /// Python process, pair / single (where there is no witness).
    Control,
    /// The scheduler witness: 1 + the serving threads' run-queue time over
    /// the pair's wall, the larger of the trial's two pairs.
    Kernel,
}

/// Each trial's capacity figure (pair / single of the control, or the
/// kernel's core-wait ratio; None for a trial with no reading), and the
/// source. A run with control samples reads them; one without reads the
/// witness of its pairs.
fn capacity_per_trial(run: &PairRatioRun) -> (Vec<Option<f64>>, CapacitySource) {
    if !run.capacity.is_empty() {
        let per_trial = run
            .capacity
            .iter()
            .map(|c| Some(c.pair_ms / c.single_ms))
            .collect();
        return (per_trial, CapacitySource::Control);
    }
    let of = |m: &ModeRun, t: usize| {
        m.witness
            .get(t)
            .and_then(Option::as_ref)
            .and_then(|w| w.core_wait_ratio())
    };
    let per_trial = (0..run.trials_done as usize)
        .map(|t| match (of(&run.under_test, t), of(&run.control, t)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        })
        .collect();
    (per_trial, CapacitySource::Kernel)
}

/// The run's capacity figure: the control's min(pair) / min(single), or
/// the kernel's best trial.
fn best_capacity(run: &PairRatioRun, per_trial: &[f64]) -> Option<f64> {
    if run.capacity.is_empty() {
        return per_trial.iter().copied().reduce(f64::min);
    }
    let singles: Vec<f64> = run.capacity.iter().map(|c| c.single_ms).collect();
    let pairs: Vec<f64> = run.capacity.iter().map(|c| c.pair_ms).collect();
    ratio_of_minima(&pairs, &singles)
}

/// The figures of `run`; None when no trial completed with a capacity
/// reading.
pub fn reduce(plan: &PairRatioPlan, run: &PairRatioRun) -> Option<PairRatioFigures> {
    let (readings, capacity_source) = capacity_per_trial(run);
    let per_trial: Vec<f64> = readings.iter().flatten().copied().collect();
    // Only trials whose own capacity sample found a free core are evidence
    // for the wall figures. Measured under intermittent load (other
    // processes compiling), a run's best capacity sample alone was too
    // optimistic: one lucky sample let trials whose pairs never had two
    // cores read as a failed claim.
    let valid: Vec<usize> = (0..readings.len())
        .filter(|&t| readings[t].is_some_and(|c| c <= plan.capacity_at_most))
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
        best_capacity(run, &per_trial),
        Spread::of(&per_trial),
    ) else {
        return None;
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
    let gap = match plan.under_test.bound {
        RatioBound::AtMost(_) => c.ratio - u.ratio,
        RatioBound::AtLeast(_) => u.ratio - c.ratio,
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
    Some(PairRatioFigures {
        gap,
        gap_at_least: plan.gap_at_least,
        capacity,
        capacity_at_most: plan.capacity_at_most,
        capacity_trials,
        capacity_source,
        trials: run.trials_done,
        valid_trials: valid.len() as u32,
        margins,
        under_test: u,
        control: c,
        witness: WitnessRole::Unavailable,
        witness_note,
        ruling: ruled.map(|(r, _)| r),
    })
}
