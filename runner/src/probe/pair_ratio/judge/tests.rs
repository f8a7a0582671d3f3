//! The pair-ratio judge's tests: recorded-style figures through
//! [`judge`], each verdict with its twin.

use super::*;
use crate::kernel::control::ControlSample;
use crate::probe::pair_ratio::measure::ModeRun;
use crate::spec::RatioBound;
use crate::spec::{Mode, ServerSettings};

fn plan(under_path: &str, control_path: &str) -> PairRatioPlan {
    let mode = |name: &str, path: &str, bound| Mode {
        name: name.into(),
        path: path.into(),
        server: ServerSettings::default(),
        bound,
        witness_bound: None,
    };
    PairRatioPlan {
        work_kib: 64,
        warmup: 0,
        under_test: mode("releasing", under_path, RatioBound::AtMost(1.35)),
        control: mode("holding", control_path, RatioBound::AtLeast(1.7)),
        gap_at_least: 0.5,
        capacity_at_most: 1.3,
        margin: 0.1,
        connections_at_most: 2,
        fail_confirm_factor: 2,
        serialised_at_most: None,
        free_core_trials: 5,
        infer_serving_threads: false,
        control_as_long_as_view: false,
        app: None,
        requires: Vec::new(),
    }
}

fn mode_run(name: &str, path: &str, single: f64, ratio: f64, trials: usize) -> ModeRun {
    ModeRun {
        name: name.into(),
        path: path.into(),
        digest_checked: path.starts_with("/work"),
        single_ms: vec![single; trials],
        pair_ms: vec![single * ratio; trials],
        pair_threads: 2,
        pair_pids: 1,
        connection_ports: [1, 2],
        witness: Vec::new(),
    }
}

/// A run whose figures read `under` and `control` with capacity `capacity`.
fn run(p: &PairRatioPlan, under: f64, control: f64, capacity: f64, trials: usize) -> PairRatioRun {
    PairRatioRun {
        under_test: mode_run("releasing", &p.under_test.path, 20.0, under, trials),
        control: mode_run("holding", &p.control.path, 20.0, control, trials),
        capacity: vec![
            ControlSample {
                single_ms: 20.0,
                pair_ms: 20.0 * capacity
            };
            trials
        ],
        connection_ports: [1, 2],
        trials_done: trials as u32,
        broken: None,
        peer_port_byte_swapped: false,
        witness_unavailable: None,
        quiet: Default::default(),
        control_kib: 64,
    }
}

const BUDGET: Trials = Trials { min: 5, max: 15 };

fn verdict(p: &PairRatioPlan, r: &PairRatioRun) -> (Verdict, String) {
    let j = judge(p, BUDGET, r).concluded();
    (j.verdict, j.reason)
}

#[test]
fn clear_gap_passes_and_no_gap_fails() {
    let p = plan("/work?mode=release", "/work?mode=hold");
    assert_eq!(verdict(&p, &run(&p, 1.02, 2.01, 1.03, 5)).0, Verdict::Pass);
    assert!(judge(&p, BUDGET, &run(&p, 1.02, 2.01, 1.03, 5)).settled());
    // With no witness the capacity control alone proves the free cores,
    // from another process at another moment: a wall fail is no verdict.
    let (v, reason) = verdict(&p, &run(&p, 1.98, 2.01, 1.03, 10));
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.contains("releasing read 1.98x"), "{reason}");
    assert!(reason.contains("no scheduler witness"), "{reason}");
    // Twin: the same wall figures, each trial's free core read off its own
    // pairs by the witness: a fail.
    let wp = witnessed_plan();
    let r = kernel_capacity(witnessed(
        &wp,
        (1.98, 2.01, 9.9),
        serialised,
        serialised,
        10,
    ));
    let j = judge(&wp, BUDGET, &r).concluded();
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
    assert!(j.reason.contains("releasing read 1.98x"), "{}", j.reason);
}

