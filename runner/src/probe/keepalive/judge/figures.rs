//! A keepalive-isolation run reduced to figures: B over S in each mode, and
//! the checks of the mode under test against their bounds. No verdict here
//! (`rules.rs`), no words (`words.rs`).

use schemars::JsonSchema;
use serde::Serialize;

use crate::probe::keepalive::measure::{KeepaliveModeRun, KeepaliveRun, KeepaliveTrial};
use crate::probe::keepalive::KeepalivePlan;
use crate::spec::RatioBound;
use crate::stats::Spread;

/// One named check of the mode under test.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Check {
    pub name: &'static str,
    /// The figure, over S.
    pub value: f64,
    pub bound: RatioBound,
    pub holds: bool,
}

/// The judged figures of a keepalive-isolation run.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeepaliveFigures {
    pub slow_ms: u64,
    /// Under test: B's worst latency over S (every trial must be isolated).
    pub under_test_ratio: f64,
    /// Control: B's best latency over S (every trial must be pinned).
    pub control_ratio: f64,
    pub under_test_b: Option<Spread>,
    pub control_b: Option<Spread>,
    pub checks: Vec<Check>,
    pub trials: u32,
}

fn values(run: &KeepaliveModeRun, pick: fn(&KeepaliveTrial) -> Option<f64>) -> Vec<f64> {
    run.trials.iter().filter_map(pick).collect()
}

/// The under-test checks, in order of importance.
fn checks(plan: &KeepalivePlan, u: &KeepaliveModeRun) -> Vec<Check> {
    let mut out = Vec::new();
    let mut push = |name, value: Option<f64>, bound: RatioBound| {
        if let Some(value) = value {
            out.push(Check {
                name,
                value,
                bound,
                holds: bound.holds(value),
            });
        }
    };
    let worst = |v: Vec<f64>| v.into_iter().max_by(f64::total_cmp);
    let best = |v: Vec<f64>| v.into_iter().min_by(f64::total_cmp);
    push(
        "B over S (worst trial)",
        worst(values(u, |t| t.b_over_s)),
        plan.under_test.bound,
    );
    push(
        "B's warm-up over S",
        u.b_warmup_over_s,
        RatioBound::AtMost(plan.warmup_at_most),
    );
    push(
        "third connection over S (worst trial)",
        worst(values(u, |t| t.c_over_s)),
        RatioBound::AtMost(plan.third_at_most),
    );
    push(
        "A's slow reply over S (shortest)",
        best(values(u, |t| t.a_over_s)),
        RatioBound::AtLeast(plan.slow_at_least),
    );
    push(
        "A's slow reply over S (longest)",
        worst(values(u, |t| t.a_over_s)),
        RatioBound::AtMost(plan.slow_at_most),
    );
    out
}

/// The run's figures: the control's best B over S, the worst under test,
/// and the checks; None when no trial of either mode read B.
pub fn reduce(plan: &KeepalivePlan, run: &KeepaliveRun) -> Option<KeepaliveFigures> {
    let c_b = values(&run.control, |t| t.b_over_s);
    let u_b = values(&run.under_test, |t| t.b_over_s);
    Some(KeepaliveFigures {
        slow_ms: plan.slow_ms,
        under_test_ratio: u_b.iter().copied().max_by(f64::total_cmp)?,
        control_ratio: c_b.iter().copied().min_by(f64::total_cmp)?,
        under_test_b: Spread::of(&u_b),
        control_b: Spread::of(&c_b),
        checks: checks(plan, &run.under_test),
        trials: run.trials_done,
    })
}
