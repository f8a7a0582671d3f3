//! A closed-loop load generator: N kept-alive connections of the runner's
//! own client ([`WireConnection`]: one TCP stream each, loopback only), each
//! sending its next request as soon as its last reply arrives, for a warm-up
//! and then a measured window.
//!
//! Why closed-loop and why this client: a sweep asks how much a server
//! gets done with N requests always waiting, which is what wrk and oha
//! measure at `-c N`; the runner's own connections are the ones the gates
//! trust (no pooling, no silent reconnects inside a request), each one
//! stream read and framed in its own task ([`wire`]: hyper's hand-off to a
//! connection task cost the server under test CPU at tens of thousands of
//! requests a second).
//!
//! Bounds: every request is bounded by the request timeout and cut at the
//! window's end (a request still in flight then is dropped, not counted);
//! opening a connection is bounded the same way; so the whole load ends by
//! `warmup + duration` after its start, plus the join below. A failed
//! request is data ([`ErrorCounts`]); the connection it broke is replaced.
//! Measuring code never prints: progress goes to a callback.

pub mod latency;
pub mod outcome;
pub mod route;
pub mod window;
pub mod wire;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::time::Instant;

use crate::http::HttpError;

use latency::{Latencies, Latency};
use outcome::{check, ErrorCounts, ErrorKind};
use route::Route;
use wire::WireConnection;

/// Largest reply body accepted: a user's route may send more than the
/// fixture's tens of bytes; past this it is a transport error (so an
/// endless body costs at most this much memory per connection).
pub const BODY_LIMIT_BYTES: usize = 16 * 1024 * 1024;
/// How often the progress callback hears from a running load.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Pause before reopening after a connection could not be opened, so a dead
/// server costs a few errors a second, not a busy loop.
const RECONNECT_PAUSE: Duration = Duration::from_millis(50);
/// How long the connections get to notice the window's end before they are
/// cut off (each already stops itself at the end; this is the backstop).
const JOIN_GRACE: Duration = Duration::from_secs(2);

/// One load against one server.
#[derive(Clone)]
pub struct LoadPlan {
    pub addr: SocketAddr,
    pub route: Arc<Route>,
    pub connections: u32,
    pub warmup: Duration,
    pub duration: Duration,
    pub request_timeout: Duration,
}

/// What the callback hears.
#[derive(Debug, Clone, Copy)]
pub enum LoadEvent {
    /// The warm-up is over: the measured window opens now.
    WindowStarted,
    /// Every `PROGRESS_EVERY` while the load runs.
    Progress(LoadProgress),
    /// The measured window closed now (in-flight requests are dropped).
    WindowEnded,
}

/// Where a running load is.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LoadProgress {
    pub measuring: bool,
    /// Into the current phase.
    pub elapsed: Duration,
    /// The current phase's length.
    pub of: Duration,
    /// Requests finished (good or not) since the load began.
    pub requests: u64,
    pub errors: u64,
}

/// What one load measured. Only requests that finished inside the measured
/// window count; the warm-up's errors are kept apart.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LoadResult {
    pub path: String,
    /// Whether every good reply's work was verified by a digest; false
    /// means status and body length only ("work not verified").
    pub work_verified: bool,
    pub connections: u32,
    pub window_s: f64,
    /// Good replies in the window.
    pub requests: u64,
    pub requests_per_s: f64,
    /// Over good replies; None when there were none.
    pub latency: Option<Latency>,
    /// Replies whose digest was compared in the window (matches and
    /// mismatches; mismatches are `errors.digest`).
    pub digests_checked: u64,
    pub errors: ErrorCounts,
    pub warmup_errors: ErrorCounts,
    /// Smallest and largest good body, in bytes.
    pub body_bytes: Option<[usize; 2]>,
    /// Connections opened after the first N (each replaced a broken one).
    pub reconnects: u64,
}

impl LoadResult {
    /// Good replies only, none lost: a figure worth reporting as clean.
    pub fn clean(&self) -> bool {
        self.requests > 0 && self.errors.total() == 0 && self.warmup_errors.total() == 0
    }
}

/// What one connection saw.
struct Lane {
    latencies: Latencies,
    good: u64,
    digests_checked: u64,
    errors: ErrorCounts,
    warmup_errors: ErrorCounts,
    body_bytes: Option<[usize; 2]>,
    opened: u64,
}

struct Shared {
    finished: AtomicU64,
    failed: AtomicU64,
}

