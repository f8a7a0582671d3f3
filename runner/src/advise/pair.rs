//! Question 1 without `--call`: an E19-style pair on the view, measured by
//! the pair-ratio probe's own engine (`probe::pair_ratio::measure`): one
//! server with two handler threads, one request alone then two at once on
//! two kept-alive connections, interleaved trials, every `/work` digest
//! checked, and every pair bracketed by the scheduler witness.
//!
//! The engine's control mode is the fixture's holding work
//! (`/work?mode=hold`, on the same server when the app is the fixture, else
//! on a fixture server of its own), interleaved with the view trial by
//! trial: it proves, in the same minutes, that the witness can still tell
//! turns from parallel on this machine (under heavy load a holding view's
//! waiter queues for a core at each of its 5 ms wake-ups, and its P
//! creeps up). The reading is the witness's, never the clock's, and a gap
//! against that control: the runnable parallelism P of the server's
//! whole process group over each pair (on-CPU plus run-queue time, over
//! wall) reads about 2 when the two requests computed at once (more when
//! the library runs threads of its own), about 1 when they took turns
//! behind the GIL (waiting for a lock is sleep), and near 0 when both
//! threads slept in a syscall. Waiting for a core counts as runnable, so a
//! busy machine cannot turn one reading into another. The wall ratio is
//! reported beside it, not judged: a library that already fills the cores
//! reads 2.0x by the clock and still releases the GIL.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use super::{GilAnswer, Work};
use crate::host::limits::Limits;
use crate::host::machine_lock::MachineLock;
use crate::kernel::control::CapacityControl;
use crate::kernel::witness::Witness;
use crate::probe::pair_ratio::measure::{self, is_work_route, PairRatioRun};
use crate::probe::pair_ratio::PairRatioPlan;
use crate::server::pool::{PoolSpec, ServerPool};
use crate::spec::{Bound, Mode, Profile, ServerSettings, Trials};
use crate::stats::{ratio_of_minima, Spread};

/// Trials: at least 5 (each one pair of the view and one of the control),
/// then one more at a time while the reading stands between its bands, up
/// to 15, as E19 does; still between after that: no answer.
pub const TRIALS: u32 = 5;
pub const TRIALS_MAX: u32 = 15;
/// Handler threads of the pair's server: two, never four.
pub const THREADS: u32 = 2;
/// P at least this, and [`GAP_AT_LEAST`] over the holding control: the two
/// requests computed at once for most of the pair. Below E19's 1.7: the
/// fixture's releasing view takes the GIL back after every 64 KiB buffer,
/// and on this VM (where waking an idle vCPU takes tens of microseconds)
/// convoys at those acquires read P 1.6-1.75 in one quiet run of three at
/// 24 MiB. Enough to rule out taking turns (a holding view reads within
/// [`HOLDS_WITHIN`] of the control, about 1.0); the threads advice also
/// needs the sweep to scale (`SCALES_AT_LEAST`).
pub const RELEASES_AT_LEAST: f64 = 1.5;
/// The holding control must read at most this, or the witness cannot tell
/// turns from parallel here (E19's `parallelism_at_most`).
pub const CONTROL_AT_MOST: f64 = 1.6;
/// A releasing view stands at least this far over the control.
pub const GAP_AT_LEAST: f64 = 0.5;
/// A holding view stands at most this far over the control.
pub const HOLDS_WITHIN: f64 = 0.25;
/// Σ on-CPU over the pair's wall at least this: the two requests were on
/// two CPUs at once. Noise only takes CPU away, so it cannot fake this
/// reading (quiet here: releasing 1.40, the holding control 0.98). It
/// falls silent rather than wrong under load: with one spinning process in
/// another session, the server's autogroup got one core's share and both
/// read 0.97, and the runnable P's rules below decide.
pub const ON_CPU_PROVES: f64 = 1.3;
/// ... provided the holding control's Σ on-CPU stays at most this: the GIL
/// bound (one thread on a CPU at a time) holds on this machine, so the
/// figure can fail (rule 4).
pub const GIL_ON_CPU_AT_MOST: f64 = 1.1;
/// The control's route (the fixture's holding work).
pub const CONTROL_PATH: &str = "/work?mode=hold";
/// P under this: the threads were asleep, not computing.
pub const WAITS_BELOW: f64 = 0.5;
/// KiB of work a pair of the fixture's `/work` times at least, and the
/// holding control's work: E19's 24 MiB, about 18 ms here. At 8 MiB (about
/// 5 ms, the length of one GIL switch interval and of a scheduler slice) a
/// releasing pair read P 1.3-1.6 in one quiet run of five, each thread
/// waiting at its next GIL acquire whenever the other was preempted while
/// holding it; whether the work releases does not change with its length.
const PAIR_KIB: u32 = 24576;

