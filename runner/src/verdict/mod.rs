//! Verdicts: the four outcomes of a gate, the warnings beside them, and a
//! judgement over one probe kind's figures. Each kind judges its own figures
//! (`probe/<kind>/judge.rs`); what they share lives here.
//!
//! Every row proves it can fail. Each probe has a control that must
//! separate from the mode under test; where it does not (or where the
//! machine had no free core, or the measurement broke), the verdict is
//! "cannot judge", never pass.

use schemars::JsonSchema;
use serde::Serialize;

use crate::spec::Bound;

/// The four outcomes of a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
    CannotJudge,
    NotApplicable,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::CannotJudge => "cannot judge",
            Verdict::NotApplicable => "not applicable",
        }
    }
}

/// Things worth knowing that do not change the verdict: the cause and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Warning {
    /// A mode's route has no digest, so nothing proves its work happened.
    UnverifiedWork { mode: String, path: String },
    /// The pair of the mode under test was only ever served by one thread.
    OneThread { mode: String },
    /// The server told the app its peer ports byte-swapped.
    SwappedPeerPort,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::UnverifiedWork { mode, path } => write!(
                f,
                "mode {mode} ({path}) has no digest to check, so nothing proves the work happened; \
                 use a /work route (fixed work) rather than a deadline or sleep route"
            ),
            Warning::SwappedPeerPort => write!(
                f,
                "the server reports each client port to the app with its two bytes swapped (uWSGI's HTTP router, \
                 unbit/uwsgi#1889); the runner matched connections on the swapped port"
            ),
            Warning::OneThread { mode } => write!(
                f,
                "every {mode} pair was served by a single server thread; check the row's `server.threads` \
                 and the profile's `knobs.threads`"
            ),
        }
    }
}

/// A verdict with its one-line reason and how sure it is, over one probe
/// kind's figures (`F`); `probe::Judgement` is the one over any kind's.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Judged<F> {
    pub verdict: Verdict,
    pub reason: String,
    /// In words: how many trials agree and by what margin.
    pub confidence: String,
    pub figures: Option<F>,
    pub warnings: Vec<Warning>,
    /// The key figure in a few characters, for summaries and matrix cells
    /// (`1.04x/2.01x`); empty when there is none.
    pub headline: String,
    /// Why more trials could still change this verdict (a named figure
    /// within its margin, too few trials with a free core); `None` once the
    /// figures decide it. The trial loop stops when it is `None`.
    #[serde(skip)]
    pub unsettled: Option<String>,
}

impl<F> Judged<F> {
    /// A verdict with no figures (a server that would not start, a row
    /// that does not apply, a broken measurement): final.
    pub fn bare(verdict: Verdict, reason: String) -> Self {
        Self {
            verdict,
            reason,
            confidence: "no verdict".into(),
            figures: None,
            warnings: Vec::new(),
            headline: String::new(),
            unsettled: None,
        }
    }

    /// Whether more trials could not change the verdict.
    pub fn settled(&self) -> bool {
        self.unsettled.is_none()
    }

    /// The same judgement over other figures (a kind's into the registry's).
    pub fn map<G>(self, f: impl FnOnce(F) -> G) -> Judged<G> {
        Judged {
            verdict: self.verdict,
            reason: self.reason,
            confidence: self.confidence,
            figures: self.figures.map(f),
            warnings: self.warnings,
            headline: self.headline,
            unsettled: self.unsettled,
        }
    }

    /// The judgement once the trial budget is spent: a pass or a fail that
    /// more trials could still have changed is "cannot judge", saying why
    /// and what it would have been. Never a pass from unsettled figures.
    pub fn concluded(mut self) -> Self {
        if let Some(why) = self.unsettled.take() {
            if matches!(self.verdict, Verdict::Pass | Verdict::Fail) {
                self.reason = format!(
                    "{why}; would have been {} ({})",
                    self.verdict.label(),
                    self.reason
                );
                self.verdict = Verdict::CannotJudge;
            }
        }
        self
    }
}

/// How far a value stands from a bound, on the side it is on (positive: the
/// bound holds; negative: it is violated).
pub fn margin(value: f64, bound: Bound) -> f64 {
    bound.margin(value)
}

/// A gate that ended before its probe had figures: the verdict (cannot
/// judge, or not applicable), why, and the server log tail worth showing.
#[derive(Debug, Clone)]
pub struct Stop {
    pub verdict: Verdict,
    pub reason: String,
    pub log_tail: Option<String>,
}

impl Stop {
    pub fn cannot_judge(reason: impl Into<String>) -> Self {
        Self {
            verdict: Verdict::CannotJudge,
            reason: reason.into(),
            log_tail: None,
        }
    }
}
