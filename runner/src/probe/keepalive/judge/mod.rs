//! Judging a keepalive-isolation run (C5). The control (one thread) must show B
//! pinned behind A, or the probe could not fail here: cannot judge. The mode
//! under test must keep B, B's warm-up and a fresh third connection fast in
//! every trial, and deliver A's slow reply whole in about S.
//!
//! A server closing a kept-alive connection mid-trial (a keep-alive timeout
//! racing the probe) spoils that trial's figure but is no wrong answer: it
//! makes the verdict cannot judge, unless a check of the mode under test
//! already fails beyond the margin. That is the thread-per-connection class:
//! the fresh third connection waits for an idle connection to time out,
//! many times S, and the server closes idle connections meanwhile.
//!
//! - `figures.rs`: the run reduced to figures and checks;
//! - `rules.rs`: which rule decides, and what could still change it (no words);
//! - `words.rs`: the reason, the confidence, the headline.

mod figures;
mod rules;
mod words;

pub use figures::{Check, KeepaliveFigures};

use super::measure::KeepaliveRun;
use super::KeepalivePlan;
use crate::verdict::{Judged, Verdict};

/// Judges a keepalive-isolation run; provisional while `unsettled` is set.
pub fn judge(plan: &KeepalivePlan, run: &KeepaliveRun) -> Judged<KeepaliveFigures> {
    if let Some(b) = &run.broken {
        return Judged::bare(Verdict::CannotJudge, words::broken(b));
    }
    let Some(f) = figures::reduce(plan, run) else {
        let mut j = Judged::bare(Verdict::CannotJudge, words::no_trial(run));
        j.unsettled = Some("no trial completed".into());
        return j;
    };
    let decision = rules::decide(plan, run, &f);
    let verdict = decision.verdict();
    let unsettled = rules::open(plan, run, verdict, &f).map(|o| words::open(plan, run, &f, o));
    Judged {
        verdict,
        reason: words::reason(plan, run, &f, decision),
        confidence: words::confidence(run, &f),
        headline: words::headline(&f),
        figures: Some(f),
        warnings: Vec::new(),
        unsettled,
    }
}

#[cfg(test)]
mod tests;
