//! Question 1 without `--call`: an E19-style pair on the view, measured by
//! the pair-ratio probe's own engine (`probe::pair_ratio::measure`): one
//! server with two handler threads, one request alone then two at once on
//! two kept-alive connections, interleaved trials, every `/work` digest
//! checked, and every pair bracketed by the scheduler witness.
//!
//! The engine's control mode is the fixture's holding work
//! (`/work?mode=hold`, on the same server when the app is the fixture served
//! as it is, else on a fixture server of its own), interleaved with the view trial by
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
//!
//! - `mod.rs` (here): the pair's plan (E19's row, with advise's changes
//!   named) and the run.
//! - `reduce.rs`: the run reduced to figures (`kernel/pairs.rs`, once).
//! - `read.rs`: the answer and its words, from the figures.
//! - the rules: `probe/pair_ratio/rulebook.rs`, E19's, with [`rules`].
//! - `words.rs`: the answer's words.

use std::path::Path;

use super::{GilAnswer, Work};
use crate::host::limits::Limits;
use crate::kernel::control::CapacityControl;
use crate::probe::pair_ratio::measure::{self, is_work_route, PairRatioRun};
use crate::probe::pair_ratio::rulebook::{Rules, Ruling, NEVER_TURNS_AT};
use crate::probe::pair_ratio::PairRatioPlan;
use crate::server::pool::{PoolSpec, ServerPool};
use crate::session::Session;
use crate::spec::{Profile, RatioBound, Trials};

mod read;
mod reduce;
mod words;

pub use read::{read, Read};
pub use reduce::PairFigures;

/// Handler threads of the pair's server: two, never four (E19's `threads`).
pub const THREADS: u32 = 2;
/// P at least this, and [`GAP_AT_LEAST`] over the holding control: the two
/// requests computed at once for most of the pair. Below E19's 1.7: the
/// fixture's releasing view takes the GIL back after every 64 KiB buffer,
/// and on this VM (where waking an idle vCPU takes tens of microseconds)
/// convoys at those acquires read P 1.6-1.75 in one quiet run of three at
/// 24 MiB; a gate has its wall gap to settle those, advise only the
/// witness, so it asks for the gap over the control instead. Never under
/// the rulebook's floor ([`NEVER_TURNS_AT`]), so it cannot disagree with
/// E19.
pub const RELEASES_AT_LEAST: f64 = NEVER_TURNS_AT;
/// A releasing view stands at least this far over the control.
pub const GAP_AT_LEAST: f64 = 0.5;
/// A holding view stands at most this far over the control on every
/// figure. Not E19's absolute `serialised_at_most`: a user's view may sleep
/// (I/O) as well as wait for the GIL, and sleep reads like turns; against
/// the control the convoys of this machine, now, are read off.
pub const HOLDS_WITHIN: f64 = 0.25;
/// The group's P under this: the threads were asleep, not computing.
pub const WAITS_BELOW: f64 = 0.5;
/// ... or whose threads were on a CPU under this share of the holding
/// control's time on a CPU (a sleep's wake-ups queue on a loaded machine).
pub const WAITS_ON_CPU_SHARE: f64 = 0.2;
/// Pairs with a free core a "holds" stands on (`reduce.rs`'s `FreeCore`):
/// a median of three, so one pair that slipped into a free moment cannot
/// answer alone.
pub const FREE_CORE_PAIRS_AT_LEAST: usize = 3;
/// On the view's pairs with a free core (core-wait ratio at most E19's
/// `capacity_at_most`, at least [`FREE_CORE_PAIRS_AT_LEAST`] of them),
/// "holds" stands at a P at most this (the group's under the rulebook's
/// floor) even where the holding control reads too parallel
/// (`rulebook::rule_on_free_core`). Over 420 advises kept from the decisive
/// table's runs (quiet, beside one spinning process, beside two burst
/// loads; both witnesses), the median over such pairs read 0.94-1.22 for
/// holding views (168 of 234 advises had three or more such pairs) and
/// 1.43-2.00 for releasing ones (61 of 186; a library whose serving
/// threads wait for its own threads reads its group at about 2).
pub const FREE_CORE_TURNS_AT_MOST: f64 = 1.3;
/// The control's route (the fixture's holding work).
pub const CONTROL_PATH: &str = "/work?mode=hold";
/// KiB of work a pair of the fixture's `/work` times at least, and the
/// holding control's work: E19's 24 MiB, about 18 ms here. At 8 MiB (about
/// 5 ms, the length of one GIL switch interval and of a scheduler slice) a
/// releasing pair read P 1.3-1.6 in one quiet run of five, each thread
/// waiting at its next GIL acquire whenever the other was preempted while
/// holding it; whether the work releases does not change with its length.
const PAIR_KIB: u32 = 24576;

