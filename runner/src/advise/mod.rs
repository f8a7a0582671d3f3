//! `runner advise`: the deployment rule (docs/deployment-rule.md) as a command. Two
//! questions, each answered with figures, then one recommendation:
//!
//! 1. **Does the work release the GIL?** With `--call`, the GIL probe's
//!    reading of that call (`gil`); otherwise an E19-style pair on the view
//!    with the scheduler witness (`pair`): one server with two threads, one
//!    request alone then two at once on two kept-alive connections. The
//!    server's runnable parallelism P over each pair reads about 2 when the
//!    two requests ran at once, about 1 when they took turns, and near 0
//!    when the threads were asleep (a view that waits in a syscall).
//! 2. **Is there headroom?** A short sweep over 1, 2 and 4 handler threads
//!    (`headroom`): the cores one request in flight asks for (the server's
//!    on-CPU plus run-queue time at one thread, as cores: the witness's
//!    reading, which a busy machine cannot shrink), the machine's cores,
//!    and the scaling from one thread to two and four.
//!
//! [`decide`] is the rule, a pure function of the two answers: a figure
//! that cannot be had means no recommendation, never a guess. Measuring
//! code never prints; `render` and the command do.

pub mod call;
pub mod command;
pub mod headroom;
pub mod input;
pub mod pair;
pub mod placement;
pub mod render;
pub mod run;

use schemars::JsonSchema;
use serde::Serialize;

/// What question 1 found about the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Work {
    /// Releases the GIL and computes: two requests run at once.
    Releases,
    /// Holds the GIL: two requests take turns.
    Holds,
    /// Waits in a syscall (sleep, socket, database): the threads are asleep,
    /// not on a CPU.
    Waits,
}

impl Work {
    pub fn describe(self) -> &'static str {
        match self {
            Work::Releases => "releases the GIL",
            Work::Holds => "holds the GIL",
            Work::Waits => "waits in a syscall",
        }
    }
}

/// Question 1's answer: the reading and where it came from.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GilAnswer {
    /// None when the reading could not judge (`reason` says why).
    pub work: Option<Work>,
    /// `pair on /work?...` or `gil-probe time:sleep(0.005)`.
    pub source: String,
    /// One line: the figures the answer stands on.
    pub headline: String,
    pub reason: String,
    /// The pair's figures (no `--call`).
    pub pair: Option<pair::PairFigures>,
    /// The GIL probe's figures (`--call`).
    pub call: Option<crate::probe::gil::GilFigures>,
}

/// The one recommendation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Advice {
    /// The work releases and there is headroom: this many handler threads.
    Threads { threads: u32 },
    /// The work holds: one or two threads, and spawned workers.
    Workers { workers: u32 },
    /// The library is already parallel: one request fills the cores.
    Remainder,
    /// The view waits in a syscall: the pool is what it needs.
    Pool,
    /// An `async def` view that blocks the event loop: make it `def`, or
    /// move the blocking call to `asyncio.to_thread` / `run_in_threadpool`.
    /// `then`: the work as measured moved to a thread (question 1 on the
    /// runner's wrapper running the view on a pool thread), which says
    /// whether it would then scale; None when that could not be read.
    ToThread { then: Option<Work> },
    /// An `async def` view that awaits: the loop already overlaps it, and
    /// no pool or thread count changes anything.
    Loop,
}

impl Advice {
    /// The recommendation as the report prints it.
    pub fn line(self) -> String {
        match self {
            Advice::Threads { threads } => format!("threads: {threads}"),
            Advice::Workers { workers } => format!(
                "one or two threads; scale with spawned workers (`workers: {workers}, preload: false`)"
            ),
            Advice::Remainder => "more threads help only up to the remainder".into(),
            Advice::Pool => "the pool is what this view needs".into(),
            Advice::ToThread { then } => format!(
                "to-thread: the view blocks the event loop; make it `def` (or move the blocking call to `asyncio.to_thread` / `run_in_threadpool`); {}",
                match then {
                    Some(Work::Releases) => "moved to a thread it releases the GIL, so it then runs at once across the threadpool (size it with `threads`)",
                    Some(Work::Holds) => "moved to a thread it still holds the GIL: one such request at a time per process, so scale with spawned workers",
                    Some(Work::Waits) => "moved to a thread it waits in a syscall, so the threadpool overlaps it",
                    None => "whether it would then scale could not be read",
                }
            ),
            Advice::Loop => {
                "loop: the view awaits, and the event loop already overlaps it; no pool or thread count changes anything".into()
            }
        }
    }
}

