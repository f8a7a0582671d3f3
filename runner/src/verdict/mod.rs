//! Verdicts: what a probe's figures mean for its row, one module per probe
//! kind.
//!
//! Every row proves it can fail. Each probe has a control that must
//! separate from the mode under test; where it does not (or where the
//! machine had no free core, or the measurement broke), the verdict is
//! "cannot judge", never pass.

pub mod census;
pub mod keepalive;
pub mod pair_ratio;

use serde::Serialize;

use crate::spec::row::Bound;

pub use census::{judge_census, CensusFigures};
pub use keepalive::{judge_keepalive, KeepaliveFigures};
pub use pair_ratio::{judge_pair_ratio, settled, ModeFigures, PairRatioFigures};

/// The four outcomes of a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// A verdict with its one-line reason and how sure it is.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub verdict: Verdict,
    pub reason: String,
    /// In words: how many trials agree and by what margin.
    pub confidence: String,
    pub figures: Option<Figures>,
    pub warnings: Vec<Warning>,
    /// The key figure in a few characters, for summaries and matrix cells
    /// (`1.04x/2.01x`); empty when there is none.
    pub headline: String,
}

impl Judgement {
    /// A verdict with no figures (a server that would not start, a row
    /// that does not apply).
    pub fn bare(verdict: Verdict, reason: String) -> Self {
        Self {
            verdict,
            reason,
            confidence: "no verdict".into(),
            figures: None,
            warnings: Vec::new(),
            headline: String::new(),
        }
    }
}

/// The judged figures, by probe kind.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Figures {
    PairRatio(Box<PairRatioFigures>),
    Keepalive(Box<KeepaliveFigures>),
    Census(Box<CensusFigures>),
}

/// How far a value stands from a bound, on the side it is on (positive: the
/// bound holds; negative: it is violated).
pub fn margin(value: f64, bound: Bound) -> f64 {
    match bound {
        Bound::AtMost(limit) => limit - value,
        Bound::AtLeast(limit) => value - limit,
    }
}
