//! Where an ASGI view runs, measured: on the event loop, blocking it; on
//! the loop, awaiting; or in anyio's threadpool (a `def` endpoint).
//!
//! One server (threadpool of two). Per trial, on a kept-alive connection A
//! the view runs; a quarter of the way through (by its time alone), the
//! wrapper's loop probe ([`LOOP_PROBE`], answered by the runner's wrapper
//! on the loop, never by the app) goes out on a fresh connection B:
//!
//! - a view that blocks the loop delays the probe until it ends: the probe
//!   waits most of what was left of the view;
//! - a view that awaits, or runs in the pool, leaves the loop free: the
//!   probe comes back at once, and says how many threadpool tokens were
//!   borrowed then (a `def` view holds one) and which OS threads are the
//!   pool's. Where the kernel keeps per-thread accounting, the witness
//!   confirms it: a pool thread ran during the view, or none did.
//!
//! So which thread did the work comes from the loop and the kernel, never
//! from the app's source. Measuring never prints.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use super::pair::PairSpec;
use crate::http::{self, Connection};
use crate::kernel::schedstat::{self, Availability, Snapshot};
use crate::server::asgi::LOOP_PROBE;
use crate::server::pool::{PoolSpec, ServerPool};
use crate::spec::ServerSettings;

/// Trials (each one view and one probe).
pub const TRIALS: usize = 5;
/// The probe waited at least this share of what was left of the view: the
/// loop was blocked.
pub const BLOCKED_AT_LEAST: f64 = 0.6;
/// The probe waited at most this share: the loop was free.
pub const FREE_AT_MOST: f64 = 0.25;
/// A view quicker than this (left when the probe goes out) cannot be told.
pub const VIEW_LEFT_AT_LEAST_MS: f64 = 5.0;
/// The threadpool's size on the server measured.
pub const POOL: u32 = 2;

/// Where the view ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Place {
    /// In anyio's threadpool: a `def` endpoint (the WSGI questions apply).
    Pool,
    /// On the event loop, blocking it: an `async def` view that calls
    /// something blocking.
    LoopBlocks,
    /// On the event loop, awaiting: the loop serves others meanwhile.
    LoopAwaits,
}

impl Place {
    pub fn describe(self) -> &'static str {
        match self {
            Place::Pool => "in the threadpool (a def view)",
            Place::LoopBlocks => "on the event loop, blocking it",
            Place::LoopAwaits => "on the event loop, awaiting",
        }
    }
}

/// One trial's figures.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PlacementTrial {
    /// The view alone, on its own (ms).
    pub alone_ms: f64,
    /// The view with the probe beside it (ms).
    pub view_ms: f64,
    /// When the probe went out, after the view (ms).
    pub probe_after_ms: f64,
    /// The probe's round trip (ms).
    pub probe_ms: f64,
    /// What was left of the view when the probe went out (ms).
    pub left_ms: f64,
    /// The probe's wait over what was left of the view when it went out.
    pub blocked_share: f64,
    /// Threadpool tokens borrowed when the probe was answered.
    pub pool_busy: Option<u32>,
    /// Whether a pool thread ran during the view (the witness; None
    /// without per-thread accounting).
    pub pool_thread_ran: Option<bool>,
    /// The loop thread's time on a CPU during the view (the witness, ms).
    pub loop_on_cpu_ms: Option<f64>,
}

/// The answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Placement {
    /// None: the figures could not tell (`reason` says why).
    pub place: Option<Place>,
    /// One line of figures.
    pub headline: String,
    pub reason: String,
    pub trials: Vec<PlacementTrial>,
}

/// Measures where the view runs (takes the machine lock), on the server,
/// app and view the pair questions use (`spec`'s fixture and offload do
/// not apply here).
pub async fn measure(spec: &PairSpec<'_>) -> Placement {
    let none = |reason: String, trials| Placement {
        place: None,
        headline: String::new(),
        reason,
        trials,
    };
    let lock = match spec.session.lock(spec.limits.machine_wait).await {
        Ok(lock) => lock,
        Err(e) => return none(e, Vec::new()),
    };
    let mut pool = ServerPool::new(PoolSpec {
        row_id: "advise.placement".into(),
        profile: spec.profile.clone(),
        python: spec.python.to_path_buf(),
        app: spec.app.into(),
        app_dir: spec.app_dir.to_path_buf(),
        logs_dir: spec.logs_dir.to_path_buf(),
        ready_path: spec.ready_path.map(str::to_string),
    });
    let settings = ServerSettings {
        threads: Some(POOL),
        ..Default::default()
    };
    let result = match pool.get(&settings, &mut |_| {}).await {
        Err(stop) => Err(stop.reason),
        Ok(target) => run_trials(target.addr, target.pgid, spec).await,
    };
    let (_, exited) = pool.stop_all();
    drop(lock);
    match (result, exited) {
        (_, Some(status)) => none(format!("the server exited ({status})"), Vec::new()),
        (Err(e), _) => none(e, Vec::new()),
        (Ok(trials), None) => read(trials),
    }
}