/// One request in flight asking for at least this share of every core
/// counts as the library filling the machine.
pub const FILLS_SHARE: f64 = 0.75;
/// A view whose handler thread, serving back to back, is on a CPU or
/// waiting for one less than this share of the time waits rather than
/// computes.
pub const WAITS_CPU_SHARE: f64 = 0.25;
/// Threads "help" when a setting reaches this share of the best req/s.
pub const NEAR_BEST: f64 = 0.9;
/// Headroom by the CPU must show in the sweep: the best setting at least
/// this many times one thread's req/s, or the figures disagree.
pub const SCALES_AT_LEAST: f64 = 1.2;
/// No headroom by the CPU must show too: two threads at most this many
/// times one thread's req/s.
pub const FLAT_AT_MOST: f64 = 1.5;
/// Where a busy machine kept req/s from scaling, the headroom shows in
/// what the threads asked for instead: the server's group runnable (on a
/// CPU or waiting for one) at least this many times its one-thread
/// demand. Waiting for a core counts, so a neighbour takes req/s away but
/// not this; a holding view's second thread sleeps on the GIL and adds
/// only its wake-ups (E19's at-once bound: the holding control under load
/// read P 1.3-1.5).
pub const DEMAND_SCALES_AT_LEAST: f64 = 1.7;
/// A library that fills the machine, swept beside a neighbour: the
/// one-thread step got at most this share of the CPU it asked for (the
/// rest waited for a core)...
pub const STARVED_SHARE: f64 = 0.75;
/// ...and two threads' req/s rose at most this many times as much as the
/// CPU the server got: the gain is the share a process with more runnable
/// threads takes from the neighbour, not parallelism the library lacked.
pub const GAIN_PER_CPU_AT_MOST: f64 = 1.15;

/// Where one request asks for every core, a req/s gain at two threads that
/// the neighbour's share explains (see [`STARVED_SHARE`]): the one-thread
/// step's CPU as a share of its demand, and the two-thread step's CPU
/// against one thread's. None where it does not explain it, or a figure
/// is missing.
fn neighbours_share(fig: &headroom::HeadroomFigures) -> Option<(f64, f64)> {
    let demand = fig.one_thread_demand();
    let got = fig.one_thread_cpu_pct / 100.0;
    let cpu_two = fig.points.iter().find(|p| p.threads == 2)?.cpu_pct? / 100.0;
    let two = fig.scaling_at(2)?;
    let (share, cpu_gain) = (got / demand, cpu_two / got);
    (demand > 0.0 && got > 0.0 && share <= STARVED_SHARE && two <= GAIN_PER_CPU_AT_MOST * cpu_gain)
        .then_some((share, cpu_gain))
}

/// Whether question 2 is swept again after `sweeps` sweeps: while its
/// figures disagree with question 1's answer, up to
/// [`headroom::SWEEPS_AT_MOST`], or [`headroom::SWEEPS_AT_MOST_FILLS`]
/// where one request already asks for [`FILLS_SHARE`] of the cores (a pool
/// that thrashes beside a neighbour needs more of the machine's moments).
pub fn sweep_again(q1: &GilAnswer, q2: &headroom::Headroom, sweeps: u32) -> bool {
    let Some(fig) = q2.figures.as_ref() else {
        return false;
    };
    let fills = fig.one_thread_demand() >= FILLS_SHARE * fig.cores as f64;
    let at_most = if fills {
        headroom::SWEEPS_AT_MOST_FILLS
    } else {
        headroom::SWEEPS_AT_MOST
    };
    q1.work.is_some() && sweeps < at_most && decide(q1, q2).is_err()
}