#[test]
fn only_trials_with_a_free_core_are_evidence() {
    // The releasing pairs of trials 0-3 ran while something else held a
    // core (their capacity samples read 2.0x); one trial was clean. The
    // old figure (best capacity sample, all pairs) read a false fail.
    let p = plan("/work?mode=release", "/work?mode=hold");
    let mut r = run(&p, 1.98, 2.01, 2.0, 15);
    for t in 5..15 {
        r.capacity[t].pair_ms = 20.0 * 1.03;
        r.under_test.pair_ms[t] = 20.0 * 1.02;
    }
    let j = judge(&p, BUDGET, &r).concluded();
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    // Twin: with only one clean trial there is no verdict at all.
    let mut r = run(&p, 1.98, 2.01, 2.0, 15);
    r.capacity[7].pair_ms = 20.0 * 1.03;
    let (v, reason) = verdict(&p, &r);
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.contains("in only 1 of 15 trials"), "{reason}");
}

#[test]
fn no_free_core_cannot_judge_even_when_the_figures_fail() {
    let p = plan("/work?mode=release", "/work?mode=hold");
    let (v, reason) = verdict(&p, &run(&p, 2.0, 2.0, 2.0, 15));
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.starts_with("no free core"), "{reason}");
}

#[test]
fn a_control_that_does_not_separate_cannot_judge_even_when_the_claim_holds() {
    let p = plan("/work?mode=release", "/work?mode=hold");
    let (v, reason) = verdict(&p, &run(&p, 1.0, 1.0, 1.0, 15));
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.contains("control did not separate"), "{reason}");
    assert!(reason.contains("check that the control route"), "{reason}");
}

#[test]
fn a_control_that_does_not_separate_on_a_busy_machine_names_the_machine() {
    // The twin: the same figures with 4 of 15 trials queued for a core
    // point at the machine, not at the control route.
    let p = plan("/work?mode=release", "/work?mode=hold");
    let mut r = run(&p, 1.0, 1.0, 1.0, 15);
    for t in &mut r.capacity[..4] {
        t.pair_ms = t.single_ms * 2.0;
    }
    let (v, reason) = verdict(&p, &r);
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.contains("control did not separate"), "{reason}");
    assert!(
        reason.contains("only 11 of 15 trials had a free core"),
        "{reason}"
    );
    assert!(!reason.contains("check that the control route"), "{reason}");
}

#[test]
fn unverified_work_never_passes() {
    // Figures that would pass, on routes without a digest.
    let p = plan("/busy?ms=25", "/busy?ms=26");
    let (v, reason) = verdict(&p, &run(&p, 1.02, 2.01, 1.03, 5));
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.contains("cannot verify"), "{reason}");
}

#[test]
fn a_figure_near_its_bound_is_ambiguous_at_the_end_of_the_budget() {
    let p = plan("/work?mode=release", "/work?mode=hold");
    // 1.30 is within 0.10 of 1.35: not settled; at the last trial it is
    // "cannot judge", never a pass.
    let r = run(&p, 1.30, 2.0, 1.03, 15);
    assert!(!judge(&p, BUDGET, &r).settled());
    let (v, reason) = verdict(&p, &r);
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.starts_with("ambiguous after 15 trials"), "{reason}");
    // Twin: the same figures before the budget ends are a provisional pass.
    assert_eq!(judge(&p, BUDGET, &r).verdict, Verdict::Pass);
}

#[test]
fn ratio_of_minima_drives_the_verdict_not_one_noisy_trial() {
    let p = plan("/work?mode=release", "/work?mode=hold");
    let mut r = run(&p, 1.02, 2.01, 1.03, 5);
    // One pair of the releasing mode caught a burst of load.
    r.under_test.pair_ms[2] = 60.0;
    let j = judge(&p, BUDGET, &r).concluded();
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(
        j.confidence.contains("4 of 5 alone agree for releasing"),
        "{}",
        j.confidence
    );
}

use crate::kernel::witness::{ThreadFigures, Witness};

const MS: u64 = 1_000_000;

