//! The GIL judge's tests: each rule's decision, with its twin.

use super::*;
use crate::probe::gil::instrument::Instrument;
use crate::probe::gil::instrument::{
    AloneFigures, InstrumentReport, ProbeErrorInfo, PythonFacts, RoundFigure, ScaleReport, ScaleRow,
};
use crate::probe::gil::plan::Expect;
use crate::probe::gil::plan::GilBlock;

fn plan(expect: Option<Expect>) -> GilPlan {
    GilBlock {
        call: Some("m:f".into()),
        expect,
        ..Default::default()
    }
    .validate()
    .unwrap()
}

fn round(arm: &str, r: u32, blocked: f64, busy: f64) -> RoundFigure {
    RoundFigure {
        round: r,
        arm: arm.into(),
        position: 0,
        wall_s: 0.06,
        calls: 10,
        busy,
        call_us: Some(6000.0 * busy),
        cpu_us: None,
        calls_per_s: 166.0,
        iterations: 1000,
        iterations_per_s: 16000.0,
        blocked: Some(blocked),
        blocked_of_wall: Some(blocked),
        runqueue: Some(0.02),
        oncpu: Some(1.0 - blocked),
        loss: None,
        settled: Some(true),
        t0: None,
        t1: None,
    }
}

/// A document with the call reading `call` and the controls `ctl`
/// (releases, half, all) in every round.
fn report(call: f64, busy: f64, ctl: [f64; 3]) -> InstrumentReport {
    let mut rounds = Vec::new();
    for r in 0..5 {
        rounds.push(round(CALL, r, call, busy));
        rounds.push(round(RELEASES, r, ctl[0], 0.99));
        rounds.push(round(HOLDS_HALF, r, ctl[1], 0.99));
        rounds.push(round(HOLDS_ALL, r, ctl[2], 0.99));
    }
    InstrumentReport {
        alone: None,
        python: PythonFacts {
            version: "3.11.7".into(),
            executable: "/usr/bin/python3".into(),
            gil_enabled: Some(true),
            ..Default::default()
        },
        call: Default::default(),
        instrument: Some(Instrument::Schedstat),
        instrument_note: Some("schedstat".into()),
        controls: None,
        arms: vec![],
        timer_overhead_ns: Some(60.0),
        result_sample: None,
        rounds_run: Some(5),
        rounds_figures: rounds,
        setup_s: None,
        rounds_s: None,
        scale: None,
        error: None,
        elapsed_s: Some(1.5),
        native_threads: None,
        python_threads: None,
        spinner_tid: None,
        spinner_samples: None,
    }
}

fn run(report: InstrumentReport) -> GilRun {
    GilRun {
        python: "/usr/bin/python3".into(),
        argv: vec![],
        elapsed_ms: 1600.0,
        outcome: RunOutcome::Report {
            report: Box::new(report),
        },
        stderr_tail: String::new(),
    }
}

const CONTROLS: [f64; 3] = [0.0, 0.48, 0.83];

#[test]
fn a_releasing_call_reads_releases_and_a_holding_one_holds() {
    let j = judge(&plan(None), &run(report(0.01, 0.99, CONTROLS)));
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(j.reason.starts_with("releases:"), "{}", j.reason);
    assert_eq!(j.figures.as_ref().unwrap().answer, Some(Expect::Releases));
    assert_eq!(j.headline, "blocked 0.01 vs controls 0.00/0.48/0.83");
    assert!(
        j.confidence.starts_with("5 of 5 rounds <= 0.20"),
        "{}",
        j.confidence
    );

    let j = judge(&plan(None), &run(report(0.52, 0.99, CONTROLS)));
    assert_eq!(j.verdict, Verdict::Pass);
    assert!(j.reason.starts_with("holds:"), "{}", j.reason);
}