async fn run_trials(
    addr: std::net::SocketAddr,
    pgid: i32,
    spec: &PairSpec<'_>,
) -> Result<Vec<PlacementTrial>, String> {
    let timeout = spec.limits.request;
    let witnessed = matches!(schedstat::availability(), Availability::Available);
    let mut conn = Connection::open(addr, timeout)
        .await
        .map_err(|e| format!("cannot connect to the server: {e}"))?;
    // Untimed: the first request builds what the view builds lazily.
    let (first, _) = get(&mut conn, spec.path, timeout).await;
    check(spec.path, first)?;
    let mut trials = Vec::with_capacity(TRIALS);
    for _ in 0..TRIALS {
        let (alone, alone_wall) = get(&mut conn, spec.path, timeout).await;
        check(spec.path, alone)?;
        let alone_ms = ms(alone_wall);
        let after = Duration::from_secs_f64((alone_ms / 4.0).clamp(2.0, 500.0) / 1000.0);
        let before = witnessed.then(|| Snapshot::of_group(pgid).ok()).flatten();
        let view_started = Instant::now();
        let view = get(&mut conn, spec.path, timeout);
        let probe = async {
            tokio::time::sleep(after).await;
            let sent = Instant::now();
            let reply = http::get_once(addr, LOOP_PROBE, timeout).await;
            (reply, sent.elapsed(), sent.duration_since(view_started))
        };
        let ((view, view_wall), (probe, probe_wall, probe_after)) = tokio::join!(view, probe);
        let after_snap = witnessed.then(|| Snapshot::of_group(pgid).ok()).flatten();
        check(spec.path, view)?;
        let probe = probe.map_err(|e| format!("the loop probe {LOOP_PROBE} failed: {e}"))?;
        if probe.status != 200 || probe.served_by.loop_thread.is_none() {
            return Err(format!(
                "the loop probe {LOOP_PROBE} got HTTP {} without the wrapper's stamp; is the server serving the runner's ASGI wrapper?",
                probe.status
            ));
        }
        let view_ms = ms(view_wall);
        let left = (view_ms - ms(probe_after)).max(0.001);
        let (pool_thread_ran, loop_on_cpu_ms) = match (before, after_snap) {
            (Some(b), Some(a)) => {
                let delta = schedstat::delta(&b, &a);
                let pool = &probe.served_by.pool_threads;
                let ran = delta
                    .tasks
                    .iter()
                    .filter(|t| pool.contains(&(t.tid as u64)))
                    .any(|t| t.slices > 0 || t.seen == schedstat::Seen::Appeared);
                let loop_cpu = probe
                    .served_by
                    .loop_thread
                    .and_then(|l| delta.task(l as i32))
                    .map(|t| t.on_cpu_ns as f64 / 1e6);
                (Some(ran), loop_cpu)
            }
            _ => (None, None),
        };
        trials.push(PlacementTrial {
            alone_ms,
            view_ms,
            probe_after_ms: ms(probe_after),
            probe_ms: ms(probe_wall),
            left_ms: left,
            blocked_share: ms(probe_wall) / left,
            pool_busy: probe.served_by.pool_busy,
            pool_thread_ran,
            loop_on_cpu_ms,
        });
    }
    Ok(trials)
}

async fn get(
    conn: &mut Connection,
    path: &str,
    timeout: Duration,
) -> (Result<http::Reply, http::HttpError>, Duration) {
    let started = Instant::now();
    let reply = conn.get(path, timeout).await;
    (reply, started.elapsed())
}