/// A pair's witness over 40 ms: each serving thread (on-CPU ms,
/// run-queue ms); the others' run-queue time is what the other thread
/// of the pair spent waiting for a core.
fn pair_witness(threads: &[(u64, u64)]) -> Witness {
    let wall = 40 * MS;
    let total_rq: u64 = threads.iter().map(|t| t.1 * MS).sum();
    Witness {
        wall_ns: wall,
        parallelism: None,
        on_cpu_ns: 0,
        run_queue_ns: total_rq,
        threads: threads
            .iter()
            .enumerate()
            .map(|(i, &(on, rq))| ThreadFigures {
                tid: i as i32 + 1,
                on_cpu_ns: on * MS,
                run_queue_ns: rq * MS,
                blocked_ns: wall.saturating_sub((on + rq) * MS),
                others_run_queue_ns: total_rq - rq * MS,
            })
            .collect(),
        unseen: Vec::new(),
        appeared: 0,
        vanished: 0,
        sampled: None,
    }
}

/// The E19 plan with witness bounds.
fn witnessed_plan() -> PairRatioPlan {
    let mut p = plan("/work?mode=release", "/work?mode=hold");
    p.under_test.witness_bound = Some(RatioBound::AtLeast(1.7));
    p.control.witness_bound = Some(RatioBound::AtMost(1.6));
    p.serialised_at_most = Some(1.4);
    p
}

/// Both threads runnable all along (some of it waiting for a core).
fn parallel() -> Witness {
    pair_witness(&[(25, 15), (26, 14)])
}

/// Two threads taking turns behind a lock, nobody waiting for a core.
fn serialised() -> Witness {
    pair_witness(&[(20, 0), (20, 0)])
}

fn witnessed(
    p: &PairRatioPlan,
    wall: (f64, f64, f64),
    under: fn() -> Witness,
    control: fn() -> Witness,
    trials: usize,
) -> PairRatioRun {
    let mut r = run(p, wall.0, wall.1, wall.2, trials);
    r.under_test.witness = (0..trials).map(|_| Some(under())).collect();
    r.control.witness = (0..trials).map(|_| Some(control())).collect();
    r
}

#[test]
fn with_no_free_core_the_witness_decides_a_pass_alone() {
    let p = witnessed_plan();
    // The wall ratios are useless (no free core: capacity 2.0x)...
    let r = witnessed(&p, (2.0, 2.0, 2.0), parallel, serialised, 5);
    let j = judge(&p, BUDGET, &r).concluded();
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(
        j.reason.starts_with("pass by the scheduler witness"),
        "{}",
        j.reason
    );
    assert!(
        j.reason.contains("wall ratio not usable: no free core"),
        "{}",
        j.reason
    );
    // Twin: the same machine with a serialised mode under test is no pass.
    let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, serialised, 5);
    assert_ne!(judge(&p, BUDGET, &r).concluded().verdict, Verdict::Pass);
}

#[test]
fn a_witness_fail_alone_needs_the_confirming_trials() {
    let p = witnessed_plan();
    let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, serialised, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
    assert!(
        !j.settled(),
        "5 trials are not enough for a witness fail alone"
    );
    let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, serialised, 10);
    let j = judge(&p, BUDGET, &r);
    assert!(j.settled(), "{:?}", j.unsettled);
    assert_eq!(j.concluded().verdict, Verdict::Fail);
}

#[test]
fn a_wall_fail_the_witness_confirms_needs_no_extra_trials() {
    let p = witnessed_plan();
    let r = witnessed(&p, (1.98, 2.01, 1.03), serialised, serialised, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
    assert!(j.settled(), "{:?}", j.unsettled);
    assert!(
        j.reason.contains("the scheduler witness agrees"),
        "{}",
        j.reason
    );
    // Twin: with no witness the same fail waits for 10 trials with a
    // free core, and says so.
    let r = run(&p, 1.98, 2.01, 1.03, 5);
    let j = judge(&p, BUDGET, &r);
    assert!(!j.settled());
    assert!(
        j.unsettled
            .as_deref()
            .unwrap()
            .starts_with("not enough trials with a free core to confirm a fail: 5 of 5"),
        "{:?}",
        j.unsettled
    );
}

#[test]
fn the_wall_and_the_witness_disagreeing_cannot_judge() {
    let p = witnessed_plan();
    // The wall says parallel; the witness says the threads took turns.
    let r = witnessed(&p, (1.02, 2.01, 1.03), serialised, serialised, 15);
    let (v, reason) = verdict(&p, &r);
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.contains("disagree"), "{reason}");
    // Twin: agreeing, it passes.
    let r = witnessed(&p, (1.02, 2.01, 1.03), parallel, serialised, 5);
    assert_eq!(verdict(&p, &r).0, Verdict::Pass);
}

