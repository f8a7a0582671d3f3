//! Judging a worker census (E15). The fork control must show the detector can
//! read "dead", or the census proves nothing: cannot judge. Then every
//! request must succeed, the runtime must run in every worker, the census
//! must see enough distinct workers, the same ones at the end as at the
//! start, and (where the row asks) the cross-process pair ratio must pass.
//!
//! - `figures.rs`: the census reduced to figures;
//! - `rules.rs`: which rule decides (no words);
//! - `words.rs`: the reason, the confidence, the headline.

mod figures;
mod rules;
mod words;

pub use figures::{census_pss, CensusFigures, CensusPss, ProcessPss};

use super::measure::CensusRun;
use super::CensusPlan;
use crate::probe::pair_ratio;
use crate::spec::Trials;
use crate::verdict::{Judged, Verdict};

/// Judges a census; its pair-ratio half (where the row has one) is judged
/// by that kind and decides whether more trials are wanted.
pub fn judge(plan: &CensusPlan, trials: Trials, run: &CensusRun) -> Judged<CensusFigures> {
    let fork = match rules::fork_control(run) {
        Ok(fork) => fork,
        Err(problem) => {
            return Judged::bare(Verdict::CannotJudge, words::fork_problem(run, problem))
        }
    };
    let pair = run
        .pair_ratio
        .as_ref()
        .zip(plan.pair_ratio.as_ref())
        .map(|(r, p)| pair_ratio::judge::judge(p, trials, r).concluded());
    let f = figures::reduce(plan, run, fork, pair.as_ref());
    let failures = rules::failures(plan, run, &f);
    let (reason, confidence) = words::reason(plan, run, &f, &failures, pair.as_ref());
    Judged {
        verdict: rules::verdict(&failures, pair.as_ref()),
        reason,
        confidence,
        headline: words::headline(&f, pair.as_ref()),
        warnings: pair.map_or(Vec::new(), |j| j.warnings),
        figures: Some(f),
        unsettled: None,
    }
}