#[test]
fn the_table_shows_the_judges_reading_of_the_controls() {
    let j = judge(&plan(None), &run(report(0.01, 0.99, CONTROLS)));
    let mut f = j.figures.unwrap();
    assert_eq!(f.control_checks.len(), 3);
    assert!(f.control_checks.iter().all(|c| c.as_designed));
    assert!(!crate::probe::gil::render(&f).contains("NOT AS DESIGNED"));
    // Twin: the table follows the judgement, not the readings (which
    // are the same): a control the judge read off shows as such.
    f.control_checks[1].as_designed = false;
    let table = crate::probe::gil::render(&f);
    assert_eq!(table.matches("NOT AS DESIGNED").count(), 1, "{table}");
    // And the judge reads a control off its bound: holds-half at 0.10.
    let j = judge(&plan(None), &run(report(0.01, 0.99, [0.0, 0.10, 0.83])));
    let checks = j.figures.unwrap().control_checks;
    assert_eq!(
        checks.iter().map(|c| c.as_designed).collect::<Vec<_>>(),
        vec![true, false, true]
    );
}

#[test]
fn the_wrong_expectation_fails_and_the_right_one_passes() {
    let holding = run(report(0.52, 0.99, CONTROLS));
    let j = judge(&plan(Some(Expect::Releases)), &holding);
    assert_eq!(j.verdict, Verdict::Fail);
    assert!(
        j.reason
            .starts_with("expected releases, but the call holds"),
        "{}",
        j.reason
    );
    let j = judge(&plan(Some(Expect::Holds)), &holding);
    assert_eq!(j.verdict, Verdict::Pass);
    assert!(j.reason.starts_with("holds, as expected"), "{}", j.reason);
}

#[test]
fn each_control_that_does_not_separate_makes_it_cannot_judge() {
    // The same call reading as in the passing twin above.
    for (ctl, name) in [
        ([0.30, 0.48, 0.83], "releases read"),
        ([0.0, 0.10, 0.83], "holds-half read"),
        ([0.0, 0.48, 0.40], "holds-all read"),
    ] {
        let j = judge(&plan(Some(Expect::Holds)), &run(report(0.52, 0.99, ctl)));
        assert_eq!(j.verdict, Verdict::CannotJudge, "{ctl:?}");
        assert!(j.reason.contains(name), "{}", j.reason);
        assert!(j.figures.is_some());
    }
}

#[test]
fn a_call_too_short_for_the_instrument_cannot_be_judged() {
    let j = judge(&plan(None), &run(report(0.45, 0.30, CONTROLS)));
    assert_eq!(j.verdict, Verdict::CannotJudge);
    assert!(
        j.reason.contains("too fast for the instrument"),
        "{}",
        j.reason
    );
    // Its twin at full busy gets an answer.
    let j = judge(&plan(None), &run(report(0.45, 0.95, CONTROLS)));
    assert_eq!(j.verdict, Verdict::Pass);
}

#[test]
fn a_reading_between_the_bounds_is_ambiguous() {
    let j = judge(&plan(None), &run(report(0.22, 0.99, CONTROLS)));
    assert_eq!(j.verdict, Verdict::CannotJudge);
    assert!(j.reason.contains("between releases"), "{}", j.reason);
}

#[test]
fn rounds_without_a_reading_do_not_veto_the_ones_with_one() {
    // Five more rounds, each queued past the bound (no reading): the five
    // readable ones and the controls decide, as the extra rounds intend.
    let mut r = report(0.01, 0.99, CONTROLS);
    let extra: Vec<_> = r
        .rounds_figures
        .iter()
        .cloned()
        .map(|mut f| {
            f.round += 5;
            f.blocked = None;
            f.runqueue = Some(0.9);
            f
        })
        .collect();
    for f in &mut r.rounds_figures {
        f.runqueue = Some(0.5);
    }
    r.rounds_figures.extend(extra);
    r.rounds_run = Some(10);
    let j = judge(&plan(None), &run(r.clone()));
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    // Its twin: readings taken while queued past the bound are not trusted.
    for f in r.rounds_figures.iter_mut().filter(|f| f.blocked.is_some()) {
        f.runqueue = Some(0.8);
    }
    let j = judge(&plan(None), &run(r));
    assert!(j.reason.starts_with("no free core"), "{}", j.reason);
}

