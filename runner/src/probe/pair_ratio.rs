//! The pair-ratio probe (E19): per mode, one request alone, then two at once
//! on two kept-alive connections, over interleaved trials.
//!
//! Shape, and why:
//! - Two connections and two requests, never four: more asks the scheduler
//!   for fairness, which small CI runners disprove.
//! - Both connections are opened and used before any timing, and each
//!   [`Connection`] is one TCP stream, so set-up is never inside a figure.
//!   Where the server tells the app the peer port, every reply is checked
//!   against the connection it came back on.
//! - The pair is released together: both requests are issued in one poll of
//!   a single-threaded runtime, microseconds apart.
//! - Modes alternate order trial by trial (ABBA...), so drift in the machine
//!   lands on both modes alike; each trial also samples the capacity control.
//! - Every `/work` reply's digest is checked against one computed here; a
//!   mismatch, a non-200 or a lost connection makes the run "broken", which
//!   can never pass.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::control::{CapacityControl, ControlError, ControlSample};
use crate::digest::WorkDigest;
use crate::http::{Connection, HttpError, Reply};
use crate::probe::seeds::Seeds;
use crate::spec::row::{PairMode, PairRatioPlan, Trials};

/// Bounds on waiting, from the options.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub request: Duration,
    /// How long a gate waits for another gate on this machine to finish.
    pub machine_wait: Duration,
}

/// Progress, for reporters.
#[derive(Debug, Clone, Serialize)]
pub struct TrialProgress {
    pub trial: u32,
    pub of: u32,
}

/// What one mode measured.
#[derive(Debug, Clone, Serialize)]
pub struct ModeRun {
    pub name: String,
    pub path: String,
    /// Whether each reply's digest was checked (only `/work` routes have one).
    pub digest_checked: bool,
    pub single_ms: Vec<f64>,
    pub pair_ms: Vec<f64>,
    /// Distinct server threads seen serving this mode's pairs.
    pub pair_threads: usize,
}

/// Why a run cannot be used as evidence at all.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[serde(tag = "cause", rename_all = "kebab-case")]
pub enum Broken {
    #[error("{mode}: request failed on connection :{port}: {error}")]
    Request {
        mode: String,
        port: u16,
        error: HttpError,
    },
    #[error("{mode}: HTTP {status} for {path}: {body}")]
    Status {
        mode: String,
        path: String,
        status: u16,
        body: String,
    },
    #[error("{mode}: wrong digest for {path} (got {got:?}, expected {expected}); the server did not do the work it was asked for")]
    Digest {
        mode: String,
        path: String,
        got: String,
        expected: String,
    },
    #[error("{mode}: the reply on connection :{expected} says the server saw peer port :{seen}; the request did not travel on the kept-alive connection")]
    Connection {
        mode: String,
        expected: u16,
        seen: u16,
    },
    #[error("capacity control: {0}")]
    Control(#[serde(serialize_with = "display")] ControlError),
}

fn display<S: serde::Serializer, T: std::fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// The whole run: both modes and the capacity control, or why it broke.
#[derive(Debug, Clone, Serialize)]
pub struct PairRatioRun {
    pub under_test: ModeRun,
    pub control: ModeRun,
    pub capacity: Vec<ControlSample>,
    pub connection_ports: [u16; 2],
    pub trials_done: u32,
    pub broken: Option<Broken>,
}

struct Session<'a> {
    plan: &'a PairRatioPlan,
    digest: WorkDigest,
    seeds: Seeds,
    limits: Limits,
    conns: [Connection; 2],
}

impl Session<'_> {
    fn url(&mut self, mode: &PairMode) -> (String, Option<u64>) {
        if is_work_route(&mode.path) {
            let seed = self.seeds.next().unwrap_or_default();
            let sep = if mode.path.contains('?') { '&' } else { '?' };
            (
                format!("{}{sep}kib={}&seed={seed}", mode.path, self.plan.work_kib),
                Some(seed),
            )
        } else {
            (mode.path.clone(), None)
        }
    }

    fn check(
        &self,
        mode: &PairMode,
        conn: usize,
        url: &str,
        seed: Option<u64>,
        result: Result<Reply, HttpError>,
    ) -> Result<Reply, Broken> {
        let port = self.conns[conn].local_port();
        let reply = result.map_err(|error| Broken::Request {
            mode: mode.name.clone(),
            port,
            error,
        })?;
        if reply.status != 200 {
            let mut body = reply.text();
            body.truncate(200);
            return Err(Broken::Status {
                mode: mode.name.clone(),
                path: url.into(),
                status: reply.status,
                body,
            });
        }
        if let Some(seen) = reply.served_by.peer_port {
            if seen != port {
                return Err(Broken::Connection {
                    mode: mode.name.clone(),
                    expected: port,
                    seen,
                });
            }
        }
        if let Some(seed) = seed {
            let expected = self.digest.expected(seed);
            let got = reply.text();
            if got.trim() != expected {
                let mut got = got;
                got.truncate(80);
                return Err(Broken::Digest {
                    mode: mode.name.clone(),
                    path: url.into(),
                    got,
                    expected,
                });
            }
        }
        Ok(reply)
    }

    /// One request alone on connection `conn`; its time in ms.
    async fn single(&mut self, mode: &PairMode, conn: usize) -> Result<f64, Broken> {
        let (url, seed) = self.url(mode);
        let result = self.conns[conn].get(&url, self.limits.request).await;
        let reply = self.check(mode, conn, &url, seed, result)?;
        Ok(ms(reply.elapsed))
    }

    /// Two requests at once, one per connection; the pair's time in ms and
    /// the server threads that served them.
    async fn pair(&mut self, mode: &PairMode) -> Result<(f64, [Option<u64>; 2]), Broken> {
        let (url_a, seed_a) = self.url(mode);
        let (url_b, seed_b) = self.url(mode);
        let limit = self.limits.request;
        let [a, b] = &mut self.conns;
        let started = Instant::now();
        let (ra, rb) = tokio::join!(a.get(&url_a, limit), b.get(&url_b, limit));
        let elapsed = started.elapsed();
        let ra = self.check(mode, 0, &url_a, seed_a, ra)?;
        let rb = self.check(mode, 1, &url_b, seed_b, rb)?;
        Ok((
            ms(elapsed),
            [ra.served_by.thread_id, rb.served_by.thread_id],
        ))
    }
}

