//! Judging a pair-ratio run (E19). The headline is the gap in wall time
//! between the modes (docs/gap-not-threshold.md). Beside it stands the scheduler witness (Linux): the
//! serving threads' runnable parallelism over each pair, which noise cannot
//! move the way it moves wall time (waiting for a core is run-queue time
//! and counts as runnable; waiting for the GIL or a lock is sleep and does
//! not).
//!
//! - `figures.rs`: the run reduced to figures (the witness by
//!   `kernel/pairs.rs`, and the ruling of `../rulebook.rs`, which advise
//!   shares).
//! - `rules.rs`: which rule decides, and what could still change it.
//! - `words.rs`: the reason, the confidence, the headline.
//!
//! The rules in brief:
//!
//! - A trial's capacity reading says whether a core was free for its pairs:
//!   with the witness, the serving threads' run-queue time over each pair
//!   (1 + run-queue / wall, the larger of the trial's two pairs); without it,
//!   the capacity control's sample (`kernel/control.rs`).
//! - With a free core (at least `free_core_trials` trials whose capacity reading
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

mod figures;
mod rules;
mod words;

pub use figures::{CapacitySource, ModeFigures, ModeWitness, PairRatioFigures, WitnessRole};
pub use words::p_bound;

use super::measure::PairRatioRun;
use super::PairRatioPlan;
use crate::spec::Trials;
use crate::verdict::{Judged, Verdict};

/// Judges a pair-ratio run against its plan. The verdict is provisional
/// while `unsettled` is set; [`Judged::concluded`] makes it final.
pub fn judge(plan: &PairRatioPlan, trials: Trials, run: &PairRatioRun) -> Judged<PairRatioFigures> {
    let warnings = figures::warnings(run);
    if let Some(broken) = &run.broken {
        let mut j = Judged::bare(
            Verdict::CannotJudge,
            format!(
                "broken measurement after {} trial(s): {broken}",
                run.trials_done
            ),
        );
        j.warnings = warnings;
        return j;
    }
    let Some(mut f) = figures::reduce(plan, run) else {
        let why = if run.trials_done == 0 {
            "no trial completed".to_string()
        } else {
            format!(
                "no trial of {} has a capacity reading (the scheduler's snapshots of the server could not be read)",
                run.trials_done
            )
        };
        let mut j = Judged::bare(Verdict::CannotJudge, why.clone());
        j.warnings = warnings;
        j.unsettled = Some(why);
        return j;
    };
    let unverified = [!run.under_test.digest_checked, !run.control.digest_checked];
    let decision = rules::decide(plan, trials, &f, unverified);
    f.witness = decision.role();
    let verdict = decision.verdict();
    let (reason, confidence) = words::reason(plan, trials, decision, &f);
    let unsettled = rules::open(plan, trials, verdict, &f).map(|o| words::open(plan, &f, o));
    Judged {
        verdict,
        reason,
        confidence,
        headline: words::headline(&f),
        figures: Some(f),
        warnings,
        unsettled,
    }
}

#[cfg(test)]
mod tests;
