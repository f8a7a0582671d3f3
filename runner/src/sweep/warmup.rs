//! The warm-up before a sweep setting's measured window: closed-loop load on
//! the route under test until every handler thread has served it and the
//! rate has settled, bounded by a cap, and reported.
//!
//! Why: a user's view may build state on the first request each thread
//! serves (a database connection and table, a model session, a cache). A
//! fixed warm-up shorter than that reads the building as the setting's
//! rate, or leaves no reply inside a short window at all. So the warm-up
//! waits for two things, each witnessed rather than assumed:
//!
//! - **every thread reached**: the distinct `X-Thread-Id`s of the replies
//!   where the app sends one; otherwise the run's scheduler witness of the
//!   server's process group (the accounting's schedstat, or the portable
//!   reading's on-CPU time, as the run takes it): the tasks that ran during the warm-up,
//!   once their count stops growing (the runtime's own threads run too, so
//!   this is a lower bar than the header; the settled rate below is what
//!   closes it);
//! - **the rate settled**: the last window of replies is not faster than
//!   the one before by more than [`RISING_AT_MOST`] (a rate still climbing
//!   is still warming up). A window lasts [`WINDOW_AT_LEAST`] and at least
//!   [`WINDOW_REPLIES`] replies, so a slow view is read over enough replies.
//!
//! The cap ends it either way, and the report says which; so does a view
//! that fails more requests than it serves (broken, not cold). Measuring code
//! never prints; [`settled`] is the rule, apart from the load.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use tokio::time::Instant;

use crate::kernel::portable::{self, Reading};
use crate::kernel::schedstat::{self, Snapshot};
use crate::load::outcome::{check, ErrorCounts, ErrorKind};
use crate::load::route::Route;
use crate::load::wire::WireConnection;
use crate::load::BODY_LIMIT_BYTES;

/// A window of the warm-up lasts at least this long...
pub const WINDOW_AT_LEAST: Duration = Duration::from_millis(250);
/// ...and holds at least this many good replies (or ends at the cap).
pub const WINDOW_REPLIES: u64 = 8;
/// The last window's rate may exceed the one before by this factor and
/// still count as settled.
pub const RISING_AT_MOST: f64 = 1.2;
/// Pause before reopening a connection that could not be opened.
const RECONNECT_PAUSE: Duration = Duration::from_millis(50);

/// One warm-up.
#[derive(Clone)]
pub struct WarmupPlan {
    pub addr: SocketAddr,
    pub route: Arc<Route>,
    pub connections: u32,
    /// Handler threads to reach: threads x workers, at most the
    /// connections; None when the server's default is unknown.
    pub threads: Option<u32>,
    /// The server's process group, for the kernel's witness.
    pub pgid: i32,
    /// Load at least this long (`--warmup`).
    pub at_least: Duration,
    /// Never longer than this.
    pub cap: Duration,
    pub request_timeout: Duration,
}

/// How threads reached were counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadWitness {
    /// Distinct `X-Thread-Id`s of the replies.
    XThreadId,
    /// Tasks of the server's group that ran (schedstat).
    Schedstat,
    /// The same, from per-thread on-CPU time (the portable witness's).
    OnCpu,
    /// Neither: no header and no kernel accounting.
    Unwitnessed,
}

/// What the warm-up did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Warmup {
    pub elapsed_s: f64,
    /// Handler threads wanted (threads x workers), if known.
    pub threads_wanted: Option<u32>,
    /// Threads that served (header) or tasks that ran (schedstat).
    pub threads_reached: u32,
    pub witness: ThreadWitness,
    /// Good replies during the warm-up.
    pub requests: u64,
    /// req/s over the last two windows (older first), once there were two.
    pub last_rates: Option<[f64; 2]>,
    /// Every thread reached and the rate settled, before the cap.
    pub complete: bool,
    /// Failed requests during the warm-up (a warm-up error is an error).
    pub errors: ErrorCounts,
}