/// `/work` routes carry fixed work with a digest; anything else does not.
pub fn is_work_route(path: &str) -> bool {
    path == "/work" || path.starts_with("/work?")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the probe against a ready server at `addr`: `trials.min` trials,
/// then one more at a time until `settled` says the figures decide the
/// verdict, or `trials.max`.
pub async fn run(
    addr: SocketAddr,
    plan: &PairRatioPlan,
    trials: Trials,
    control: &mut CapacityControl,
    limits: Limits,
    settled: &dyn Fn(&PairRatioRun) -> bool,
    progress: &mut dyn FnMut(TrialProgress),
) -> PairRatioRun {
    let mut out = PairRatioRun {
        under_test: mode_run(&plan.under_test),
        control: mode_run(&plan.control),
        capacity: Vec::new(),
        connection_ports: [0, 0],
        trials_done: 0,
        broken: None,
    };
    if let Err(broken) = run_into(
        addr, plan, trials, control, limits, settled, progress, &mut out,
    )
    .await
    {
        out.broken = Some(broken);
    }
    out
}

fn mode_run(mode: &PairMode) -> ModeRun {
    ModeRun {
        name: mode.name.clone(),
        path: mode.path.clone(),
        digest_checked: is_work_route(&mode.path),
        single_ms: Vec::new(),
        pair_ms: Vec::new(),
        pair_threads: 0,
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_into(
    addr: SocketAddr,
    plan: &PairRatioPlan,
    trials: Trials,
    control: &mut CapacityControl,
    limits: Limits,
    settled: &dyn Fn(&PairRatioRun) -> bool,
    progress: &mut dyn FnMut(TrialProgress),
    out: &mut PairRatioRun,
) -> Result<(), Broken> {
    let open = |name: &str| {
        let name = name.to_string();
        move |error| Broken::Request {
            mode: name,
            port: 0,
            error,
        }
    };
    let a = Connection::open(addr, limits.request)
        .await
        .map_err(open("connect"))?;
    let b = Connection::open(addr, limits.request)
        .await
        .map_err(open("connect"))?;
    out.connection_ports = [a.local_port(), b.local_port()];
    let mut s = Session {
        plan,
        digest: WorkDigest::new(plan.work_kib),
        seeds: Seeds::new(),
        limits,
        conns: [a, b],
    };

    // Warm-up: every mode paired on both connections, so both connections
    // have carried a request and the server's threads, imports and buffers
    // exist before anything is timed.
    for _ in 0..plan.warmup {
        for mode in [&plan.under_test, &plan.control] {
            s.pair(mode).await?;
        }
    }
    let mut threads: [std::collections::BTreeSet<u64>; 2] = Default::default();
    for trial in 0..trials.max {
        let order: [(usize, &PairMode); 2] = if trial % 2 == 0 {
            [(0, &plan.under_test), (1, &plan.control)]
        } else {
            [(1, &plan.control), (0, &plan.under_test)]
        };
        for (slot, mode) in order {
            let single = s.single(mode, (trial % 2) as usize).await?;
            let (pair, served) = s.pair(mode).await?;
            threads[slot].extend(served.into_iter().flatten());
            let run = if slot == 0 {
                &mut out.under_test
            } else {
                &mut out.control
            };
            run.single_ms.push(single);
            run.pair_ms.push(pair);
        }
        let seed = s.seeds.next().unwrap_or_default();
        let sample = control
            .sample(plan.work_kib, seed, &s.digest, limits.request)
            .await
            .map_err(Broken::Control)?;
        out.capacity.push(sample);
        out.trials_done = trial + 1;
        out.under_test.pair_threads = threads[0].len();
        out.control.pair_threads = threads[1].len();
        progress(TrialProgress {
            trial: trial + 1,
            of: trials.max,
        });
        if trial + 1 >= trials.min && settled(out) {
            break;
        }
    }
    Ok(())
}