#[test]
fn a_saturated_machine_and_a_missing_gil_cannot_be_judged() {
    let mut r = report(0.01, 0.99, CONTROLS);
    for f in &mut r.rounds_figures {
        f.runqueue = Some(0.95);
    }
    let j = judge(&plan(None), &run(r));
    assert!(j.reason.starts_with("no free core"), "{}", j.reason);
    let mut r = report(0.0, 0.99, [0.0, 0.0, 0.0]);
    r.python.gil_enabled = Some(false);
    let j = judge(&plan(None), &run(r));
    assert_eq!(j.verdict, Verdict::CannotJudge);
    assert!(j.reason.contains("without a GIL"), "{}", j.reason);
}

#[test]
fn errors_say_what_raised_and_where() {
    let err = |place: &str, kind: &str, message: &str| {
        let mut r = report(0.0, 0.0, CONTROLS);
        r.rounds_figures.clear();
        r.error = Some(ProbeErrorInfo {
            place: place.into(),
            kind: kind.into(),
            message: message.into(),
            arm: Some("call".into()),
            traceback: None,
        });
        judge(&plan(None), &run(r))
    };
    let j = err("import", "ModuleNotFoundError", "No module named 'nope'");
    assert_eq!(j.verdict, Verdict::CannotJudge);
    assert!(
        j.reason.contains("No module named 'nope'") && j.reason.contains("--python"),
        "{}",
        j.reason
    );
    let j = err("call", "ZeroDivisionError", "division by zero");
    assert!(
        j.reason
            .contains("the call raised ZeroDivisionError: division by zero"),
        "{}",
        j.reason
    );
    let j = err("setup", "RuntimeError", "no index");
    assert!(
        j.reason.contains("setup m:f raised RuntimeError: no index"),
        "{}",
        j.reason
    );
}

#[test]
fn rounds_without_a_reading_are_a_saturated_machine() {
    let mut r = report(0.01, 0.99, CONTROLS);
    for f in r
        .rounds_figures
        .iter_mut()
        .filter(|f| f.arm == HOLDS_HALF && f.round < 2)
    {
        f.blocked = None;
        f.runqueue = Some(0.95);
    }
    // Three of five still read: enough.
    assert_eq!(judge(&plan(None), &run(r.clone())).verdict, Verdict::Pass);
    r.rounds_figures[2 * 4 + 2].blocked = None;
    let j = judge(&plan(None), &run(r));
    assert_eq!(j.verdict, Verdict::CannotJudge);
    assert!(
        j.reason
            .starts_with("no free core: only 2 of 5 rounds of holds-half"),
        "{}",
        j.reason
    );
    assert!(j.figures.is_some());
}

#[test]
fn an_arm_queued_for_a_core_in_every_round_is_no_free_core_not_a_broken_instrument() {
    let mut r = report(0.01, 0.99, CONTROLS);
    for f in r.rounds_figures.iter_mut().filter(|f| f.arm == HOLDS_ALL) {
        f.blocked = None;
        f.runqueue = Some(0.8);
    }
    let j = judge(&plan(None), &run(r));
    assert_eq!(j.verdict, Verdict::CannotJudge);
    assert!(
        j.reason
            .starts_with("no free core: none of the 5 rounds of arm holds-all had a reading"),
        "{}",
        j.reason
    );
    assert!(j.reason.contains("a median 0.80"), "{}", j.reason);
    // Its twin: no reading in rounds the spinner was free to run in is
    // the instrument's fault, and says so.
    let mut r = report(0.01, 0.99, CONTROLS);
    for f in r.rounds_figures.iter_mut().filter(|f| f.arm == HOLDS_ALL) {
        f.blocked = None;
        f.runqueue = Some(0.1);
    }
    let j = judge(&plan(None), &run(r));
    assert!(j.reason.contains("a broken instrument"), "{}", j.reason);
}

#[test]
fn missing_rounds_and_failed_runs_cannot_be_judged() {
    let mut r = report(0.01, 0.99, CONTROLS);
    r.rounds_figures
        .retain(|f| f.arm != HOLDS_ALL || f.round < 2);
    let j = judge(&plan(None), &run(r));
    assert!(
        j.reason.contains("2 rounds of arm holds-all"),
        "{}",
        j.reason
    );
    for outcome in [
        RunOutcome::Timeout { limit_ms: 5000 },
        RunOutcome::Crashed {
            status: "killed by signal 11".into(),
        },
        RunOutcome::BadOutput {
            problem: "EOF".into(),
        },
        RunOutcome::CannotStart {
            problem: "no such file".into(),
        },
    ] {
        let mut gr = run(report(0.0, 0.99, CONTROLS));
        gr.outcome = outcome;
        let j = judge(&plan(None), &gr);
        assert_eq!(j.verdict, Verdict::CannotJudge);
        assert!(j.figures.is_none());
    }
}