impl Warmup {
    /// One line: `3 of 4 threads (x-thread-id), 1.2 s, settled`.
    pub fn describe(&self) -> String {
        let wanted = self
            .threads_wanted
            .map_or_else(String::new, |w| format!(" of {w}"));
        let witness = match self.witness {
            ThreadWitness::XThreadId => "X-Thread-Id",
            ThreadWitness::Schedstat => "tasks that ran, schedstat",
            ThreadWitness::OnCpu => "tasks that ran, on-CPU time",
            ThreadWitness::Unwitnessed => "unwitnessed",
        };
        format!(
            "warm-up {:.1} s, {} replies, {}{wanted} threads reached ({witness}), {}",
            self.elapsed_s,
            self.requests,
            self.threads_reached,
            if self.complete {
                "rate settled"
            } else {
                "cut at the cap before it settled"
            }
        )
    }
}

/// The first reading of the tasks that will have run, by the run's witness.
enum TasksRan {
    Accounting(Snapshot),
    OnCpu(portable::reduce::OnCpuNs),
}

impl TasksRan {
    /// None where the run has no witness (`--witness off`, or none here).
    fn open(pgid: i32) -> Option<Self> {
        match portable::reading().ok()? {
            Reading::Accounting => Snapshot::of_group(pgid).ok().map(Self::Accounting),
            Reading::Sampled => Some(Self::OnCpu(portable::on_cpu_now(&portable::group_members(
                pgid,
            )))),
        }
    }

    /// The tasks of the group that ran since, and how they were counted.
    fn ran_since(&self, pgid: i32) -> (ThreadWitness, u32) {
        match self {
            Self::Accounting(before) => {
                let ran = Snapshot::of_group(pgid)
                    .map(|after| {
                        schedstat::delta(before, &after)
                            .tasks
                            .iter()
                            .filter(|t| t.on_cpu_ns > 0)
                            .count()
                    })
                    .unwrap_or_default();
                (ThreadWitness::Schedstat, ran as u32)
            }
            Self::OnCpu(before) => {
                let after = portable::on_cpu_now(&portable::group_members(pgid));
                let ran = portable::reduce::tasks_that_ran(before, &after);
                (ThreadWitness::OnCpu, ran as u32)
            }
        }
    }
}

/// The rule: every wanted thread reached, and the last window's rate not
/// more than [`RISING_AT_MOST`] above the one before. `reached_stable`:
/// the count did not grow over the last window (the kernel's count, which
/// includes the runtime's own threads, only means something once it stops).
pub fn settled(
    wanted: Option<u32>,
    reached: u32,
    reached_stable: bool,
    rates: Option<[f64; 2]>,
) -> bool {
    let threads_ok = wanted.is_none_or(|w| reached >= w) && reached_stable;
    let rate_ok = rates.is_some_and(|[before, last]| last > 0.0 && last <= before * RISING_AT_MOST);
    threads_ok && rate_ok
}

struct Shared {
    stop: AtomicBool,
    good: AtomicU64,
    thread_ids: Mutex<BTreeSet<u64>>,
    errors: Mutex<ErrorCounts>,
}