/// What the pair measured.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PairFigures {
    pub path: String,
    pub threads: u32,
    /// How the view's serving threads were known: named by the replies'
    /// `X-Thread-Id` (the fixture), or inferred as the two tasks of the
    /// server's group runnable longest over each pair (an app of your own).
    pub serving_threads: String,
    /// Pairs whose two requests were served by two threads and read by
    /// the witness: the ones the answer stands on.
    pub pairs: usize,
    pub pairs_measured: usize,
    /// Runnable parallelism of the serving threads per pair (E19's figure).
    pub parallelism: Spread,
    /// The same over the server's whole process group: a library's own
    /// threads count here (the serving threads only wait for them).
    pub group_parallelism: Spread,
    /// Σ on-CPU of the serving threads over each pair's wall: above 1 only
    /// when they ran on two CPUs at once.
    pub on_cpu_parallelism: Spread,
    /// The same over the whole group.
    pub group_on_cpu_parallelism: Spread,
    pub control_on_cpu_parallelism: Spread,
    pub control_group_on_cpu_parallelism: Spread,
    /// The serving threads' P for the holding control's pairs.
    pub control_parallelism: Spread,
    pub control_group_parallelism: Spread,
    /// The view's serving P with every blocked moment that other tasks'
    /// run-queue waits could explain counted as runnable (a lock holder or
    /// the server's I/O thread kept off a core): the most noise could have
    /// hidden. "Holds" must stand on this figure too.
    pub unconvoyed: Spread,
    /// The same figure for the holding control's pairs: what the convoys of
    /// this machine, now, add to work that is known to take turns. The
    /// view's unconvoyed P is read against this, never against the
    /// control's plain P (the server's own I/O threads wait for a core
    /// while a serving thread waits for the GIL, even on a quiet machine).
    pub control_unconvoyed: Spread,
    pub control_pairs: usize,
    /// The serving threads' on-CPU time as a share of the pair's wall
    /// (each thread's share, averaged): near 1 computing, near 0 asleep.
    pub serving_on_cpu: Spread,
    /// The serving threads' blocked share (neither running nor waiting for
    /// a core: the GIL, a lock, a join, a syscall).
    pub serving_blocked: Spread,
    /// min(pair) / min(single), by the clock: reported, not judged.
    pub wall_ratio: Option<f64>,
    pub single_ms: Option<Spread>,
    /// The no-server control's min(pair) / min(single): about 1.0 with a
    /// free core.
    pub capacity: Option<f64>,
}

/// Where and what to pair.
pub struct PairSpec<'a> {
    pub profile: &'a Profile,
    pub python: &'a Path,
    pub app: &'a str,
    pub app_dir: &'a Path,
    /// Whether the app is the fixture (the control then shares its server).
    pub fixture: bool,
    /// fixtures/bareapp, for the capacity control and the holding control.
    pub fixture_dir: &'a Path,
    pub logs_dir: &'a Path,
    pub lock_path: &'a Path,
    pub limits: Limits,
    /// The view, as given (`/work?mode=release&kib=8192`, `/slow?ms=50`).
    pub path: &'a str,
    /// Where the user's server is polled for readiness; None: the
    /// profile's `ready.path`.
    pub ready_path: Option<&'a str>,
}