/// E19's row: the pair's bounds, trials and server come from it.
const E19: &str = include_str!("../../../../specs/E19.yaml");

/// E19's plan and trials, as the row says.
fn e19() -> (PairRatioPlan, Trials, Option<u32>) {
    let row = crate::spec::row::parse_row(Path::new("specs/E19.yaml"), E19)
        .expect("specs/E19.yaml is checked by the tests");
    match row.plan {
        crate::probe::Plan::PairRatio(plan) => (plan, row.trials, row.server.threads),
        _ => unreachable!("E19 is a pair-ratio row"),
    }
}

/// The core-wait ratio at most which a pair had a free core: E19's
/// `capacity_at_most`, the bound its judge reads each trial with.
pub fn free_core_at_most() -> f64 {
    e19().0.capacity_at_most
}

/// Advise's rules: E19's control bound, with the bands above where advise
/// reads differently (see each constant for why).
pub fn rules() -> Rules {
    let (plan, _, _) = e19();
    let control_at_most = match plan.control.witness_bound {
        Some(RatioBound::AtMost(v)) => v,
        _ => unreachable!("E19's control sets parallelism_at_most"),
    };
    Rules {
        at_once_at_least: RELEASES_AT_LEAST,
        gap_at_least: GAP_AT_LEAST,
        control_at_most,
        turns_at_most: None,
        turns_within_control: Some(HOLDS_WITHIN),
        // A user's view may compute on a library's own threads.
        library_threads: true,
        asleep_below: Some(WAITS_BELOW),
        asleep_on_cpu_share: Some(WAITS_ON_CPU_SHARE),
        free_core_turns_at_most: Some(FREE_CORE_TURNS_AT_MOST),
    }
}

/// What a ruling answers.
pub fn work(ruling: Ruling) -> Option<Work> {
    match ruling {
        Ruling::Asleep => Some(Work::Waits),
        Ruling::TookTurns | Ruling::TookTurnsLikeControl | Ruling::TookTurnsOnFreeCore => {
            Some(Work::Holds)
        }
        r if r.at_once() == Some(true) => Some(Work::Releases),
        _ => None,
    }
}

/// Where and what to pair.
pub struct PairSpec<'a> {
    pub profile: &'a Profile,
    pub python: &'a Path,
    pub app: &'a str,
    pub app_dir: &'a Path,
    /// Whether the app is the fixture (the control then shares its server,
    /// unless the view is moved to a thread).
    pub fixture: bool,
    /// fixtures/bareapp, for the capacity control and the holding control.
    pub fixture_dir: &'a Path,
    pub logs_dir: &'a Path,
    /// The session whose machine turn the pair takes.
    pub session: &'a Session,
    pub limits: Limits,
    /// The view, as given (`/work?mode=release&kib=8192`, `/slow?ms=50`).
    pub path: &'a str,
    /// Where the user's server is polled for readiness; None: the
    /// profile's `ready.path`.
    pub ready_path: Option<&'a str>,
    /// ASGI: the runner's wrapper runs each request of the view on a pool
    /// thread with an event loop of its own (the view moved to a thread).
    pub offload: bool,
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
/// asks for more, else `PAIR_KIB` (also the holding control's work).
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
    let lock = match spec.session.lock(spec.limits.machine_wait).await {
        Ok(lock) => lock,
        Err(e) => return answer(None, String::new(), e, None),
    };
    let run = run_pair(spec).await;
    drop(lock);
    let run = match run {
        Ok(run) => run,
        Err(reason) => return answer(None, String::new(), reason, None),
    };
    let r = read(spec.path, !spec.fixture, &run);
    answer(r.work, r.headline, r.reason, r.figures)
}