/// Runs the warm-up; returns when it is complete or at the cap, after the
/// requests in flight finished (bounded by the request timeout), so none
/// of its load spills into the measured window.
pub async fn run(plan: &WarmupPlan) -> Warmup {
    let start = Instant::now();
    let cap_at = start + plan.cap.max(plan.at_least);
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        good: AtomicU64::new(0),
        thread_ids: Mutex::new(BTreeSet::new()),
        errors: Mutex::new(ErrorCounts::default()),
    });
    let mut lanes = tokio::task::JoinSet::new();
    for _ in 0..plan.connections.max(1) {
        lanes.spawn(lane(plan.clone(), cap_at, shared.clone()));
    }
    let before = TasksRan::open(plan.pgid);
    let mut rates: Vec<f64> = Vec::new();
    let mut reached_counts: Vec<u32> = Vec::new();
    let mut window_start = (start, 0u64);
    let mut complete = false;
    let mut witness = ThreadWitness::Unwitnessed;
    let mut reached = 0;
    loop {
        let now = Instant::now();
        if now >= cap_at {
            break;
        }
        tokio::time::sleep_until((now + WINDOW_AT_LEAST / 5).min(cap_at)).await;
        let now = Instant::now();
        let good = shared.good.load(Ordering::Relaxed);
        let failed = shared.errors.lock().map(|e| e.total()).unwrap_or_default();
        if failed >= WINDOW_REPLIES && failed > good {
            // Failing more than serving: a broken view, not a cold one.
            break;
        }
        let (w_at, w_good) = window_start;
        if now.duration_since(w_at) < WINDOW_AT_LEAST || good - w_good < WINDOW_REPLIES {
            continue;
        }
        rates.push((good - w_good) as f64 / now.duration_since(w_at).as_secs_f64());
        window_start = (now, good);
        let ids = shared
            .thread_ids
            .lock()
            .map(|s| s.len())
            .unwrap_or_default();
        (witness, reached) = if ids > 0 {
            (ThreadWitness::XThreadId, ids as u32)
        } else {
            before
                .as_ref()
                .map_or((ThreadWitness::Unwitnessed, 0), |b| b.ran_since(plan.pgid))
        };
        reached_counts.push(reached);
        let stable = witness == ThreadWitness::XThreadId
            || reached_counts
                .len()
                .checked_sub(2)
                .is_some_and(|i| reached_counts[i] == reached);
        let last_two = last_two(&rates);
        let wanted = (witness != ThreadWitness::Unwitnessed)
            .then_some(plan.threads)
            .flatten();
        if now.duration_since(start) >= plan.at_least && settled(wanted, reached, stable, last_two)
        {
            complete = true;
            break;
        }
    }
    shared.stop.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed();
    // The requests in flight finish (bounded), so the window starts quiet.
    let joined = tokio::time::timeout(plan.request_timeout, async {
        while lanes.join_next().await.is_some() {}
    })
    .await;
    if joined.is_err() {
        lanes.abort_all();
    }
    let errors = shared.errors.lock().map(|e| e.clone()).unwrap_or_default();
    Warmup {
        elapsed_s: elapsed.as_secs_f64(),
        threads_wanted: plan.threads,
        threads_reached: reached,
        witness,
        requests: shared.good.load(Ordering::Relaxed),
        last_rates: last_two(&rates),
        complete,
        errors,
    }
}

fn last_two(rates: &[f64]) -> Option<[f64; 2]> {
    match rates {
        [.., a, b] => Some([*a, *b]),
        _ => None,
    }
}

/// One connection's closed loop until the warm-up stops (or the cap).
async fn lane(plan: WarmupPlan, cap_at: Instant, shared: Arc<Shared>) {
    let mut conn: Option<WireConnection> = None;
    let fail = |kind: ErrorKind, message: String| {
        if let Ok(mut e) = shared.errors.lock() {
            e.add(kind, || message);
        }
    };
    while !shared.stop.load(Ordering::Relaxed) && Instant::now() < cap_at {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match WireConnection::open(plan.addr, plan.request_timeout, BODY_LIMIT_BYTES)
                .await
            {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    fail(ErrorKind::Connect, e.to_string());
                    tokio::time::sleep(RECONNECT_PAUSE).await;
                    continue;
                }
            },
        };
        let request = plan.route.next_request();
        let result = c.get(&request.url, plan.request_timeout).await;
        let thread_id = result.as_ref().ok().and_then(|r| r.served_by.thread_id);
        match check(&plan.route, &request, result) {
            Ok(_) => {
                shared.good.fetch_add(1, Ordering::Relaxed);
                if let (Some(id), Ok(mut ids)) = (thread_id, shared.thread_ids.lock()) {
                    ids.insert(id);
                }
            }
            Err((kind, message)) => {
                if kind.drops_connection() {
                    conn = None;
                }
                fail(kind, message);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_needs_every_thread_and_a_rate_that_stopped_rising() {
        // Every thread, a flat rate: settled.
        assert!(settled(Some(4), 4, true, Some([100.0, 104.0])));
        // The twin: one thread short of four is not.
        assert!(!settled(Some(4), 3, true, Some([100.0, 104.0])));
        // A rate still climbing (a thread building its state) is not.
        assert!(!settled(Some(4), 4, true, Some([50.0, 100.0])));
        // A count still growing is not, whatever the rate.
        assert!(!settled(Some(2), 5, false, Some([100.0, 100.0])));
        // One window, or no replies, is not.
        assert!(!settled(None, 0, true, None));
        assert!(!settled(None, 0, true, Some([0.0, 0.0])));
        // Threads unknown: the rate alone.
        assert!(settled(None, 0, true, Some([100.0, 90.0])));
    }
}