/// `/work?mode=release&kib=8192` as the engine takes it: the path without
/// `kib`, and the KiB (the engine adds `kib` and a fresh seed itself).
pub fn split_kib(path: &str) -> (String, Option<u32>) {
    let Some((route, query)) = path.split_once('?') else {
        return (path.to_string(), None);
    };
    let mut kib = None;
    let rest: Vec<&str> = query
        .split('&')
        .filter(|kv| match kv.strip_prefix("kib=") {
            Some(v) => {
                kib = v.parse().ok();
                false
            }
            None => true,
        })
        .collect();
    if rest.is_empty() {
        (route.to_string(), kib)
    } else {
        (format!("{route}?{}", rest.join("&")), kib)
    }
}

/// KiB of `/work` each request of the pair hashes: the view's own when it
/// asks for more, else [`PAIR_KIB`] (also the holding control's work).
pub fn pair_kib(path: &str) -> u32 {
    match split_kib(path) {
        (route, kib) if is_work_route(&route) => kib.unwrap_or(PAIR_KIB).max(PAIR_KIB),
        _ => PAIR_KIB,
    }
}

/// Measures and reads question 1 for the view.
pub async fn measure(spec: &PairSpec<'_>) -> GilAnswer {
    let (route, _) = split_kib(spec.path);
    let source = if is_work_route(&route) {
        format!(
            "pair on {route} ({THREADS} threads, {} KiB a request)",
            pair_kib(spec.path)
        )
    } else {
        format!("pair on {} ({THREADS} threads)", spec.path)
    };
    let answer = |work: Option<Work>, headline: String, reason: String, pair| GilAnswer {
        work,
        source: source.clone(),
        headline,
        reason,
        pair,
        call: None,
    };
    let lock = match MachineLock::acquire(spec.lock_path, spec.limits.machine_wait).await {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            return answer(
                None,
                String::new(),
                format!(
                "another gate or sweep held {} for {} s; wait for it, or raise --machine-wait-ms",
                spec.lock_path.display(),
                spec.limits.machine_wait.as_secs()
            ),
                None,
            )
        }
        Err(e) => {
            return answer(
                None,
                String::new(),
                format!("cannot lock {}: {e}", spec.lock_path.display()),
                None,
            )
        }
    };
    let run = run_pair(spec).await;
    drop(lock);
    let run = match run {
        Ok(run) => run,
        Err(reason) => return answer(None, String::new(), reason, None),
    };
    let (work, headline, reason, figures) = read(spec.path, !spec.fixture, &run);
    answer(work, headline, reason, figures)
}

async fn run_pair(spec: &PairSpec<'_>) -> Result<PairRatioRun, String> {
    let (path, _) = split_kib(spec.path);
    let server = ServerSettings {
        threads: Some(THREADS),
        ..Default::default()
    };
    let mode = |name: &str, path: &str| Mode {
        name: name.into(),
        path: path.into(),
        server: server.clone(),
        bound: Bound::AtMost(1.35),
        witness_bound: None,
    };
    let plan = PairRatioPlan {
        work_kib: pair_kib(spec.path),
        warmup: 1,
        under_test: mode("view", &path),
        control: mode("holding control", CONTROL_PATH),
        gap_at_least: 0.5,
        capacity_at_most: 1.3,
        margin: 0.1,
        connections_at_most: 2,
        fail_confirm_factor: 1,
        serialised_at_most: None,
        free_core_trials: 5,
        infer_serving_threads: true,
    };
    let mut pool = ServerPool::new(PoolSpec {
        row_id: "advise".into(),
        profile: spec.profile.clone(),
        python: spec.python.to_path_buf(),
        app: spec.app.into(),
        app_dir: spec.app_dir.to_path_buf(),
        logs_dir: spec.logs_dir.to_path_buf(),
        ready_path: spec.ready_path.map(str::to_string),
    });
    let mut fixture_pool = (!spec.fixture).then(|| {
        ServerPool::new(PoolSpec {
            row_id: "advise.control".into(),
            profile: spec.profile.clone(),
            python: spec.python.to_path_buf(),
            app: crate::sweep::options::FIXTURE_APP.into(),
            app_dir: spec.fixture_dir.to_path_buf(),
            logs_dir: spec.logs_dir.to_path_buf(),
            ready_path: None,
        })
    });
    let control = CapacityControl::start(spec.python, spec.fixture_dir);
    let target = pool.get(&server, &mut |_| {}).await;
    let control_target = match (&target, fixture_pool.as_mut()) {
        (Ok(_), Some(p)) => p.get(&server, &mut |_| {}).await,
        (t, _) => t.clone(),
    };
    let result = match (target, control_target, control) {
        (Err(stop), _, _) | (_, Err(stop), _) => Err(stop.reason),
        (_, _, Err(e)) => Err(e.to_string()),
        (Ok(target), Ok(control_target), Ok(mut control)) => {
            let trials = Trials {
                min: TRIALS,
                max: TRIALS_MAX,
            };
            Ok(measure::run(
                [target, control_target],
                &plan,
                trials,
                &mut control,
                spec.limits,
                &|run| read(spec.path, !spec.fixture, run).0.is_some(),
                &mut |_| {},
            )
            .await)
        }
    };
    if let Some(p) = fixture_pool.as_mut() {
        p.stop_all();
    }
    let (_, exited) = pool.stop_all();
    if let Some(status) = exited {
        return Err(format!("the server exited during the pair ({status})"));
    }
    result
}

