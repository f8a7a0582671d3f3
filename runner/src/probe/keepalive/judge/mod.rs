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

use schemars::JsonSchema;
use serde::Serialize;

use super::measure::{KeepaliveModeRun, KeepaliveRun, KeepaliveTrial};
use super::KeepalivePlan;
use crate::spec::Bound;
use crate::stats::Spread;
use crate::verdict::{margin, Judged, Verdict};

/// One named check of the mode under test.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Check {
    pub name: &'static str,
    /// The figure, over S.
    pub value: f64,
    pub bound: Bound,
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
    let mut push = |name, value: Option<f64>, bound: Bound| {
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
        Bound::AtMost(plan.warmup_at_most),
    );
    push(
        "third connection over S (worst trial)",
        worst(values(u, |t| t.c_over_s)),
        Bound::AtMost(plan.third_at_most),
    );
    push(
        "A's slow reply over S (shortest)",
        best(values(u, |t| t.a_over_s)),
        Bound::AtLeast(plan.slow_at_least),
    );
    push(
        "A's slow reply over S (longest)",
        worst(values(u, |t| t.a_over_s)),
        Bound::AtMost(plan.slow_at_most),
    );
    out
}

/// Why more trials could still change a provisional verdict, naming the
/// figure; None when the figures decide it.
fn unsettled(
    plan: &KeepalivePlan,
    run: &KeepaliveRun,
    j: &Judged<KeepaliveFigures>,
) -> Option<String> {
    let Some(f) = &j.figures else {
        return (run.broken.is_none()).then(|| "no trial completed".into());
    };
    let n = run.trials_done;
    let near = |name: &str, value: f64, bound: Bound| {
        (margin(value, bound).abs() < plan.margin).then(|| {
            format!(
                "ambiguous after {n} trials: {name} read {value:.3}, within {:.2} of its bound ({bound})",
                plan.margin
            )
        })
    };
    let control = || {
        (margin(f.control_ratio, plan.control.bound) < plan.margin).then(|| {
            format!(
                "ambiguous after {n} trials: the control's B over S read {:.3}, within {:.2} of its bound ({})",
                f.control_ratio, plan.margin, plan.control.bound
            )
        })
    };
    match j.verdict {
        Verdict::Pass => {
            control().or_else(|| f.checks.iter().find_map(|c| near(c.name, c.value, c.bound)))
        }
        Verdict::Fail => control().or_else(|| {
            let decided = f
                .checks
                .iter()
                .any(|c| !c.holds && margin(c.value, c.bound) <= -plan.margin)
                || !run.under_test.problems.is_empty();
            (!decided).then(|| {
                f.checks
                    .iter()
                    .filter(|c| !c.holds)
                    .find_map(|c| near(c.name, c.value, c.bound))
                    .unwrap_or_else(|| format!("ambiguous after {n} trials"))
            })
        }),
        _ => Some("no verdict yet".into()),
    }
}

/// Judges a keepalive-isolation run; provisional while `unsettled` is set.
pub fn judge(plan: &KeepalivePlan, run: &KeepaliveRun) -> Judged<KeepaliveFigures> {
    let mut j = assess(plan, run);
    j.unsettled = unsettled(plan, run, &j);
    j
}