#[test]
fn the_fallback_reads_lost_iterations() {
    let mut r = report(0.0, 0.99, CONTROLS);
    r.instrument = Some(Instrument::Iterations);
    for f in &mut r.rounds_figures {
        f.loss = f.blocked;
        f.blocked = None;
        f.runqueue = None;
    }
    let j = judge(&plan(None), &run(r));
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
    assert!(j.headline.starts_with("lost 0.00"), "{}", j.headline);
    assert!(
        j.confidence.contains("fallback instrument"),
        "{}",
        j.confidence
    );
}

/// Lost iterations with the call alone keeping `cores` busy.
fn lost(call: f64, cores: f64) -> InstrumentReport {
    let mut r = report(call, 0.99, CONTROLS);
    r.instrument = Some(Instrument::Iterations);
    for f in &mut r.rounds_figures {
        f.loss = f.blocked;
        f.blocked = None;
        f.runqueue = None;
    }
    r.alone = Some(AloneFigures {
        calls: 10,
        call_us: 68_000.0,
        cpu_us: 68_000.0 * cores,
    });
    r
}

#[test]
fn lost_iterations_do_not_read_a_hold_from_a_call_that_fills_the_cores() {
    // A matrix product whose BLAS pool keeps two cores busy alone: the
    // spinner lost 0.32, as it would to a held GIL (issue 24: 5 wrong in
    // 19). Cannot judge, never "holds".
    let j = judge(&plan(Some(Expect::Releases)), &run(lost(0.32, 2.0)));
    assert_eq!(j.verdict, Verdict::CannotJudge, "{}", j.reason);
    assert!(
        j.reason.contains("cannot tell a core they took"),
        "{}",
        j.reason
    );
    // A call on one core (the pool capped) that releases the GIL still
    // needs a second core for the spinner, which a shared machine may not
    // have: the same loss is no hold either (14 wrong in 20 at load 7-10).
    let j = judge(&plan(Some(Expect::Releases)), &run(lost(0.32, 0.98)));
    assert_eq!(j.verdict, Verdict::CannotJudge, "{}", j.reason);
    assert!(j.reason.contains("keeps 0.98 cores busy"), "{}", j.reason);
    // Twins: the same loss from a call that mostly waits holding the GIL
    // (a C sleep) is a hold (a fail against `releases`), and a release from
    // the pool-filling call stands (noise only takes iterations away).
    let j = judge(&plan(Some(Expect::Releases)), &run(lost(0.32, 0.05)));
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
    let j = judge(&plan(Some(Expect::Releases)), &run(lost(0.02, 2.0)));
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.reason);
}

#[test]
fn lost_iterations_do_not_read_a_hold_beside_a_library_pool() {
    // On a loaded machine the pool gets less than a core alone (0.2 read
    // here), but its threads are there: still cannot judge.
    let mut r = lost(0.56, 0.2);
    r.native_threads = Some(5);
    r.python_threads = Some(3);
    let j = judge(&plan(Some(Expect::Releases)), &run(r.clone()));
    assert_eq!(j.verdict, Verdict::CannotJudge, "{}", j.reason);
    assert!(
        j.reason.contains("2 thread(s) Python did not start"),
        "{}",
        j.reason
    );
    // Twin: no thread beyond Python's own, the hold stands.
    r.native_threads = Some(3);
    let j = judge(&plan(Some(Expect::Releases)), &run(r));
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.reason);
}