/// The rule: the advice and its reason, or why there is none.
pub fn decide(q1: &GilAnswer, q2: &headroom::Headroom) -> Result<(Advice, String), String> {
    let work = q1
        .work
        .ok_or_else(|| format!("question 1 (does the work release the GIL?): {}", q1.reason))?;
    let fig = q2
        .figures
        .as_ref()
        .ok_or_else(|| format!("question 2 (is there headroom?): {}", q2.reason))?;
    let cores = fig.cores as f64;
    // The GIL probe says releases for a call that sleeps too; the sweep's
    // one handler thread, serving back to back, says whether it computes:
    // on a CPU or waiting for one (a busy machine starves a computing
    // thread of CPU, never makes it sleep: beside other work the releasing
    // view's one thread was on a CPU 14% of the time and read as waiting).
    let runnable = fig.one_thread_demand();
    let waits = work == Work::Waits || (work == Work::Releases && runnable < WAITS_CPU_SHARE);
    if waits {
        return Ok((
            Advice::Pool,
            format!(
                "the view waits in a syscall: one request keeps its thread on a CPU or waiting for one {:.0}% of the time, so threads overlap the waits (req/s against one thread: {}); the pool is built for this",
                runnable * 100.0,
                scaling_list(fig)
            ),
        ));
    }
    if work == Work::Holds {
        if fig.scaling_at(2).is_some_and(|s| s > FLAT_AT_MOST) {
            return Err(format!(
                "the figures disagree: the pair read the work as holding the GIL, yet two threads gave {}x req/s; run it again on a quieter machine",
                fmt_x(fig.scaling_at(2))
            ));
        }
        return Ok((
            Advice::Workers {
                workers: fig.cores as u32,
            },
            format!(
                "the work holds the GIL: one process is one request at a time (req/s against one thread: {}), so more threads buy isolation only; {} cores, so {} spawned workers (preload off: each imports the app itself)",
                scaling_list(fig),
                fig.cores,
                fig.cores
            ),
        ));
    }
    let demand = fig.one_thread_demand();
    let two = fig.scaling_at(2);
    if demand >= FILLS_SHARE * cores {
        // Beside a neighbour a process with more runnable threads takes a
        // larger share of the cores, so req/s rises with threads even for
        // a library that asks for every core (measured beside a looping
        // `cargo build -j2`: one request asked for 2.00 of 2 cores and got
        // 0.96, two threads got 1.85 and 1.81x req/s).
        let neighbour = two
            .is_some_and(|s| s > FLAT_AT_MOST)
            .then(|| neighbours_share(fig));
        if let Some(Some((share, cpu_gain))) = neighbour {
            return Ok((
                Advice::Remainder,
                format!(
                    "the work releases the GIL, but the library is already parallel: one request in flight asks for {demand:.2} of {} cores; it got {:.0}% of that at one thread, as something else was using the machine, and two threads' {}x req/s is the {cpu_gain:.2}x CPU they took from it, not room the library left: on a machine of its own more threads only overlap what is left",
                    fig.cores,
                    share * 100.0,
                    fmt_x(two)
                ),
            ));
        }
        if neighbour.is_some() {
            return Err(format!(
                "the figures disagree: one request already asks for {demand:.2} of {} cores, yet two threads gave {}x req/s; run it again on a quieter machine",
                fig.cores,
                fmt_x(two)
            ));
        }
        return Ok((
            Advice::Remainder,
            format!(
                "the work releases the GIL, but the library is already parallel: one request in flight asks for {demand:.2} of {} cores ({:.0}% CPU at one thread), so more threads only overlap what is left ({}x req/s at 2 threads)",
                fig.cores,
                fig.one_thread_cpu_pct,
                fmt_x(two)
            ),
        ));
    }
    if fig.best_scaling().is_none_or(|s| s < SCALES_AT_LEAST) {
        // The pair said releases; what the threads asked for says whether
        // they could have used the cores the neighbour took (measured
        // beside two burst loads: 1.19x req/s at best for the fixture's
        // releasing view, whose pair ran on two CPUs at once).
        let asked = fig.points.iter().filter(|p| p.threads > 1).find_map(|p| {
            fig.demand_at(p.threads)
                .filter(|d| demand > 0.0 && *d >= DEMAND_SCALES_AT_LEAST * demand)
                .map(|d| (p.threads, d))
        });
        if let Some((threads, d)) = asked {
            return Ok((
                Advice::Threads { threads },
                format!(
                    "the work releases the GIL and there is headroom: one request asks for {demand:.2} of {} cores, and {threads} threads asked for {d:.2} (on a CPU or waiting for one); req/s scaled only {}x, as something else was using the machine, which takes req/s away but not what the threads ask for",
                    fig.cores,
                    fmt_x(fig.best_scaling())
                ),
            ));
        }
        return Err(format!(
            "the figures disagree: one request asks for {demand:.2} of {} cores, yet more threads gave at best {}x req/s (the machine may have been busy); run it again",
            fig.cores,
            fmt_x(fig.best_scaling())
        ));
    }
    let threads = fig.enough_threads();
    Ok((
        Advice::Threads { threads },
        format!(
            "the work releases the GIL and there is headroom: one request asks for {demand:.2} of {} cores, and {threads} threads reach {}x req/s (within {:.0}% of the best swept)",
            fig.cores,
            fmt_x(fig.scaling_at(threads)),
            (1.0 - NEAR_BEST) * 100.0
        ),
    ))
}