fn assess(plan: &KeepalivePlan, run: &KeepaliveRun) -> Judged<KeepaliveFigures> {
    if let Some(b) = &run.broken {
        return Judged::bare(Verdict::CannotJudge, format!("broken measurement: {b}"));
    }
    let u = &run.under_test;
    let c = &run.control;
    let c_b = values(c, |t| t.b_over_s);
    let u_b = values(u, |t| t.b_over_s);
    let (Some(control_ratio), Some(under_test_ratio)) = (
        c_b.iter().copied().min_by(f64::total_cmp),
        u_b.iter().copied().max_by(f64::total_cmp),
    ) else {
        let problems: Vec<&String> = u.problems.iter().chain(&c.problems).take(3).collect();
        return Judged::bare(
            Verdict::CannotJudge,
            format!("no trial completed: {problems:?}"),
        );
    };
    let figures = KeepaliveFigures {
        slow_ms: plan.slow_ms,
        under_test_ratio,
        control_ratio,
        under_test_b: Spread::of(&u_b),
        control_b: Spread::of(&c_b),
        checks: checks(plan, u),
        trials: run.trials_done,
    };
    let headline = format!("{under_test_ratio:.2}/{control_ratio:.2}");
    let n = run.trials_done;
    let wrap = |verdict, reason: String, figures: KeepaliveFigures| Judged {
        verdict,
        reason,
        confidence: format!(
            "{n} trials; {}",
            figures
                .checks
                .iter()
                .map(|c| format!("{} {:.3} ({})", c.name, c.value, c.bound))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        figures: Some(figures),
        warnings: Vec::new(),
        headline: headline.clone(),
        unsettled: None,
    };
    // A check failing beyond the margin decides on its own.
    let decisive: Vec<&Check> = figures
        .checks
        .iter()
        .filter(|c| !c.holds && margin(c.value, c.bound).abs() >= plan.margin)
        .collect();
    if !c.problems.is_empty() {
        let reason = format!(
            "the control mode {} had failed requests, so it proves nothing: {}",
            c.name,
            c.problems.join("; ")
        );
        return wrap(Verdict::CannotJudge, reason, figures);
    }
    let closed: Vec<&String> = c.closed.iter().chain(&u.closed).collect();
    if !closed.is_empty() && decisive.is_empty() {
        let reason = format!(
            "the server closed a kept-alive connection mid-trial ({}), so those trials read nothing and no check failed beyond {:.2} of its bound",
            closed.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; "),
            plan.margin
        );
        return wrap(Verdict::CannotJudge, reason, figures);
    }
    if !plan.control.bound.holds(control_ratio) {
        let reason = format!(
            "the control did not separate: with {} ({}), B read {control_ratio:.2} of S at best (needs {}), so this probe could not fail here",
            c.name,
            plan.control.server.describe(),
            plan.control.bound
        );
        return wrap(Verdict::CannotJudge, reason, figures);
    }
    let failed: Vec<String> = figures
        .checks
        .iter()
        .filter(|c| !c.holds)
        .map(|c| format!("{} read {:.3} ({})", c.name, c.value, c.bound))
        .collect();
    let summary = format!(
        "{} B/S {under_test_ratio:.2} worst ({}), {} B/S {control_ratio:.2} best ({}), S = {} ms",
        u.name, plan.under_test.bound, c.name, plan.control.bound, plan.slow_ms
    );
    let summary = if closed.is_empty() {
        summary
    } else {
        format!(
            "{summary}; the server also closed {} kept-alive connection(s) mid-trial",
            closed.len()
        )
    };
    let (verdict, reason) = if !u.problems.is_empty() {
        (
            Verdict::Fail,
            format!("{}: {}; {summary}", u.name, u.problems.join("; ")),
        )
    } else if !failed.is_empty() {
        (
            Verdict::Fail,
            format!("{}: {}; {summary}", u.name, failed.join(", ")),
        )
    } else {
        (Verdict::Pass, summary)
    };
    wrap(verdict, reason, figures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::Plan;

    fn plan() -> KeepalivePlan {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/C5.yaml");
        match crate::spec::row::load_row(&file).unwrap().plan {
            Plan::KeepaliveIsolation(p) => p,
            other => panic!("C5 is not keepalive-isolation: {other:?}"),
        }
    }

    /// A mode whose every trial read (B, A, C) over S.
    fn mode(name: &str, trials: &[(f64, f64, f64)], closed: &[&str]) -> KeepaliveModeRun {
        KeepaliveModeRun {
            name: name.into(),
            b_warmup_over_s: Some(0.01),
            trials: trials
                .iter()
                .map(|&(b, a, c)| KeepaliveTrial {
                    b_over_s: Some(b),
                    a_over_s: Some(a),
                    c_over_s: Some(c),
                })
                .collect(),
            problems: Vec::new(),
            closed: closed.iter().map(|s| s.to_string()).collect(),
            reopened: 0,
        }
    }

    fn run(under_test: KeepaliveModeRun, control: KeepaliveModeRun) -> KeepaliveRun {
        KeepaliveRun {
            trials_done: under_test.trials.len() as u32,
            under_test,
            control,
            slow_ms: 600,
            broken: None,
        }
    }

    const ISOLATED: (f64, f64, f64) = (0.01, 1.0, 0.01);
    const PINNED: (f64, f64, f64) = (0.95, 1.0, 0.05);
    const CLOSED: &str = "A: the server closed the kept-alive connection";

    #[test]
    fn isolated_connections_pass() {
        let p = plan();
        let r = run(
            mode("isolated", &[ISOLATED; 3], &[]),
            mode("pinned", &[PINNED; 3], &[]),
        );
        let j = judge(&p, &r).concluded();
        assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    }

    #[test]
    fn a_third_connection_waiting_for_an_idle_timeout_fails_despite_closed_connections() {
        // Thread per connection: B is fast on its own thread, but the fresh
        // third connection waits S plus a 3 s idle timeout; the server
        // closes idle connections in both modes meanwhile.
        let p = plan();
        let stuck = (0.02, 1.0, 5.9);
        let r = run(
            mode("isolated", &[stuck; 3], &[CLOSED]),
            mode("pinned", &[(5.9, 1.0, 11.0); 3], &[CLOSED, CLOSED]),
        );
        let j = judge(&p, &r).concluded();
        assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
        assert!(
            j.reason
                .contains("third connection over S (worst trial) read 5.900"),
            "{}",
            j.reason
        );
        assert!(
            j.reason.contains("closed 3 kept-alive connection(s)"),
            "{}",
            j.reason
        );
        assert!(judge(&p, &r).settled());
    }

    #[test]
    fn a_closed_connection_without_a_decisive_check_cannot_judge() {
        let p = plan();
        for (u, c) in [(&[CLOSED][..], &[][..]), (&[][..], &[CLOSED][..])] {
            let r = run(
                mode("isolated", &[ISOLATED; 3], u),
                mode("pinned", &[PINNED; 3], c),
            );
            let j = judge(&p, &r).concluded();
            assert_eq!(j.verdict, Verdict::CannotJudge, "{}", j.reason);
            assert!(
                j.reason
                    .contains("closed a kept-alive connection mid-trial"),
                "{}",
                j.reason
            );
            assert!(!judge(&p, &r).settled());
        }
    }

    #[test]
    fn a_third_connection_within_the_margin_does_not_decide_over_a_closed_connection() {
        // 0.22 fails 0.20 but within the 0.05 margin: noise could do that.
        let p = plan();
        let r = run(
            mode("isolated", &[(0.01, 1.0, 0.22); 3], &[CLOSED]),
            mode("pinned", &[PINNED; 3], &[]),
        );
        let j = judge(&p, &r).concluded();
        assert_eq!(j.verdict, Verdict::CannotJudge, "{}", j.reason);
    }
}