/// The pairs that say something: served by two threads, read whole.
fn usable(witnesses: &[Option<Witness>]) -> Vec<&Witness> {
    // A pair served by one thread reads about 1 however the view behaves.
    witnesses
        .iter()
        .flatten()
        .filter(|w| w.threads.len() == 2 && w.unseen.is_empty() && w.wall_ns > 0)
        .collect()
}

/// The answer from a run: (work, headline, reason, figures).
/// `inferred`: the app does not name the thread that served a reply, so
/// the engine took the two busiest tasks of the group as the serving ones.
pub fn read(
    path: &str,
    inferred: bool,
    run: &PairRatioRun,
) -> (Option<Work>, String, String, Option<PairFigures>) {
    if let Some(broken) = &run.broken {
        return (
            None,
            String::new(),
            format!("the pair broke: {broken}"),
            None,
        );
    }
    if let Some(why) = &run.witness_unavailable {
        return (
            None,
            String::new(),
            format!(
                "no scheduler witness, and the clock alone cannot tell the four cases apart: {why}"
            ),
            None,
        );
    }
    let view = usable(&run.under_test.witness);
    let control = usable(&run.control.witness);
    let share = |w: &Witness, f: &dyn Fn(&crate::kernel::witness::ThreadFigures) -> u64| {
        let sum: u64 = w.threads.iter().map(f).sum();
        sum as f64 / (w.threads.len() as f64 * w.wall_ns as f64)
    };
    let serving = |ws: &[&Witness]| -> Vec<f64> {
        ws.iter().filter_map(|w| w.serving_parallelism()).collect()
    };
    let group = |ws: &[&Witness]| -> Vec<f64> { ws.iter().filter_map(|w| w.parallelism).collect() };
    let parallelism = serving(&view);
    let unconvoyed: Vec<f64> = view
        .iter()
        .filter_map(|w| w.serving_parallelism_unconvoyed())
        .collect();
    let Some(unconvoyed) = Spread::of(&unconvoyed) else {
        return (
            None,
            String::new(),
            "the witness read no serving threads".into(),
            None,
        );
    };
    let control_p = serving(&control);
    let control_unconvoyed: Vec<f64> = control
        .iter()
        .filter_map(|w| w.serving_parallelism_unconvoyed())
        .collect();
    let (Some(pg), Some(cg)) = (Spread::of(&group(&view)), Spread::of(&group(&control))) else {
        return (
            None,
            String::new(),
            "the witness read no group figures".into(),
            None,
        );
    };
    let on_cpu: Vec<f64> = view.iter().map(|w| share(w, &|t| t.on_cpu_ns)).collect();
    let blocked: Vec<f64> = view.iter().map(|w| share(w, &|t| t.blocked_ns)).collect();
    let (Some(p), Some(c), Some(cu), Some(on_cpu), Some(blocked)) = (
        Spread::of(&parallelism),
        Spread::of(&control_p),
        Spread::of(&control_unconvoyed),
        Spread::of(&on_cpu),
        Spread::of(&blocked),
    ) else {
        return (
            None,
            String::new(),
            format!(
                "too few pairs served by two threads and read by the witness (view {} of {}, control {} of {}); the server did not run the two requests on two threads",
                view.len(),
                run.under_test.witness.len(),
                control.len(),
                run.control.witness.len()
            ),
            None,
        );
    };
    let spread = |ws: &[&Witness], f: &dyn Fn(&Witness) -> Option<f64>| {
        Spread::of(&ws.iter().filter_map(|w| f(w)).collect::<Vec<_>>())
    };
    let (Some(on), Some(gon), Some(con), Some(cgon)) = (
        spread(&view, &Witness::serving_on_cpu_parallelism),
        spread(&view, &Witness::group_on_cpu_parallelism),
        spread(&control, &Witness::serving_on_cpu_parallelism),
        spread(&control, &Witness::group_on_cpu_parallelism),
    ) else {
        return (
            None,
            String::new(),
            "the witness read no on-CPU figures".into(),
            None,
        );
    };
    let capacity = ratio_of_minima(
        &run.capacity.iter().map(|c| c.pair_ms).collect::<Vec<_>>(),
        &run.capacity.iter().map(|c| c.single_ms).collect::<Vec<_>>(),
    );
    let m = &run.under_test;
    let figures = PairFigures {
        path: path.to_string(),
        threads: THREADS,
        serving_threads: if inferred {
            "inferred: the two tasks runnable longest over each pair (the app sends no X-Thread-Id)"
                .into()
        } else {
            "named by X-Thread-Id".into()
        },
        pairs: view.len(),
        pairs_measured: m.pair_ms.len(),
        on_cpu_parallelism: on,
        group_on_cpu_parallelism: gon,
        control_on_cpu_parallelism: con,
        control_group_on_cpu_parallelism: cgon,
        parallelism: p,
        group_parallelism: pg,
        control_parallelism: c,
        control_group_parallelism: cg,
        unconvoyed,
        control_unconvoyed: cu,
        control_pairs: control.len(),
        serving_on_cpu: on_cpu,
        serving_blocked: blocked,
        wall_ratio: ratio_of_minima(&m.pair_ms, &m.single_ms),
        single_ms: Spread::of(&m.single_ms),
        capacity,
    };
    let headline = format!(
        "P {:.2} [{:.2}-{:.2}] (group {:.2}) over {} pairs against the holding control's {:.2} (group {:.2}); serving threads on a CPU {:.0}% of the pair, blocked {:.0}%; wall ratio {}",
        p.median,
        p.min,
        p.max,
        pg.median,
        view.len(),
        c.median,
        cg.median,
        on_cpu.median * 100.0,
        blocked.median * 100.0,
        figures
            .wall_ratio
            .map_or_else(|| "-".into(), |r| format!("{r:.2}x"))
    );
    let (work, reason) = classify(
        Reading {
            serving: p.median,
            group: pg.median,
            unconvoyed: unconvoyed.median,
            on_cpu: figures.on_cpu_parallelism.median,
            group_on_cpu: figures.group_on_cpu_parallelism.median,
        },
        Reading {
            serving: c.median,
            group: cg.median,
            unconvoyed: cu.median,
            on_cpu: figures.control_on_cpu_parallelism.median,
            group_on_cpu: figures.control_group_on_cpu_parallelism.median,
        },
        on_cpu.median,
    );
    (work, headline, reason, Some(figures))
}