/// `1.02x at 2 threads, 0.98x at 4 threads`: every point past one thread.
fn scaling_list(fig: &headroom::HeadroomFigures) -> String {
    let parts: Vec<String> = fig
        .points
        .iter()
        .filter(|p| p.threads > 1)
        .map(|p| format!("{:.2}x at {} threads", p.scaling, p.threads))
        .collect();
    if parts.is_empty() {
        "one thread only swept".into()
    } else {
        parts.join(", ")
    }
}

fn fmt_x(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// The rule for an ASGI view: where it runs first, then, for a view in the
/// threadpool, [`decide`] as for WSGI.
pub fn decide_asgi(
    placement: &placement::Placement,
    q1: &GilAnswer,
    q2: &headroom::Headroom,
) -> Result<(Advice, String), String> {
    match placement.place {
        None => Err(format!(
            "where the view runs (event loop or threadpool): {}",
            placement.reason
        )),
        Some(placement::Place::Pool) => decide(q1, q2),
        Some(placement::Place::LoopAwaits) => Ok((Advice::Loop, placement.reason.clone())),
        Some(placement::Place::LoopBlocks) => Ok((
            Advice::ToThread { then: q1.work },
            format!(
                "{}; moved to a thread (the wrapper ran it on a pool thread): {}",
                placement.reason,
                match q1.work {
                    Some(w) => format!("it {} ({})", w.describe(), q1.reason),
                    None => format!("cannot tell ({})", q1.reason),
                }
            ),
        )),
    }
}

/// The `--json` document and what the terminal report prints.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AdviceReport {
    pub server: String,
    pub app: String,
    pub path: String,
    /// ASGI only: where the view runs (event loop or threadpool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<placement::Placement>,
    pub question1: GilAnswer,
    pub question2: headroom::Headroom,
    /// None: a figure could not be had, and `reason` says which.
    pub advice: Option<Advice>,
    /// The advice as a line (`threads: 2`), where there is one.
    pub recommendation: Option<String>,
    pub reason: String,
    pub elapsed_s: f64,
}

impl AdviceReport {
    /// Judges the two answers by [`decide`].
    pub fn new(
        server: String,
        app: String,
        path: String,
        question1: GilAnswer,
        question2: headroom::Headroom,
        elapsed_s: f64,
    ) -> Self {
        Self::judged(server, app, path, None, question1, question2, elapsed_s)
    }

    /// An ASGI view's report: [`decide_asgi`] with where it runs.
    pub fn asgi(
        server: String,
        app: String,
        path: String,
        placement: placement::Placement,
        question1: GilAnswer,
        question2: headroom::Headroom,
        elapsed_s: f64,
    ) -> Self {
        Self::judged(
            server,
            app,
            path,
            Some(placement),
            question1,
            question2,
            elapsed_s,
        )
    }