#[test]
fn blocked_time_that_noise_could_explain_never_fails_a_row() {
    let p = witnessed_plan();
    // One thread idled after its reply while its partner waited 20 ms
    // for a core: plain parallelism reads low, but the other's run-queue
    // time explains the idle tail, so the witness says nothing...
    let tail = || pair_witness(&[(20, 0), (20, 20)]);
    let r = witnessed(&p, (2.0, 2.0, 2.0), tail, serialised, 15);
    let (v, reason) = verdict(&p, &r);
    assert_eq!(v, Verdict::CannotJudge, "{reason}");
    assert!(reason.starts_with("no free core"), "{reason}");
    // ...where the same reading with nobody waiting for a core fails.
    let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, serialised, 15);
    assert_eq!(verdict(&p, &r).0, Verdict::Fail);
}

#[test]
fn without_a_witness_the_wall_rules_apply_and_say_why() {
    let p = witnessed_plan();
    let mut r = run(&p, 1.02, 2.01, 1.03, 5);
    r.witness_unavailable = Some("no per-thread scheduler accounting on this platform".into());
    let j = judge(&p, BUDGET, &r).concluded();
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(
        j.confidence.contains("no per-thread scheduler accounting"),
        "{}",
        j.confidence
    );
    let f = j.figures.unwrap();
    assert_eq!(f.witness, WitnessRole::Unavailable);
}

#[test]
fn an_unconfirmed_wall_fail_gives_way_to_a_witness_pass() {
    let p = witnessed_plan();
    // Five trials with a free core read a fail (noise on the releasing
    // pairs); a fail needs ten. The witness saw both threads runnable.
    let r = witnessed(&p, (1.98, 2.01, 1.03), parallel, serialised, 5);
    let j = judge(&p, BUDGET, &r).concluded();
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(
        j.reason.contains("fewer than the 10 a fail needs"),
        "{}",
        j.reason
    );
    // Twin: the same wall fail confirmed over ten trials is a
    // disagreement, never a pass.
    let r = witnessed(&p, (1.98, 2.01, 1.03), parallel, serialised, 10);
    let (v, reason) = verdict(&p, &r);
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.contains("disagree"), "{reason}");
}

