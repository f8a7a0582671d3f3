//! The words of a keepalive-isolation judgement: the reason for each rule's
//! decision (`rules.rs`), the confidence, the headline, and what could still
//! change a provisional verdict.

use super::figures::KeepaliveFigures;
use super::rules::{Decision, Open};
use crate::probe::keepalive::measure::KeepaliveRun;
use crate::probe::keepalive::KeepalivePlan;

pub fn broken(why: &str) -> String {
    format!("broken measurement: {why}")
}

/// No trial of either mode read B: the first few failed requests.
pub fn no_trial(run: &KeepaliveRun) -> String {
    let (u, c) = (&run.under_test, &run.control);
    let problems: Vec<&String> = u.problems.iter().chain(&c.problems).take(3).collect();
    format!("no trial completed: {problems:?}")
}

/// `0.01/0.95`: B over S under test (worst) and in the control (best).
pub fn headline(f: &KeepaliveFigures) -> String {
    format!("{:.2}/{:.2}", f.under_test_ratio, f.control_ratio)
}

/// The trials and every check against its bound.
pub fn confidence(run: &KeepaliveRun, f: &KeepaliveFigures) -> String {
    format!(
        "{} trials; {}",
        run.trials_done,
        f.checks
            .iter()
            .map(|c| format!("{} {:.3} ({})", c.name, c.value, c.bound))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub fn reason(
    plan: &KeepalivePlan,
    run: &KeepaliveRun,
    f: &KeepaliveFigures,
    decision: Decision,
) -> String {
    let (u, c) = (&run.under_test, &run.control);
    let closed: Vec<&str> = c
        .closed
        .iter()
        .chain(&u.closed)
        .map(String::as_str)
        .collect();
    let summary = || {
        let summary = format!(
            "{} B/S {:.2} worst ({}), {} B/S {:.2} best ({}), S = {} ms",
            u.name,
            f.under_test_ratio,
            plan.under_test.bound,
            c.name,
            f.control_ratio,
            plan.control.bound,
            plan.slow_ms
        );
        if closed.is_empty() {
            summary
        } else {
            format!(
                "{summary}; the server also closed {} kept-alive connection(s) mid-trial",
                closed.len()
            )
        }
    };
    match decision {
        Decision::ControlFailedRequests => format!(
            "the control mode {} had failed requests, so it proves nothing: {}",
            c.name,
            c.problems.join("; ")
        ),
        Decision::ClosedMidTrial => format!(
            "the server closed a kept-alive connection mid-trial ({}), so those trials read nothing and no check failed beyond {:.2} of its bound",
            closed.join("; "),
            plan.margin
        ),
        Decision::ControlDidNotSeparate => format!(
            "the control did not separate: with {} ({}), B read {:.2} of S at best (needs {}), so this probe could not fail here",
            c.name,
            plan.control.server.describe(),
            f.control_ratio,
            plan.control.bound
        ),
        Decision::UnderTestFailedRequests => {
            format!("{}: {}; {}", u.name, u.problems.join("; "), summary())
        }
        Decision::ChecksFailed => {
            let failed: Vec<String> = f
                .checks
                .iter()
                .filter(|c| !c.holds)
                .map(|c| format!("{} read {:.3} ({})", c.name, c.value, c.bound))
                .collect();
            format!("{}: {}; {}", u.name, failed.join(", "), summary())
        }
        Decision::Pass => summary(),
    }
}

/// Why more trials could still change the verdict, naming the figure.
pub fn open(plan: &KeepalivePlan, run: &KeepaliveRun, f: &KeepaliveFigures, open: Open) -> String {
    let n = run.trials_done;
    match open {
        Open::Control => format!(
            "ambiguous after {n} trials: the control's B over S read {:.3}, within {:.2} of its bound ({})",
            f.control_ratio, plan.margin, plan.control.bound
        ),
        Open::Check(i) => {
            let c = &f.checks[i];
            format!(
                "ambiguous after {n} trials: {} read {:.3}, within {:.2} of its bound ({})",
                c.name, c.value, plan.margin, c.bound
            )
        }
        Open::Ambiguous => format!("ambiguous after {n} trials"),
        Open::NoVerdict => "no verdict yet".into(),
    }
}