    fn judged(
        server: String,
        app: String,
        path: String,
        placement: Option<placement::Placement>,
        question1: GilAnswer,
        question2: headroom::Headroom,
        elapsed_s: f64,
    ) -> Self {
        let judged = match &placement {
            Some(p) => decide_asgi(p, &question1, &question2),
            None => decide(&question1, &question2),
        };
        let (advice, reason) = match judged {
            Ok((a, r)) => (Some(a), r),
            Err(r) => (None, r),
        };
        Self {
            server,
            app,
            path,
            placement,
            question1,
            question2,
            recommendation: advice.map(Advice::line),
            advice,
            reason,
            elapsed_s,
        }
    }
}

/// The JSON Schema of the `--json` document.
pub fn report_schema() -> String {
    let schema = schemars::schema_for!(AdviceReport);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::headroom::{Headroom, HeadroomFigures, Point};
    use super::*;

    fn q1(work: Option<Work>) -> GilAnswer {
        GilAnswer {
            work,
            source: "test".into(),
            headline: String::new(),
            reason: "the pair's P read 1.5, between the bands".into(),
            pair: None,
            call: None,
        }
    }

    /// A sweep on 2 cores: CPU and run-queue % at one thread, req/s per threads.
    fn q2(cpu: f64, rq: f64, rps: &[(u32, f64)]) -> Headroom {
        let base = rps[0].1;
        Headroom {
            figures: Some(HeadroomFigures {
                cores: 2,
                one_thread_cpu_pct: cpu,
                one_thread_run_queue_pct: rq,
                points: rps
                    .iter()
                    .map(|&(threads, r)| Point {
                        threads,
                        requests_per_s: r,
                        scaling: r / base,
                        cpu_pct: None,
                        run_queue_pct: None,
                        window_s: 1.5,
                        warmup_s: None,
                        threads_reached: None,
                    })
                    .collect(),
                sweeps: 1,
            }),
            reason: String::new(),
        }
    }

    #[test]
    fn a_library_that_fills_the_machine_is_swept_up_to_six_times_while_it_disagrees() {
        let releases = q1(Some(Work::Releases));
        // Beside two burst loads: one request asked for 2.0 of 2 cores, the
        // one-thread step thrashed (3.3 req/s), two threads gave 4.0x.
        let thrashed = q2(101.0, 99.0, &[(1, 3.3), (2, 13.3), (4, 12.0)]);
        assert!(decide(&releases, &thrashed).is_err());
        assert!(sweep_again(&releases, &thrashed, 3));
        assert!(sweep_again(&releases, &thrashed, 5));
        // Twin: the sixth sweep is the last.
        assert!(!sweep_again(&releases, &thrashed, 6));
        // Twin: a view that does not fill the machine stops at three.
        let one_core = q2(60.0, 20.0, &[(1, 10.0), (2, 10.5), (4, 10.2)]);
        assert!(decide(&releases, &one_core).is_err());
        assert!(sweep_again(&releases, &one_core, 2));
        assert!(!sweep_again(&releases, &one_core, 3));
        // Twin: figures that agree end it at once, and so does a question
        // 1 with no answer or a sweep with no figures.
        let agrees = q2(128.0, 74.0, &[(1, 25.0), (2, 16.0), (4, 15.0)]);
        assert!(decide(&releases, &agrees).is_ok());
        assert!(!sweep_again(&releases, &agrees, 1));
        assert!(!sweep_again(&q1(None), &thrashed, 1));
        let none = Headroom {
            figures: None,
            reason: "the server did not start".into(),
        };
        assert!(!sweep_again(&releases, &none, 1));
    }

    fn placed(place: Option<placement::Place>) -> placement::Placement {
        placement::Placement {
            place,
            headline: String::new(),
            reason: "measured".into(),
            trials: Vec::new(),
        }
    }

    #[test]
    fn the_two_asgi_kinds_and_the_pool_as_wsgi() {
        use placement::Place;
        let none = Headroom {
            figures: None,
            reason: "not asked".into(),
        };
        let (a, _) = decide_asgi(&placed(Some(Place::LoopAwaits)), &q1(None), &none).unwrap();
        assert_eq!(a, Advice::Loop);
        let (a, why) = decide_asgi(
            &placed(Some(Place::LoopBlocks)),
            &q1(Some(Work::Holds)),
            &none,
        )
        .unwrap();
        assert_eq!(
            a,
            Advice::ToThread {
                then: Some(Work::Holds)
            }
        );
        assert!(a.line().contains("spawned workers"), "{}", a.line());
        assert!(why.contains("holds the GIL"), "{why}");
        // The blocking is established even when the moved view reads
        // nothing: to-thread, saying so.
        let (a, _) = decide_asgi(&placed(Some(Place::LoopBlocks)), &q1(None), &none).unwrap();
        assert_eq!(a, Advice::ToThread { then: None });
        // A def view gets WSGI's answers.
        let (a, _) = decide_asgi(
            &placed(Some(Place::Pool)),
            &q1(Some(Work::Holds)),
            &q2(95.0, 5.0, FLAT),
        )
        .unwrap();
        assert_eq!(a, Advice::Workers { workers: 2 });
        // The twin: no placement, no advice, whatever the questions say.
        let e =
            decide_asgi(&placed(None), &q1(Some(Work::Holds)), &q2(95.0, 5.0, FLAT)).unwrap_err();
        assert!(e.contains("where the view runs"), "{e}");
    }

    const RELEASE: &[(u32, f64)] = &[(1, 160.0), (2, 390.0), (4, 380.0)];
    const FLAT: &[(u32, f64)] = &[(1, 180.0), (2, 185.0), (4, 178.0)];
    const SLEEP: &[(u32, f64)] = &[(1, 19.0), (2, 38.0), (4, 76.0)];

    #[test]
    fn the_four_advices() {
        let threads = decide(&q1(Some(Work::Releases)), &q2(85.0, 20.0, RELEASE)).unwrap();
        assert_eq!(threads.0, Advice::Threads { threads: 2 });
        let workers = decide(&q1(Some(Work::Holds)), &q2(95.0, 5.0, FLAT)).unwrap();
        assert_eq!(workers.0, Advice::Workers { workers: 2 });
        let remainder = decide(&q1(Some(Work::Releases)), &q2(185.0, 20.0, FLAT)).unwrap();
        assert_eq!(remainder.0, Advice::Remainder);
        let pool = decide(&q1(Some(Work::Waits)), &q2(3.0, 0.0, SLEEP)).unwrap();
        assert_eq!(pool.0, Advice::Pool);
        // A call that sleeps reads "releases"; the sweep's CPU says it waits.
        let pool = decide(&q1(Some(Work::Releases)), &q2(3.0, 0.0, SLEEP)).unwrap();
        assert_eq!(pool.0, Advice::Pool);
        assert!(pool.1.contains("3%"), "{}", pool.1);
        // The twin: releasing work on a saturated machine, 20% on a CPU and
        // 80% waiting for one, computes: never the pool (measured: a
        // FastAPI def view hashing read pool once on a loaded VM).
        let busy = decide(&q1(Some(Work::Releases)), &q2(20.0, 80.0, RELEASE)).unwrap();
        assert_eq!(busy.0, Advice::Threads { threads: 2 }, "{}", busy.1);
    }

    #[test]
    fn the_wording_names_each_point_past_one_thread() {
        // Best at one thread: the old wording said "from 1 to 1 threads".
        let flat_best_at_one: &[(u32, f64)] = &[(1, 180.0), (2, 170.0), (4, 160.0)];
        let (_, why) = decide(&q1(Some(Work::Holds)), &q2(95.0, 5.0, flat_best_at_one)).unwrap();
        assert!(
            why.contains("0.94x at 2 threads, 0.89x at 4 threads"),
            "{why}"
        );
        assert!(!why.contains("from 1 to 1"), "{why}");
        // The twin: a sweep of one thread only says so, never "1 to 1".
        let mut one = q2(95.0, 5.0, &[(1, 180.0)]);
        if let Some(f) = one.figures.as_mut() {
            assert_eq!(scaling_list(f), "one thread only swept");
            f.points.push(Point {
                threads: 2,
                requests_per_s: 90.0,
                scaling: 0.5,
                cpu_pct: None,
                run_queue_pct: None,
                window_s: 1.5,
                warmup_s: None,
                threads_reached: None,
            });
            assert_eq!(scaling_list(f), "0.50x at 2 threads");
        }
    }

    /// The sweep beside a looping `cargo build -j2` (advise on the
    /// fixture's `/work?mode=split&kib=8192`): one thread on a CPU 96% and
    /// waiting for one 104%; two threads on a CPU `cpu_two`%, `two`x req/s.
    fn beside_a_build(cpu_one: f64, cpu_two: f64, two: f64) -> Headroom {
        let mut h = q2(
            cpu_one,
            200.0 - cpu_one,
            &[(1, 10.0), (2, 10.0 * two), (4, 20.0)],
        );
        if let Some(f) = h.figures.as_mut() {
            f.points[0].cpu_pct = Some(cpu_one);
            f.points[1].cpu_pct = Some(cpu_two);
        }
        h
    }

    #[test]
    fn a_library_that_fills_the_machine_keeps_its_advice_beside_a_neighbour() {
        let releases = q1(Some(Work::Releases));
        let (a, why) = decide(&releases, &beside_a_build(96.0, 185.0, 1.81)).unwrap();
        assert_eq!(a, Advice::Remainder, "{why}");
        assert!(
            why.contains("got 48% of that") && why.contains("1.93x CPU"),
            "{why}"
        );
        // Twin: the one-thread step got what it asked for (a quiet
        // machine), so two threads' gain contradicts the demand.
        let e = decide(&releases, &beside_a_build(190.0, 195.0, 1.81)).unwrap_err();
        assert!(e.contains("figures disagree"), "{e}");
        // Twin: req/s rose far more than the CPU did; the neighbour's
        // share does not explain it.
        let e = decide(&releases, &beside_a_build(96.0, 120.0, 1.81)).unwrap_err();
        assert!(e.contains("figures disagree"), "{e}");
        // Twin: no CPU figure at two threads, no explanation.
        let mut h = beside_a_build(96.0, 185.0, 1.81);
        if let Some(f) = h.figures.as_mut() {
            f.points[1].cpu_pct = None;
        }
        assert!(decide(&releases, &h).is_err());
    }

    #[test]
    fn a_missing_or_contradicting_figure_gives_no_advice() {
        let e = decide(&q1(None), &q2(85.0, 20.0, RELEASE)).unwrap_err();
        assert!(
            e.starts_with("question 1") && e.contains("between the bands"),
            "{e}"
        );
        let none = Headroom {
            figures: None,
            reason: "no scheduler accounting".into(),
        };
        let e = decide(&q1(Some(Work::Holds)), &none).unwrap_err();
        assert!(
            e.starts_with("question 2") && e.contains("no scheduler"),
            "{e}"
        );
        // Headroom by the CPU, but no scaling: the machine was busy.
        let e = decide(&q1(Some(Work::Releases)), &q2(85.0, 20.0, FLAT)).unwrap_err();
        assert!(e.contains("disagree"), "{e}");
        // Holding by the pair, yet two threads doubled.
        let e = decide(&q1(Some(Work::Holds)), &q2(95.0, 5.0, RELEASE)).unwrap_err();
        assert!(e.contains("disagree"), "{e}");
        // Full by the CPU, yet two threads doubled.
        let e = decide(&q1(Some(Work::Releases)), &q2(185.0, 0.0, RELEASE)).unwrap_err();
        assert!(e.contains("disagree"), "{e}");
    }

    #[test]
    fn the_schema_names_the_advice() {
        let s = report_schema();
        assert!(s.contains("AdviceReport") && s.contains("remainder"), "{s}");
    }

    #[test]
    fn sweeps_that_disagree_are_read_by_their_least_touched_figures() {
        // An already parallel view (one request asks for 1.9 of 2 cores):
        // the first sweep's one thread met a burst (1.63x at two threads),
        // the second's did not.
        let q1 = GilAnswer {
            work: Some(Work::Releases),
            source: String::new(),
            headline: String::new(),
            reason: String::new(),
            pair: None,
            call: None,
        };
        let noisy = q2(150.0, 40.0, &[(1, 30.0), (2, 49.0), (4, 50.0)]);
        let quiet = q2(160.0, 30.0, &[(1, 48.0), (2, 50.0), (4, 49.0)]);
        assert!(decide(&q1, &noisy)
            .unwrap_err()
            .contains("figures disagree"));
        let both = headroom::least_touched(&[
            noisy.figures.clone().unwrap(),
            quiet.figures.clone().unwrap(),
        ]);
        assert_eq!(both.sweeps, 2);
        assert_eq!(both.points[0].requests_per_s, 48.0);
        assert!((both.scaling_at(2).unwrap() - 50.0 / 48.0).abs() < 1e-9);
        assert_eq!(both.one_thread_run_queue_pct, 30.0);
        let h = Headroom {
            figures: Some(both),
            reason: String::new(),
        };
        assert_eq!(decide(&q1, &h).unwrap().0, Advice::Remainder);
        // Its twin: two sweeps that both read 1.63x still disagree.
        let again =
            headroom::least_touched(&[noisy.figures.clone().unwrap(), noisy.figures.unwrap()]);
        let h = Headroom {
            figures: Some(again),
            reason: String::new(),
        };
        assert!(decide(&q1, &h).unwrap_err().contains("figures disagree"));
    }

    #[test]
    fn headroom_a_busy_machine_hid_from_req_s_shows_in_what_the_threads_asked_for() {
        let releases = q1(Some(Work::Releases));
        let with_demand = |at_two: (f64, f64)| {
            let mut h = q2(95.0, 7.0, &[(1, 40.0), (2, 47.6), (4, 46.0)]);
            let fig = h.figures.as_mut().unwrap();
            fig.points[1].cpu_pct = Some(at_two.0);
            fig.points[1].run_queue_pct = Some(at_two.1);
            h
        };
        // Beside two burst loads: 1.19x req/s, but two threads were
        // runnable on 1.85 cores against one thread's 1.02.
        let (advice, reason) = decide(&releases, &with_demand((120.0, 65.0))).unwrap();
        assert_eq!(advice, Advice::Threads { threads: 2 }, "{reason}");
        assert!(reason.contains("asked for 1.85"), "{reason}");
        // Twin: a second thread that asked for little more than one core
        // (a GIL waiter's wake-ups) is no headroom: the figures disagree.
        let err = decide(&releases, &with_demand((100.0, 30.0))).unwrap_err();
        assert!(err.contains("figures disagree"), "{err}");
        // Twin: with no CPU figures at all, the req/s rule stands alone.
        let err = decide(&releases, &q2(95.0, 7.0, &[(1, 40.0), (2, 47.6)])).unwrap_err();
        assert!(err.contains("figures disagree"), "{err}");
    }

    #[test]
    fn a_computing_thread_starved_of_cpu_is_not_read_as_waiting() {
        let releases = GilAnswer {
            work: Some(Work::Releases),
            source: String::new(),
            headline: String::new(),
            reason: String::new(),
            pair: None,
            call: None,
        };
        // Beside other work: on a CPU 14% of the time, queued for one 70%.
        let busy = q2(14.0, 70.0, &[(1, 10.0), (2, 15.2), (4, 23.5)]);
        let (advice, reason) = decide(&releases, &busy).unwrap();
        assert_eq!(advice, Advice::Threads { threads: 4 }, "{reason}");
        // Its twin: a thread that sleeps is neither on a CPU nor queued.
        let sleeps = q2(10.0, 2.0, &[(1, 10.0), (2, 19.0), (4, 37.0)]);
        let (advice, reason) = decide(&releases, &sleeps).unwrap();
        assert_eq!(advice, Advice::Pool, "{reason}");
        assert!(reason.contains("12% of the time"), "{reason}");
    }
}
