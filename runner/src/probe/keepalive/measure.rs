//! Measuring a keepalive-isolation run (C5).
//!
//! Two connections A and B, each with one completed request first (B's is
//! timed: a server that pins a thread to each kept-alive connection makes it
//! wait). Per trial: the slow view (sleep S) on A; `fast_after_ms` later a
//! fast fixed-work request on B; then, while A is still busy, a third, fresh
//! connection C asks for the same fast work. The figure is B's latency over
//! S. A's reply must arrive whole in about S and name its own request id; B's
//! and C's digests must match their seeds. Every figure is a ratio of S, so
//! the machine's speed cancels out.
//!
//! A server may close an idle kept-alive connection between trials (its
//! keep-alive timeout): that is its right, not a failed request. Before each
//! trial, if A or B is closed, the lane is opened afresh, A first, then B,
//! without warm-ups: a server that binds each connection to one thread for
//! its life binds A first and leaves B (and C) waiting behind it.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use super::KeepalivePlan;
use crate::digest::WorkDigest;
use crate::host::limits::Limits;
use crate::http::{Connection, HttpError, Reply};
use crate::probe::seeds::Seeds;
use crate::probe::trial::{ProbeEvent, TrialLoop};
use crate::spec::{Mode, Trials};

/// One trial's latencies, each over S; None where the request failed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeepaliveTrial {
    pub b_over_s: Option<f64>,
    pub a_over_s: Option<f64>,
    pub c_over_s: Option<f64>,
}

/// What one mode measured.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeepaliveModeRun {
    pub name: String,
    /// B's warm-up request, before any slow view, over S.
    pub b_warmup_over_s: Option<f64>,
    pub trials: Vec<KeepaliveTrial>,
    /// Every request that failed or answered wrongly, in words.
    pub problems: Vec<String>,
    /// A or B requests that found their kept-alive connection closed by the
    /// server (a close racing the trial), kept apart from `problems` so the
    /// verdict can tell a keep-alive timeout from a wrong answer.
    pub closed: Vec<String>,
    /// How often the server had closed A or B while it idled between
    /// trials, so the lane was opened afresh.
    pub reopened: u32,
}

/// Both modes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeepaliveRun {
    pub under_test: KeepaliveModeRun,
    pub control: KeepaliveModeRun,
    pub slow_ms: u64,
    pub trials_done: u32,
    /// Set when a mode could not even open its connections.
    pub broken: Option<String>,
}

struct Lane {
    a: Connection,
    b: Connection,
    addr: SocketAddr,
}

struct Ctx<'a> {
    plan: &'a KeepalivePlan,
    digest: WorkDigest,
    seeds: Seeds,
    limits: Limits,
    next_id: u64,
}

impl Ctx<'_> {
    fn fast_url(&mut self) -> (String, u64) {
        let seed = self.seeds.next().unwrap_or_default();
        let sep = if self.plan.fast_route.contains('?') {
            '&'
        } else {
            '?'
        };
        (
            format!(
                "{}{sep}kib={}&seed={seed}",
                self.plan.fast_route, self.plan.fast_kib
            ),
            seed,
        )
    }

    fn over_s(&self, d: Duration) -> f64 {
        d.as_secs_f64() * 1000.0 / self.plan.slow_ms as f64
    }

    /// The reply's latency over S, or a problem in words.
    fn check_fast(&self, who: &str, seed: u64, r: Result<Reply, HttpError>) -> Result<f64, String> {
        let reply = r.map_err(|e| format!("{who}: {e}"))?;
        if reply.status != 200 {
            return Err(format!("{who}: HTTP {}", reply.status));
        }
        if reply.text().trim() != self.digest.expected(seed) {
            return Err(format!(
                "{who}: the body is not the digest of its own request (seed {seed})"
            ));
        }
        Ok(self.over_s(reply.elapsed))
    }
}

/// Opens A and B and completes one request on each (B's is timed).
async fn open_lane(
    ctx: &mut Ctx<'_>,
    addr: SocketAddr,
    run: &mut KeepaliveModeRun,
) -> Result<Lane, String> {
    let limit = ctx.limits.request;
    let mut a = Connection::open(addr, limit)
        .await
        .map_err(|e| format!("{}: connection A: {e}", run.name))?;
    let mut b = Connection::open(addr, limit)
        .await
        .map_err(|e| format!("{}: connection B: {e}", run.name))?;
    let (url, seed) = ctx.fast_url();
    let r = a.get(&url, limit).await;
    if let Err(p) = ctx.check_fast("A warm-up", seed, r) {
        run.problems.push(p);
    }
    let (url, seed) = ctx.fast_url();
    let r = b.get(&url, limit).await;
    match ctx.check_fast("B warm-up", seed, r) {
        Ok(x) => run.b_warmup_over_s = Some(x),
        Err(p) => run.problems.push(p),
    }
    Ok(Lane { a, b, addr })
}

