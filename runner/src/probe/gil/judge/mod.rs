//! What a GIL probe's figures mean: releases, holds, or cannot judge, as a
//! pure function of the plan and the run.
//!
//! In order, each a reason to stop short of an answer (cannot judge):
//! 1. the instrument did not run, or reported an error (the call raised, its
//!    module did not import, setup failed): the message says which;
//! 2. rounds missing from the document (a broken instrument);
//! 3. the call is too fast for the instrument: the worker spent less than
//!    `busy_at_least` of each round inside it, so the reading is about the
//!    Python loop around the call, not the call;
//! 4. the interpreter has no GIL (a free-threaded build);
//! 5. the spinner waited for a core most of the time (no time left to read);
//! 6. a control did not read as designed: the instrument could not have
//!    told a release from a hold here, so no answer counts;
//! 7. the call's reading lies between the two bounds.
//!
//! Otherwise the answer is `releases` or `holds`; with `expect`, the other
//! answer fails. Every reading is a median over interleaved rounds.
//!
//! - `figures.rs`: the instrument's report reduced to figures;
//! - `rules.rs`: which rule decides (no words);
//! - `words.rs`: the reason, the confidence, the headline.

use serde::Serialize;

pub mod figures;
mod rules;
mod words;

pub use rules::{control_checks, readable_needed};

use crate::probe::gil::instrument::{GilRun, RunOutcome};
use crate::probe::gil::plan::GilPlan;
use crate::verdict::Verdict;
pub use figures::{
    figures, scale_figures, ArmFigures, ControlCheck, ControlFigures, Designed, GilFigures,
    MedianRange, ScaleFigures, ScaleLine, CALL, HOLDS_ALL, HOLDS_HALF, RELEASES,
};
use rules::Decision;
use words::{error_reason, headline, outcome_reason};

/// The verdict with its one-line reason, how sure it is, the figures and a
/// short headline (`blocked 0.49 vs controls 0.00/0.47/0.83`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GilJudgement {
    pub verdict: Verdict,
    pub reason: String,
    pub confidence: String,
    pub figures: Option<GilFigures>,
    pub headline: String,
}

impl GilJudgement {
    fn bare(reason: String) -> Self {
        Self {
            verdict: Verdict::CannotJudge,
            reason,
            confidence: "no verdict".into(),
            figures: None,
            headline: String::new(),
        }
    }

    /// `(verdict, reason, confidence, figures, headline)`.
    pub fn into_parts(self) -> (Verdict, String, String, Option<GilFigures>, String) {
        (
            self.verdict,
            self.reason,
            self.confidence,
            self.figures,
            self.headline,
        )
    }
}

/// Judges `run` against `plan`.
pub fn judge(plan: &GilPlan, run: &GilRun) -> GilJudgement {
    let report = match &run.outcome {
        RunOutcome::Report { report } => report,
        other => return GilJudgement::bare(outcome_reason(other, run)),
    };
    if let Some(e) = &report.error {
        let mut j = GilJudgement::bare(error_reason(plan, report, e));
        // Figures measured before a scale error still say something.
        j.figures = judged_figures(plan, report).ok();
        j.headline = j.figures.as_ref().map(headline).unwrap_or_default();
        return j;
    }
    let mut figures = match judged_figures(plan, report) {
        Ok(f) => f,
        Err(reason) => return GilJudgement::bare(reason),
    };
    let decision = rules::decide(plan, &figures);
    if let Decision::Answer { answer, .. } = decision {
        figures.answer = Some(answer);
    }
    let (reason, confidence) = words::reason(plan, &figures, &decision);
    GilJudgement {
        verdict: decision.verdict(),
        reason,
        confidence,
        headline: headline(&figures),
        figures: Some(figures),
    }
}

/// The figures of `report` with the controls judged.
fn judged_figures(
    plan: &GilPlan,
    report: &crate::probe::gil::instrument::InstrumentReport,
) -> Result<GilFigures, String> {
    let mut f = figures(plan, report)?;
    f.control_checks = control_checks(&f.controls, plan.bounds);
    Ok(f)
}

#[cfg(test)]
mod tests;
