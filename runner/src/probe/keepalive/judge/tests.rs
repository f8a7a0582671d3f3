//! The keepalive judge's tests: each rule with its twin.

use super::*;
use crate::probe::keepalive::measure::{KeepaliveModeRun, KeepaliveTrial};
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