#[test]
fn a_wall_figure_near_its_bound_does_not_hold_a_pass_both_readings_settle() {
    let p = witnessed_plan();
    // Releasing 1.30x sits within 0.10 of its bound (1.35x), but the gap
    // (0.70) is past its margin and the witness reads parallel against a
    // separating control: five trials settle it.
    let r = witnessed(&p, (1.30, 2.0, 1.03), parallel, serialised, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(j.settled(), "{:?}", j.unsettled);
    // Twins: without the witness the same wall figures want more trials...
    let r = run(&p, 1.30, 2.0, 1.03, 5);
    assert!(!judge(&p, BUDGET, &r).settled());
    // ...and with it, a gap within its margin (0.55 against 0.5) still does.
    let r = witnessed(&p, (1.25, 1.80, 1.03), parallel, serialised, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(!j.settled());
    assert!(
        j.unsettled
            .as_deref()
            .unwrap()
            .contains("the gap read 0.55"),
        "{:?}",
        j.unsettled
    );
}

#[test]
fn a_clear_wall_fail_the_witness_confirms_is_settled_with_the_control_near_its_bound() {
    let p = witnessed_plan();
    // Holding 1.75x sits within 0.10 of its bound (1.7x); releasing missed
    // clearly and the witness saw the threads take turns.
    let r = witnessed(&p, (1.98, 1.75, 1.03), serialised, serialised, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
    assert!(j.settled(), "{:?}", j.unsettled);
    // Twin: without the witness it wants the confirming trials.
    let r = run(&p, 1.98, 1.75, 1.03, 5);
    assert!(!judge(&p, BUDGET, &r).settled());
    // Twin: a wall fail that did not miss clearly stays open.
    let r = witnessed(&p, (1.40, 2.0, 1.03), serialised, serialised, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
    assert!(!j.settled());
}

/// Both threads on a CPU most of the pair: Σ on-CPU 1.5 of the wall.
fn on_two_cpus() -> Witness {
    pair_witness(&[(30, 6), (30, 7)])
}

#[test]
fn the_on_cpu_proof_settles_a_witness_pass_with_no_free_core() {
    let mut p = witnessed_plan();
    // A control that crept past its runnable bound (P 1.65) while its
    // on-CPU time stayed at 1: the runnable rules cannot tell...
    let crept = || pair_witness(&[(20, 13), (20, 13)]);
    let r = witnessed(&p, (2.0, 2.0, 2.0), parallel, crept, 5);
    assert_eq!(
        judge(&p, BUDGET, &r).concluded().verdict,
        Verdict::CannotJudge
    );
    // ...the view on two CPUs at once proves it, and settles at once.
    let r = witnessed(&p, (2.0, 2.0, 2.0), on_two_cpus, crept, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(j.settled(), "{:?}", j.unsettled);
    // Twin: the same proof against a row whose at-once bound the view's
    // runnable P (1.83) also clears by less than the margin is still
    // settled by the proof; without the proof (a serialised view) no pass.
    p.under_test.witness_bound = Some(RatioBound::AtLeast(1.8));
    let r = witnessed(&p, (2.0, 2.0, 2.0), serialised, crept, 5);
    assert_ne!(judge(&p, BUDGET, &r).concluded().verdict, Verdict::Pass);
}

/// `r` as a run with the witness and no capacity control: each trial's
/// capacity is read off its pairs' run-queue time.
fn kernel_capacity(mut r: PairRatioRun) -> PairRatioRun {
    r.capacity.clear();
    r
}

/// Two threads hashing at once on two free cores: 1 ms of waiting each.
fn parallel_free() -> Witness {
    pair_witness(&[(38, 1), (38, 1)])
}

#[test]
fn with_the_witness_the_run_queue_tells_a_free_core() {
    let p = witnessed_plan();
    // Quiet: the serving threads waited 2 ms of a 40 ms pair (1.05x), so
    // every trial had a free core and the wall decides, the witness agreeing.
    let r = kernel_capacity(witnessed(
        &p,
        (1.02, 2.01, 9.9),
        parallel_free,
        serialised,
        5,
    ));
    let j = judge(&p, BUDGET, &r);
    let f = j.figures.as_ref().unwrap();
    assert_eq!(f.capacity_source, CapacitySource::Kernel);
    assert_eq!(f.valid_trials, 5);
    assert!((f.capacity - 1.05).abs() < 1e-9, "{}", f.capacity);
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert_eq!(f.witness, WitnessRole::Agrees, "{}", j.reason);
    assert!(j.settled(), "{:?}", j.unsettled);
    // Twin: the releasing threads waited 29 of 40 ms for a core (1.72x):
    // no free core, so the same wall fail is not usable and the witness
    // decides alone.
    let r = kernel_capacity(witnessed(&p, (1.98, 2.01, 1.0), parallel, serialised, 5));
    let j = judge(&p, BUDGET, &r).concluded();
    let f = j.figures.as_ref().unwrap();
    assert_eq!(f.valid_trials, 0);
    assert_eq!(f.witness, WitnessRole::Decides, "{}", j.reason);
    assert!(
        j.reason
            .contains("did the serving threads wait for a core at most 30% of the pair's wall"),
        "{}",
        j.reason
    );
}

#[test]
fn with_the_witness_a_trial_without_snapshots_has_no_free_core() {
    let p = witnessed_plan();
    let mut r = kernel_capacity(witnessed(
        &p,
        (1.02, 2.01, 1.0),
        parallel_free,
        serialised,
        5,
    ));
    r.control.witness[2] = None;
    let f = judge(&p, BUDGET, &r).figures.unwrap();
    assert_eq!(
        f.valid_trials, 4,
        "the trial without a reading is no evidence"
    );
    // Twin: no reading in any trial is no figure at all, and says why.
    for w in r.control.witness.iter_mut() {
        *w = None;
    }
    let j = judge(&p, BUDGET, &r).concluded();
    assert_eq!(j.verdict, Verdict::CannotJudge);
    assert!(j.reason.contains("has a capacity reading"), "{}", j.reason);
}

/// Both threads runnable at once, P 1.73: past E19's 1.70 by less than
/// the margin, with no on-CPU proof.
fn parallel_near_bound() -> Witness {
    pair_witness(&[(20, 15), (20, 14)])
}

#[test]
fn a_clear_wall_pass_settles_a_witness_pass_near_its_bound() {
    let p = witnessed_plan();
    // No free core by the capacity control (2.0x), yet the wall ratios
    // over every trial pass past their margins (E15 on granian at load 2.3:
    // 1.09x against the control's 2.01x): noise cannot fake that, so the
    // witness's pass near its bound is settled.
    let r = witnessed(&p, (1.09, 2.01, 2.0), parallel_near_bound, serialised, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert_eq!(j.figures.as_ref().unwrap().valid_trials, 0);
    assert!(j.settled(), "{:?}", j.unsettled);
    assert!(
        j.confidence.contains("over every trial"),
        "{}",
        j.confidence
    );
    // Twin: the same witness beside wall ratios that do not pass (both
    // pairs slowed to 2x) is still near its bound: ambiguous at the end of
    // the budget, never a pass.
    let r = witnessed(&p, (2.0, 2.0, 2.0), parallel_near_bound, serialised, 15);
    let j = judge(&p, BUDGET, &r);
    assert!(!j.settled());
    let j = j.concluded();
    assert_eq!(j.verdict, Verdict::CannotJudge, "{}", j.reason);
    assert!(
        j.reason.contains("within 0.10 of its bound"),
        "{}",
        j.reason
    );
    // Nor does a wall pass whose gap stands within the margin settle it.
    let r = witnessed(&p, (1.30, 1.85, 2.0), parallel_near_bound, serialised, 15);
    assert_eq!(
        judge(&p, BUDGET, &r).concluded().verdict,
        Verdict::CannotJudge
    );
}

#[test]
fn a_clear_wall_pass_stands_without_a_free_core() {
    let p = plan("/work?mode=release", "/work?mode=hold");
    // Every trial's capacity 2.0x: no free core; the wall ratios pass by
    // far (E19-fastapi on granian-asgi beside two burst loads: 1.14x
    // against 2.04x).
    let r = run(&p, 1.14, 2.04, 2.0, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(j.settled(), "{:?}", j.unsettled);
    assert!(j.reason.contains("noise only adds time"), "{}", j.reason);
    // Twin: the serialised pair on the same busy machine is no verdict.
    let r = run(&p, 2.0, 2.04, 2.0, 15);
    assert_eq!(
        judge(&p, BUDGET, &r).concluded().verdict,
        Verdict::CannotJudge
    );
    // Twin: one lucky pair carries the ratio of minima, the trials' own
    // ratios (median 2.0x) do not pass: no verdict.
    let mut r = run(&p, 2.0, 2.04, 2.0, 15);
    r.under_test.pair_ms[3] = 20.0 * 1.05;
    let f = judge(&p, BUDGET, &r).figures.unwrap();
    assert!(f.under_test.holds, "the minima alone pass");
    assert_eq!(
        judge(&p, BUDGET, &r).concluded().verdict,
        Verdict::CannotJudge
    );
}

#[test]
fn a_clear_wall_pass_against_a_witness_that_says_turns_cannot_judge() {
    let p = witnessed_plan();
    let r = witnessed(&p, (1.14, 2.04, 2.0), serialised, serialised, 15);
    let j = judge(&p, BUDGET, &r).concluded();
    assert_eq!(j.verdict, Verdict::CannotJudge, "{}", j.reason);
    assert!(j.reason.contains("disagree"), "{}", j.reason);
    // Twin: the witness between its bands lets the wall pass stand.
    let between = || pair_witness(&[(20, 12), (20, 13)]);
    let r = witnessed(&p, (1.14, 2.04, 2.0), between, serialised, 5);
    let j = judge(&p, BUDGET, &r);
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert_eq!(j.figures.unwrap().witness, WitnessRole::Silent);
}

#[test]
fn a_wall_control_that_did_not_separate_gives_way_to_the_witness_own_control() {
    // Beside two burst loads the fault server's serialise mode read its
    // holding control at 1.63x, under 1.70x, with free cores: the wall
    // probe could not fail there, the witness (both pairs took turns, its
    // own control separating) can.
    let p = witnessed_plan();
    let r = witnessed(&p, (1.98, 1.63, 1.03), serialised, serialised, 10);
    let j = judge(&p, BUDGET, &r);
    assert!(j.settled(), "{:?}", j.unsettled);
    let j = j.concluded();
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
    assert!(
        j.reason.starts_with("FAIL by the scheduler witness")
            && j.reason
                .contains("the control did not separate (holding read 1.63x"),
        "{}",
        j.reason
    );
    // Twin: a witness fail alone still needs the confirming trials.
    let r = witnessed(&p, (1.98, 1.63, 1.03), serialised, serialised, 5);
    assert!(!judge(&p, BUDGET, &r).settled());
    // Twin: with no witness the wall cannot judge.
    let (v, reason) = verdict(&p, &run(&p, 1.98, 1.63, 1.03, 10));
    assert_eq!(v, Verdict::CannotJudge);
    assert!(reason.contains("control did not separate"), "{reason}");
    // Twin: a witness whose own control ran at once makes no call either.
    let r = witnessed(&p, (1.98, 1.63, 1.03), serialised, parallel, 10);
    assert_eq!(verdict(&p, &r).0, Verdict::CannotJudge);
    // And the witness's pass decides the same way (the pair on the cores
    // at once, the control taking turns).
    let r = witnessed(&p, (1.02, 1.63, 1.03), parallel, serialised, 5);
    let (v, reason) = verdict(&p, &r);
    assert_eq!(v, Verdict::Pass, "{reason}");
}

/// A pair whose serving threads were both runnable in `together` of the
/// samples, with runnable parallelism `p` (each thread on a CPU 24 ms of
/// 40 and waiting for one for the rest of its share).
fn sampled_pair(p: f64, together: f64) -> Witness {
    let rq = ((p * 40.0 / 2.0) as u64).saturating_sub(24);
    let mut w = pair_witness(&[(24, rq), (24, rq)]);
    w.sampled = Some(crate::kernel::witness::SampledFacts {
        samples: 40,
        host_idle_cores: Some(0.0),
        together: Some(together),
        unconvoyed_third: None,
    });
    w
}

#[test]
fn a_pass_by_the_samples_order_settles_only_far_over_the_control() {
    // Beside two burst loads a releasing pair's P fell under 1.7 while its
    // threads stayed runnable together; the holding control's did not.
    let p = witnessed_plan();
    let mut r = run(&p, 2.0, 2.0, 2.0, 15);
    r.under_test.witness = (0..15).map(|_| Some(sampled_pair(1.6, 0.7))).collect();
    r.control.witness = (0..15).map(|_| Some(sampled_pair(1.2, 0.2))).collect();
    let j = judge(&p, BUDGET, &r);
    assert!(j.settled(), "{:?}", j.unsettled);
    let j = j.concluded();
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert_eq!(
        j.figures.as_ref().and_then(|f| f.ruling),
        Some(crate::probe::pair_ratio::rulebook::Ruling::AtOnceTogether)
    );
    // Twin: 35 points over the control is the reading, not yet the margin
    // that settles it; at the end of the budget it cannot judge, and says
    // which figure was short.
    r.under_test.witness = (0..15).map(|_| Some(sampled_pair(1.6, 0.62))).collect();
    r.control.witness = (0..15).map(|_| Some(sampled_pair(1.2, 0.27))).collect();
    let j = judge(&p, BUDGET, &r);
    let why = j.unsettled.clone().unwrap_or_default();
    assert!(
        why.contains("runnable together in 62% of the samples against holding's 27%"),
        "{why}"
    );
    assert_eq!(j.concluded().verdict, Verdict::CannotJudge);
    // Twin: a pair that was seldom together is no pass by this rule.
    r.under_test.witness = (0..15).map(|_| Some(sampled_pair(1.6, 0.3))).collect();
    r.control.witness = (0..15).map(|_| Some(sampled_pair(1.2, 0.2))).collect();
    assert_ne!(verdict(&p, &r).0, Verdict::Pass);
}

#[test]
fn a_pass_by_the_samples_order_settles_closer_to_its_bound_after_more_trials() {
    // The suite beside two burst loads: releasing P 1.66, its threads
    // runnable together in 71% of the samples against the holding
    // control's 34%, after 15 trials with no free core. 37 points over the
    // control: short of the 40 that settle after 5 trials, past the 36 that
    // settle after 15 (the median of 15 trials errs by sqrt(5/15) of the
    // median of 5).
    let p = witnessed_plan();
    let with = |n: usize, t: f64, c: f64| {
        let mut r = run(&p, 2.0, 2.0, 2.0, n);
        r.under_test.witness = (0..n).map(|_| Some(sampled_pair(1.66, t))).collect();
        r.control.witness = (0..n).map(|_| Some(sampled_pair(1.2, c))).collect();
        r
    };
    let j = judge(&p, BUDGET, &with(15, 0.71, 0.34));
    assert!(j.settled(), "{:?}", j.unsettled);
    let j = j.concluded();
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert_eq!(
        j.figures.as_ref().and_then(|f| f.ruling),
        Some(crate::probe::pair_ratio::rulebook::Ruling::AtOnceTogether)
    );
    // Twin: the same reading after 5 trials is not settled yet.
    let j = judge(&p, BUDGET, &with(5, 0.71, 0.34));
    let why = j.unsettled.clone().unwrap_or_default();
    assert!(why.contains("under the 40 points over it"), "{why}");
    // Twin: 34 points after 15 trials is still short, and cannot judge.
    let j = judge(&p, BUDGET, &with(15, 0.68, 0.34));
    let why = j.unsettled.clone().unwrap_or_default();
    assert!(why.contains("under the 36 points over it"), "{why}");
    assert_eq!(j.concluded().verdict, Verdict::CannotJudge);
}

#[test]
fn a_pass_by_p_near_its_bound_is_settled_by_the_samples_order() {
    // Beside a looping build, no free core: releasing P just over 1.7,
    // its threads runnable together far more often than the control's.
    let p = witnessed_plan();
    let mut r = run(&p, 2.0, 2.0, 2.0, 15);
    r.under_test.witness = (0..15).map(|_| Some(sampled_pair(1.75, 0.7))).collect();
    r.control.witness = (0..15).map(|_| Some(sampled_pair(1.25, 0.2))).collect();
    let j = judge(&p, BUDGET, &r);
    assert!(j.settled(), "{:?}", j.unsettled);
    let j = j.concluded();
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert_ne!(
        j.figures.as_ref().and_then(|f| f.ruling),
        Some(crate::probe::pair_ratio::rulebook::Ruling::AtOnceTogether),
        "P decided; the samples' order only settled it"
    );
    // Twins: the samples short of the at-once share, or of the settling
    // margin over the control: P's margin holds it open, and at the end of
    // the budget it cannot judge.
    for (t, c) in [(0.55, 0.1), (0.62, 0.27)] {
        r.under_test.witness = (0..15).map(|_| Some(sampled_pair(1.75, t))).collect();
        r.control.witness = (0..15).map(|_| Some(sampled_pair(1.25, c))).collect();
        let j = judge(&p, BUDGET, &r);
        let why = j.unsettled.clone().unwrap_or_default();
        assert!(why.contains("within 0.10 of its bound"), "{t}/{c}: {why}");
        assert_eq!(j.concluded().verdict, Verdict::CannotJudge);
    }
}