async fn run_pair(spec: &PairSpec<'_>) -> Result<PairRatioRun, String> {
    let (path, _) = split_kib(spec.path);
    // E19's pair, on the view: its bounds (the wall ones reported, not
    // judged), server and trials. What advise changes: the mode under test
    // is the view and the work its own; a user's app names no serving
    // thread, so they are inferred; a fail needs no confirming trials (the
    // wall gap judges nothing here).
    let (mut plan, trials, _) = e19();
    plan.under_test.name = "view".into();
    plan.under_test.path = path;
    plan.control.name = "holding control".into();
    plan.control.path = CONTROL_PATH.into();
    plan.work_kib = pair_kib(spec.path);
    plan.fail_confirm_factor = 1;
    plan.infer_serving_threads = true;
    // A user's view is as long as it is: the holding control is sized to
    // it, so both are read at one timescale (a 6 ms view against 18 ms of
    // control read its unconvoyed P 0.3-0.4 over the control's on a quiet
    // machine, where the pair's wake-ups and handoffs weigh more).
    plan.control_as_long_as_view = true;
    let control_server = plan.control.server.clone();
    if spec.offload {
        plan.under_test
            .server
            .env
            .insert(crate::server::asgi::OFFLOAD_VAR.into(), "1".into());
    }
    let server = plan.under_test.server.clone();
    let mut pool = ServerPool::new(PoolSpec {
        row_id: "advise".into(),
        profile: spec.profile.clone(),
        python: spec.python.to_path_buf(),
        app: spec.app.into(),
        app_dir: spec.app_dir.to_path_buf(),
        logs_dir: spec.logs_dir.to_path_buf(),
        ready_path: spec.ready_path.map(str::to_string),
    });
    // The holding control runs on a fixture server of its own unless the
    // app is the fixture served as it is. Moved to a thread (`offload`), the
    // fixture's `def` work runs on a loop the wrapper opens for the request,
    // whose anyio workers end with it: each control pair was served by two
    // threads that had ended before the witness read them.
    let control_apart = !spec.fixture || spec.offload;
    let mut fixture_pool = control_apart.then(|| {
        ServerPool::new(PoolSpec {
            row_id: "advise.control".into(),
            profile: spec.profile.clone(),
            python: spec.python.to_path_buf(),
            app: crate::sweep::input::FIXTURE_APP.into(),
            app_dir: spec.fixture_dir.to_path_buf(),
            logs_dir: spec.logs_dir.to_path_buf(),
            ready_path: None,
        })
    });
    let control = CapacityControl::start(spec.python, spec.fixture_dir);
    let target = pool.get(&server, &mut |_| {}).await;
    let control_target = match (&target, fixture_pool.as_mut()) {
        (Ok(_), Some(p)) => p.get(&control_server, &mut |_| {}).await,
        (t, _) => t.clone(),
    };
    let result = match (target, control_target, control) {
        (Err(stop), _, _) | (_, Err(stop), _) => Err(stop.reason),
        (_, _, Err(e)) => Err(e.to_string()),
        (Ok(target), Ok(control_target), Ok(mut control)) => Ok(measure::run(
            [target, control_target],
            &plan,
            trials,
            Some(&mut control),
            spec.limits,
            &|run| read(spec.path, !spec.fixture, run).work.is_some(),
            &mut |_| {},
        )
        .await),
    };
    if let Some(p) = fixture_pool.as_mut() {
        p.stop_all();
    }
    let (tail, exited) = pool.stop_all();
    if let Some(status) = exited {
        return Err(format!("the server exited during the pair ({status})"));
    }
    // A view that raised: its traceback, from the server's log.
    let broke_on_5xx = result.as_ref().ok().and_then(|run| {
        run.broken
            .as_ref()
            .filter(|b| b.is_server_error())
            .zip(tail.as_deref())
            .zip(pool.runs().first())
    });
    if let Some(((broken, tail), first)) = broke_on_5xx {
        let reason = format!("the pair broke: {broken}");
        return Err(crate::server::with_log_tail(&reason, &first.log, tail));
    }
    result
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
    fn the_row_gives_the_pair() {
        let (plan, trials, threads) = e19();
        assert_eq!(threads, Some(THREADS));
        assert_eq!((trials.min, trials.max), (5, 15));
        assert_eq!(plan.work_kib, PAIR_KIB);
        assert_eq!(rules().control_at_most, 1.6);
        assert_eq!(rules().check(), None);
    }
}