/// Opens A and B afresh (A first) when the server closed either while it
/// idled; Err when a connection cannot be opened (a problem of this trial).
async fn refresh_lane(
    ctx: &Ctx<'_>,
    lane: &mut Lane,
    run: &mut KeepaliveModeRun,
) -> Result<(), String> {
    // Let the connections' drivers read a close that is already there.
    tokio::task::yield_now().await;
    if !lane.a.is_closed() && !lane.b.is_closed() {
        return Ok(());
    }
    run.reopened += 1;
    let limit = ctx.limits.request;
    // A survivor is dropped too: a fresh lane has a known order.
    lane.a = Connection::open(lane.addr, limit)
        .await
        .map_err(|e| format!("reopening A: {e}"))?;
    lane.b = Connection::open(lane.addr, limit)
        .await
        .map_err(|e| format!("reopening B: {e}"))?;
    Ok(())
}

async fn trial(ctx: &mut Ctx<'_>, lane: &mut Lane, run: &mut KeepaliveModeRun) {
    let plan = ctx.plan;
    if let Err(p) = refresh_lane(ctx, lane, run).await {
        run.problems.push(p);
        return;
    }
    ctx.next_id += 1;
    let id = ctx.next_id;
    let slow_url = plan.slow_url(id);
    let slow_reply = plan.slow_reply_for(id);
    let (b_url, b_seed) = ctx.fast_url();
    let (c_url, c_seed) = ctx.fast_url();
    // A may take S plus the usual bound; B and C are bounded the same way,
    // so a pinned connection reads as a long wait, never a hang.
    let limit = ctx.limits.request + Duration::from_millis(plan.slow_ms);
    let after = Duration::from_millis(plan.fast_after_ms);
    let addr = lane.addr;
    let Lane { a, b, .. } = lane;
    let a_fut = a.get(&slow_url, limit);
    let bc_fut = async {
        tokio::time::sleep(after).await;
        let rb = b.get(&b_url, limit).await;
        let started = Instant::now();
        let rc = match Connection::open(addr, limit).await {
            Ok(mut c) => c.get(&c_url, limit).await.map(|mut r| {
                // C's figure includes its connection set-up: a server that
                // cannot accept while A is busy is the failure we look for.
                r.elapsed = started.elapsed();
                r
            }),
            Err(e) => Err(e),
        };
        (rb, rc)
    };
    let (ra, (rb, rc)) = tokio::join!(a_fut, bc_fut);
    let mut t = KeepaliveTrial {
        b_over_s: None,
        a_over_s: None,
        c_over_s: None,
    };
    match ra {
        Ok(r) if r.status == 200 && r.text().trim() == slow_reply => {
            t.a_over_s = Some(ctx.over_s(r.elapsed))
        }
        Ok(r) => run.problems.push(format!(
            "A: the slow reply was HTTP {} {:?}, not the answer to request id={id}",
            r.status,
            crate::text::clip_bytes(&r.body, crate::http::reply::STATUS_BODY_BYTES)
        )),
        Err(e @ HttpError::Closed) => run.closed.push(format!("A: {e}")),
        Err(e) => run
            .problems
            .push(format!("A: the slow request failed: {e}")),
    }
    match rb {
        Err(e @ HttpError::Closed) => run.closed.push(format!("B: {e}")),
        rb => match ctx.check_fast("B", b_seed, rb) {
            Ok(x) => t.b_over_s = Some(x),
            Err(p) => run.problems.push(p),
        },
    }
    match ctx.check_fast("C (fresh connection)", c_seed, rc) {
        Ok(x) => t.c_over_s = Some(x),
        Err(p) => run.problems.push(p),
    }
    run.trials.push(t);
}

fn mode_run(mode: &Mode) -> KeepaliveModeRun {
    KeepaliveModeRun {
        name: mode.name.clone(),
        b_warmup_over_s: None,
        trials: Vec::new(),
        problems: Vec::new(),
        closed: Vec::new(),
        reopened: 0,
    }
}

/// Runs both modes, interleaved trial by trial, each on its own server.
pub async fn run(
    addrs: [SocketAddr; 2],
    plan: &KeepalivePlan,
    trials: Trials,
    limits: Limits,
    settled: &dyn Fn(&KeepaliveRun) -> bool,
    emit: &mut dyn FnMut(ProbeEvent),
) -> KeepaliveRun {
    let mut out = KeepaliveRun {
        under_test: mode_run(&plan.under_test),
        control: mode_run(&plan.control),
        slow_ms: plan.slow_ms,
        trials_done: 0,
        broken: None,
    };
    let mut ctx = Ctx {
        plan,
        digest: WorkDigest::new(plan.fast_kib),
        seeds: Seeds::new(),
        limits,
        next_id: 0,
    };
    let mut lanes = Vec::new();
    for (slot, addr) in addrs.into_iter().enumerate() {
        let run = if slot == 0 {
            &mut out.under_test
        } else {
            &mut out.control
        };
        match open_lane(&mut ctx, addr, run).await {
            Ok(l) => lanes.push(l),
            Err(e) => {
                out.broken = Some(e);
                return out;
            }
        }
    }
    let mut trials = TrialLoop::new(trials);
    while let Some(t) = trials.next(|| settled(&out)) {
        for slot in t.order() {
            let run = if slot == 0 {
                &mut out.under_test
            } else {
                &mut out.control
            };
            trial(&mut ctx, &mut lanes[slot], run).await;
        }
        out.trials_done = t.index + 1;
        emit(t.done());
    }
    out
}