fn check(path: &str, reply: Result<http::Reply, http::HttpError>) -> Result<(), String> {
    match reply {
        Ok(r) if r.status < 400 => Ok(()),
        Ok(r) => Err(format!("the view answered HTTP {} for {path}", r.status)),
        Err(e) => Err(format!("the view failed for {path}: {e}")),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The rule: the median blocked share places the view on the loop or off
/// it; off it, the pool's tokens (and the witness, where it is) say pool
/// or loop. Disagreement, or a share between the bands, is no answer.
pub fn read(trials: Vec<PlacementTrial>) -> Placement {
    let shares: Vec<f64> = trials.iter().map(|t| t.blocked_share).collect();
    let share = crate::stats::Spread::of(&shares).map(|s| s.median);
    let busy = trials
        .iter()
        .filter(|t| t.pool_busy.is_some_and(|b| b > 0))
        .count();
    let ran: Vec<bool> = trials.iter().filter_map(|t| t.pool_thread_ran).collect();
    let ran_count = ran.iter().filter(|r| **r).count();
    let n = trials.len();
    let headline = format!(
        "the loop probe waited {:.0}% of the view's remaining time (median of {n}); pool tokens borrowed in {busy} of {n}{}",
        share.unwrap_or(f64::NAN) * 100.0,
        if ran.is_empty() {
            String::from("; no per-thread accounting here")
        } else {
            format!("; a pool thread ran in {ran_count} of {} (witness)", ran.len())
        }
    );
    let answer = |place: Option<Place>, reason: String| Placement {
        place,
        headline: headline.clone(),
        reason,
        trials: trials.clone(),
    };
    let Some(share) = share else {
        return answer(None, "no trial was measured".into());
    };
    // In the pool or not, first: a pool thread busy with the view leaves
    // the loop free but may still slow the probe (it contends for the GIL
    // and the cores), so the probe's wait is read only for a view that
    // borrowed no pool thread.
    let majority = n / 2 + 1;
    let by_tokens = if busy >= majority {
        Some(true)
    } else if busy == 0 {
        Some(false)
    } else {
        None
    };
    let by_witness = if ran.is_empty() {
        None
    } else if ran_count > ran.len() / 2 {
        Some(true)
    } else if ran_count == 0 {
        Some(false)
    } else {
        None
    };
    let in_pool = match (by_tokens, by_witness) {
        (Some(a), Some(b)) if a != b => {
            return answer(
                None,
                format!(
                    "the pool's tokens ({busy} of {n} busy) and the witness ({ran_count} of {} with a pool thread running) disagree",
                    ran.len()
                ),
            )
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => {
            return answer(
                None,
                format!(
                    "the pool's tokens were busy in {busy} of {n} trials: neither always nor never"
                ),
            )
        }
    };
    if in_pool {
        return answer(
            Some(Place::Pool),
            "the view runs in the threadpool (a def view): a pool thread served it, and the event loop was not blocked by it".into(),
        );
    }
    let lefts: Vec<f64> = trials.iter().map(|t| t.left_ms).collect();
    let left = crate::stats::Spread::of(&lefts).map_or(0.0, |s| s.median);
    if left < VIEW_LEFT_AT_LEAST_MS {
        return answer(
            None,
            format!(
                "the view runs on the event loop, but too quickly to tell whether it blocks it: {left:.1} ms of it were left when the probe went out (needs {VIEW_LEFT_AT_LEAST_MS:.0}); give it more work"
            ),
        );
    }
    if share >= BLOCKED_AT_LEAST {
        return answer(
            Some(Place::LoopBlocks),
            format!(
                "the view blocks the event loop: no pool thread served it, and a request on another connection waited {:.0}% of what was left of it (>= {:.0}%)",
                share * 100.0,
                BLOCKED_AT_LEAST * 100.0
            ),
        );
    }
    if share <= FREE_AT_MOST {
        return answer(
            Some(Place::LoopAwaits),
            format!(
                "the view runs on the event loop and awaits: no pool thread served it, and a request on another connection waited {:.0}% of what was left of it (<= {:.0}%)",
                share * 100.0,
                FREE_AT_MOST * 100.0
            ),
        );
    }
    answer(
        None,
        format!(
            "the view runs on the event loop, and the loop probe waited {:.0}% of it, between free (<= {:.0}%) and blocked (>= {:.0}%); run it again",
            share * 100.0,
            FREE_AT_MOST * 100.0,
            BLOCKED_AT_LEAST * 100.0
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(share: f64, busy: u32, ran: Option<bool>) -> PlacementTrial {
        PlacementTrial {
            alone_ms: 100.0,
            view_ms: 100.0,
            probe_after_ms: 25.0,
            probe_ms: share * 75.0,
            left_ms: 75.0,
            blocked_share: share,
            pool_busy: Some(busy),
            pool_thread_ran: ran,
            loop_on_cpu_ms: None,
        }
    }

    #[test]
    fn the_three_places_and_no_answer_between() {
        let blocks = read(vec![trial(0.98, 0, Some(false)); 5]);
        assert_eq!(blocks.place, Some(Place::LoopBlocks), "{}", blocks.reason);
        let pool = read(vec![trial(0.02, 1, Some(true)); 5]);
        assert_eq!(pool.place, Some(Place::Pool), "{}", pool.reason);
        // A pool view contending for the GIL slows the probe: still pool.
        let slowed = read(vec![trial(0.5, 1, Some(true)); 5]);
        assert_eq!(slowed.place, Some(Place::Pool), "{}", slowed.reason);
        let awaits = read(vec![trial(0.02, 0, Some(false)); 5]);
        assert_eq!(awaits.place, Some(Place::LoopAwaits), "{}", awaits.reason);
        // The twins: a share between the bands, and tokens that disagree
        // with the witness, give no answer.
        let between = read(vec![trial(0.4, 0, Some(false)); 5]);
        assert_eq!(between.place, None);
        let disagree = read(vec![trial(0.02, 1, Some(false)); 5]);
        assert_eq!(disagree.place, None, "{}", disagree.reason);
        assert!(disagree.reason.contains("disagree"), "{}", disagree.reason);
        // Without the witness the tokens decide alone.
        let no_witness = read(vec![trial(0.02, 1, None); 5]);
        assert_eq!(no_witness.place, Some(Place::Pool));
    }
}