/// Runs the load. The target must be a loopback address: anything else is
/// refused (as a connect error on every connection, so it is still data).
pub async fn run(plan: &LoadPlan, on_event: &mut dyn FnMut(LoadEvent)) -> LoadResult {
    let start = Instant::now();
    let window_start = start + plan.warmup;
    let end = window_start + plan.duration;
    let shared = Arc::new(Shared {
        finished: AtomicU64::new(0),
        failed: AtomicU64::new(0),
    });
    let mut lanes = tokio::task::JoinSet::new();
    for _ in 0..plan.connections {
        lanes.spawn(lane(plan.clone(), window_start, end, shared.clone()));
    }
    let progress = |measuring: bool, now: Instant| {
        let (from, of) = if measuring {
            (window_start, plan.duration)
        } else {
            (start, plan.warmup)
        };
        LoadEvent::Progress(LoadProgress {
            measuring,
            elapsed: now.saturating_duration_since(from).min(of),
            of,
            requests: shared.finished.load(Ordering::Relaxed),
            errors: shared.failed.load(Ordering::Relaxed),
        })
    };
    for (measuring, edge) in [(false, window_start), (true, end)] {
        loop {
            let next = (Instant::now() + PROGRESS_EVERY).min(edge);
            tokio::time::sleep_until(next).await;
            if next >= edge {
                break;
            }
            on_event(progress(measuring, next));
        }
        on_event(if measuring {
            LoadEvent::WindowEnded
        } else {
            LoadEvent::WindowStarted
        });
    }
    let mut total = Lane::new(plan.request_timeout);
    let joined = tokio::time::timeout(JOIN_GRACE, async {
        while let Some(done) = lanes.join_next().await {
            if let Ok(l) = done {
                total.merge(&l);
            }
        }
    })
    .await;
    if joined.is_err() {
        lanes.abort_all();
    }
    let window_s = plan.duration.as_secs_f64();
    LoadResult {
        path: plan.route.path.clone(),
        work_verified: plan.route.verified(),
        connections: plan.connections,
        window_s,
        requests: total.good,
        requests_per_s: if window_s > 0.0 {
            total.good as f64 / window_s
        } else {
            0.0
        },
        latency: total.latencies.summary(),
        digests_checked: total.digests_checked,
        errors: total.errors,
        warmup_errors: total.warmup_errors,
        body_bytes: total.body_bytes,
        reconnects: total.opened.saturating_sub(u64::from(plan.connections)),
    }
}

impl Lane {
    fn new(bound: Duration) -> Self {
        Self {
            latencies: Latencies::new(bound),
            good: 0,
            digests_checked: 0,
            errors: ErrorCounts::default(),
            warmup_errors: ErrorCounts::default(),
            body_bytes: None,
            opened: 0,
        }
    }

    fn merge(&mut self, other: &Lane) {
        self.latencies.merge(&other.latencies);
        self.good += other.good;
        self.digests_checked += other.digests_checked;
        self.errors.merge(&other.errors);
        self.warmup_errors.merge(&other.warmup_errors);
        self.body_bytes = match (self.body_bytes, other.body_bytes) {
            (Some([a, b]), Some([c, d])) => Some([a.min(c), b.max(d)]),
            (x, y) => x.or(y),
        };
        self.opened += other.opened;
    }

    fn fail(&mut self, measuring: bool, kind: ErrorKind, message: String, shared: &Shared) {
        shared.failed.fetch_add(1, Ordering::Relaxed);
        if measuring {
            self.errors.add(kind, || message);
        } else {
            self.warmup_errors.add(kind, || message);
        }
    }
}

/// One connection's closed loop, until `end`.
async fn lane(plan: LoadPlan, window_start: Instant, end: Instant, shared: Arc<Shared>) -> Lane {
    let mut out = Lane::new(plan.request_timeout);
    let mut conn: Option<WireConnection> = None;
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        // Bounded by the request timeout, and cut at the window's end.
        let left = end - now;
        let bound = plan.request_timeout.min(left);
        let cut_by_end = bound < plan.request_timeout;
        let c = match conn.as_mut() {
            Some(c) => c,
            None => {
                out.opened += 1;
                let opened = if plan.addr.ip().is_loopback() {
                    WireConnection::open(plan.addr, bound, BODY_LIMIT_BYTES).await
                } else {
                    Err(HttpError::Connect(format!(
                        "{}: not a loopback address; the runner only loads servers on this machine",
                        plan.addr
                    )))
                };
                match opened {
                    Ok(c) => conn.insert(c),
                    Err(e) => {
                        if Instant::now() >= end {
                            break;
                        }
                        let measuring = Instant::now() >= window_start;
                        out.fail(measuring, ErrorKind::Connect, e.to_string(), &shared);
                        tokio::time::sleep_until((Instant::now() + RECONNECT_PAUSE).min(end)).await;
                        continue;
                    }
                }
            }
        };
        let request = plan.route.next_request();
        let result = c.get(&request.url, bound).await;
        let finished = Instant::now();
        if finished >= end || (cut_by_end && matches!(result, Err(HttpError::Timeout(_)))) {
            // In flight when the window closed: neither good nor an error.
            break;
        }
        shared.finished.fetch_add(1, Ordering::Relaxed);
        let measuring = finished >= window_start;
        let elapsed = result.as_ref().map(|r| r.elapsed).ok();
        match check(&plan.route, &request, result) {
            Ok(good) => {
                if measuring {
                    out.good += 1;
                    out.digests_checked += u64::from(good.digest_checked);
                    if let Some(e) = elapsed {
                        out.latencies.record(e);
                    }
                    out.body_bytes = Some(match out.body_bytes {
                        Some([lo, hi]) => [lo.min(good.body_bytes), hi.max(good.body_bytes)],
                        None => [good.body_bytes; 2],
                    });
                }
            }
            Err((kind, message)) => {
                if measuring && kind == ErrorKind::Digest {
                    out.digests_checked += 1;
                }
                if kind.drops_connection() {
                    conn = None;
                }
                out.fail(measuring, kind, message, &shared);
            }
        }
    }
    out
}