#[test]
fn scale_is_relative_to_one_thread() {
    let s = ScaleReport {
        start_method: "spawn".into(),
        calls_per_worker: 100,
        single_call_us: 300.0,
        reps: 3,
        rows: vec![
            ScaleRow {
                workers: 1,
                threads_calls_per_s: vec![Some(1000.0), Some(1100.0), Some(900.0)],
                processes_calls_per_s: vec![Some(1000.0); 3],
                capacity_calls_per_s: vec![Some(500.0); 3],
                threads_median: None,
                processes_median: None,
                threads_pss_kib: Some(60 * 1024),
                processes_pss_kib: Some(40 * 1024),
            },
            ScaleRow {
                workers: 2,
                threads_calls_per_s: vec![Some(950.0), Some(1045.0), Some(855.0)],
                processes_calls_per_s: vec![Some(1800.0), None, Some(1800.0)],
                capacity_calls_per_s: vec![Some(990.0), Some(960.0), Some(500.0)],
                threads_median: None,
                processes_median: None,
                threads_pss_kib: Some(60 * 1024),
                processes_pss_kib: None,
            },
        ],
    };
    let f = scale_figures(&s);
    // Each rep against its own one-thread figure: 0.95 in every rep.
    assert!((f.lines[1].threads_x.unwrap() - 0.95).abs() < 1e-9);
    // 1800/1000 and 1800/900; the rep without a figure is left out.
    assert!((f.lines[1].processes_x.unwrap() - 1.9).abs() < 1e-9);
    assert_eq!(f.lines[0].threads_x, Some(1.0));
    // Capacity against its own one process: 1.98, 1.92, 1.0.
    assert!((f.lines[1].capacity_x.unwrap() - 1.92).abs() < 1e-9);
    assert!(!crate::probe::gil::render_scale(&f).contains("no free"));
    // PSS in MiB; a count whose processes could not read it has none.
    assert_eq!(f.lines[0].processes_pss_mib, Some(40.0));
    assert_eq!(f.lines[1].processes_pss_mib, None);
    let table = crate::probe::gil::render_scale(&f);
    assert!(
        table.contains("processes PSS") && table.contains("40 MiB") && table.contains("- MiB"),
        "{table}"
    );
    // Its twin: bytecode in two processes no faster than in one.
    let mut busy = s.clone();
    busy.rows[1].capacity_calls_per_s = vec![Some(500.0), Some(480.0), Some(500.0)];
    let f = scale_figures(&busy);
    assert!(f.lines[1].capacity_x.unwrap() < 1.1);
    assert!(crate::probe::gil::render_scale(&f).contains("no free cores"));
}

#[test]
fn a_stage_is_timed_alone_where_the_instrument_timed_it_so() {
    use crate::probe::gil::instrument::AloneFigures;
    use crate::probe::gil::stages::StageInput;
    let mut doc = report(0.02, 0.99, CONTROLS);
    let under_spinner = figures(&plan(None), &doc).unwrap();
    // Twin first: with no alone figures the stage reads the rounds' time.
    let stage = StageInput::from_figures("forward", &under_spinner);
    assert_eq!(stage.call_us, under_spinner.call.call_us);
    doc.alone = Some(AloneFigures {
        calls: 12,
        call_us: 25_000.0,
        cpu_us: 24_000.0,
    });
    let alone = figures(&plan(None), &doc).unwrap();
    let stage = StageInput::from_figures("forward", &alone);
    assert_eq!(stage.call_us, Some(25_000.0));
    assert_eq!(stage.cpu_us, Some(24_000.0));
    assert_ne!(stage.call_us, under_spinner.call.call_us);
}

#[test]
fn a_sampled_probe_with_no_readable_round_is_a_saturated_machine() {
    // Every round of the call had its spinner queued for a core.
    let mut r = report(0.0, 0.99, CONTROLS);
    r.instrument = Some(Instrument::Sampled);
    for f in r.rounds_figures.iter_mut().filter(|f| f.arm == CALL) {
        f.blocked = None;
    }
    let j = judge(&plan(None), &run(r.clone()));
    assert_eq!(j.verdict, Verdict::CannotJudge);
    assert!(
        j.reason.contains("no free core: none of 5 rounds"),
        "{}",
        j.reason
    );
    // Twin: the same document from the schedstat instrument, which marks
    // every round it could read, is a broken instrument.
    r.instrument = Some(Instrument::Schedstat);
    let j = judge(&plan(None), &run(r));
    assert!(j.reason.contains("broken instrument"), "{}", j.reason);
}