/// Median P of one mode's pairs: the serving threads', and the group's.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub serving: f64,
    pub group: f64,
    /// The serving figure with noise's possible convoys counted runnable.
    pub unconvoyed: f64,
    /// Σ on-CPU over wall, the serving threads' and the group's.
    pub on_cpu: f64,
    pub group_on_cpu: f64,
}

/// The reading of the view against the holding control (and the serving
/// threads' on-CPU share, for the words). Releasing work shows on the
/// serving threads (hashlib in the view) or, for a library with threads
/// of its own, on the group; either must clear the control by the gap.
pub fn classify(view: Reading, control: Reading, on_cpu: f64) -> (Option<Work>, String) {
    let (p, c) = (view.serving, control.serving);
    if view.group < WAITS_BELOW {
        return (
            Some(Work::Waits),
            format!(
                "the threads were asleep, not on a CPU: P {:.2} (group) < {WAITS_BELOW:.2} (on-CPU {:.0}% of the pair)",
                view.group,
                on_cpu * 100.0
            ),
        );
    }
    // Proof of running at once that noise cannot fake, read before the
    // runnable P's bands (which noise narrows): Σ on-CPU past what the GIL
    // allows, with the control showing that bound holds here.
    let proves = |v: f64, c: f64| v >= ON_CPU_PROVES && c <= GIL_ON_CPU_AT_MOST;
    if proves(view.on_cpu, control.on_cpu) {
        return (
            Some(Work::Releases),
            format!(
                "the two requests were on two CPUs at once: the serving threads' on-CPU time was {:.2}x the pair's wall (>= {ON_CPU_PROVES:.2}), which work holding the GIL cannot exceed 1 (the holding control read {:.2}); noise only takes CPU away",
                view.on_cpu, control.on_cpu
            ),
        );
    }
    if proves(view.group_on_cpu, control.group_on_cpu) {
        return (
            Some(Work::Releases),
            format!(
                "the two requests were on two CPUs at once on threads of the library's own: the group's on-CPU time was {:.2}x the pair's wall (>= {ON_CPU_PROVES:.2}; the holding control read {:.2}); noise only takes CPU away",
                view.group_on_cpu, control.group_on_cpu
            ),
        );
    }
    if c > CONTROL_AT_MOST {
        return (
            None,
            format!(
                "the holding control read P {c:.2} (> {CONTROL_AT_MOST:.2}): on this machine now the witness cannot tell taking turns from running at once; run it again on a quieter machine"
            ),
        );
    }
    let clears = |v: f64, c: f64| v >= RELEASES_AT_LEAST && v - c >= GAP_AT_LEAST;
    if clears(p, c) {
        (
            Some(Work::Releases),
            format!(
                "the two requests computed at once: P {p:.2} >= {RELEASES_AT_LEAST:.2}, {:.2} over the holding control (needs >= {GAP_AT_LEAST:.2})",
                p - c
            ),
        )
    } else if clears(view.group, control.group) {
        (
            Some(Work::Releases),
            format!(
                "the two requests computed at once on threads of the library's own: group P {:.2} >= {RELEASES_AT_LEAST:.2}, {:.2} over the holding control's (needs >= {GAP_AT_LEAST:.2}); the serving threads waited for them (P {p:.2})",
                view.group,
                view.group - control.group
            ),
        )
    } else if p - c <= HOLDS_WITHIN
        && view.unconvoyed - control.unconvoyed <= HOLDS_WITHIN
        && view.group - control.group <= HOLDS_WITHIN
    {
        (
            Some(Work::Holds),
            format!(
                "the two requests took turns: P {p:.2} (unconvoyed {:.2}), within {HOLDS_WITHIN:.2} of the holding control's {c:.2} (unconvoyed {:.2}; group {:.2} against {:.2})",
                view.unconvoyed, control.unconvoyed, view.group, control.group
            ),
        )
    } else {
        (
            None,
            format!(
                "P {p:.2} (unconvoyed {:.2}, group {:.2}) stands between the holding control's {c:.2} (unconvoyed {:.2}, group {:.2}) and running at once (>= {RELEASES_AT_LEAST:.2} and {GAP_AT_LEAST:.2} over the control); run it again on a quieter machine, or probe the call with --call",
                view.unconvoyed, view.group, control.unconvoyed, control.group
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kib_is_taken_out_of_the_path() {
        assert_eq!(
            split_kib("/work?mode=release&kib=8192"),
            ("/work?mode=release".into(), Some(8192))
        );
        assert_eq!(split_kib("/work?kib=64"), ("/work".into(), Some(64)));
        assert_eq!(split_kib("/slow?ms=50"), ("/slow?ms=50".into(), None));
        assert_eq!(split_kib("/"), ("/".into(), None));
    }

    #[test]
    fn the_bands_against_the_control() {
        let r = |serving, group| Reading {
            serving,
            group,
            unconvoyed: serving,
            on_cpu: 0.9,
            group_on_cpu: 0.9,
        };
        let hold = r(1.0, 1.05);
        assert_eq!(classify(r(2.0, 2.05), hold, 0.9).0, Some(Work::Releases));
        // Convoys at the view's GIL acquires: still clear of the control.
        assert_eq!(classify(r(1.6, 1.7), hold, 0.8).0, Some(Work::Releases));
        // A library's own threads: the serving threads wait on a join.
        let (w, why) = classify(r(0.05, 3.3), hold, 0.02);
        assert_eq!(w, Some(Work::Releases), "{why}");
        assert!(why.contains("library"), "{why}");
        assert_eq!(classify(r(1.02, 1.1), hold, 0.5).0, Some(Work::Holds));
        assert_eq!(classify(r(0.03, 0.05), hold, 0.01).0, Some(Work::Waits));
        let (w, why) = classify(r(1.4, 1.4), hold, 0.5);
        assert!(w.is_none() && why.contains("between"), "{why}");
        // Releasing, but less than the gap over a control that crept up.
        assert_eq!(classify(r(1.9, 1.9), r(1.5, 1.5), 0.5).0, None);
        // Reads serialised, but noise could explain it (a convoy): no answer.
        let convoyed = Reading {
            serving: 1.05,
            group: 1.1,
            unconvoyed: 1.8,
            on_cpu: 0.95,
            group_on_cpu: 1.0,
        };
        let (w, why) = classify(convoyed, hold, 0.5);
        assert!(w.is_none() && why.contains("between"), "{why}");
        // The same view against a control that the same convoys lift as
        // much (the server's I/O threads queue while a thread waits for
        // the GIL): the gap is what counts, so it holds.
        let lifted = Reading {
            serving: 1.0,
            group: 1.05,
            unconvoyed: 1.7,
            on_cpu: 0.95,
            group_on_cpu: 1.0,
        };
        let (w, why) = classify(convoyed, lifted, 0.5);
        assert_eq!(w, Some(Work::Holds), "{why}");
        // A busy machine: the control's runnable P lifted past its bound,
        // yet the view was on two CPUs at once, which the GIL forbids.
        let on_two = Reading {
            serving: 1.97,
            group: 2.0,
            unconvoyed: 2.0,
            on_cpu: 1.42,
            group_on_cpu: 1.45,
        };
        let busy_control = Reading {
            serving: 1.62,
            group: 1.7,
            unconvoyed: 2.0,
            on_cpu: 0.97,
            group_on_cpu: 1.05,
        };
        let (w, why) = classify(on_two, busy_control, 0.7);
        assert_eq!(w, Some(Work::Releases), "{why}");
        assert!(why.contains("two CPUs at once"), "{why}");
        // Its twins: a control whose on-CPU time also passed 1 (the GIL
        // bound does not hold here, so the figure cannot fail) gives no
        // answer; so does a view whose on-CPU time stayed near 1.
        let (w, why) = classify(
            on_two,
            Reading {
                on_cpu: 1.2,
                group_on_cpu: 1.2,
                ..busy_control
            },
            0.7,
        );
        assert!(w.is_none() && why.contains("holding control"), "{why}");
        let (w, why) = classify(
            Reading {
                on_cpu: 1.1,
                group_on_cpu: 1.15,
                ..on_two
            },
            busy_control,
            0.55,
        );
        assert!(w.is_none(), "{why}");
        // A control that reads parallel: no answer, whatever the view read.
        let (w, why) = classify(r(1.92, 1.95), r(1.7, 1.7), 0.5);
        assert!(w.is_none() && why.contains("holding control"), "{why}");
    }
}
