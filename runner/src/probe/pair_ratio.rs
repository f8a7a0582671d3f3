//! The pair-ratio probe (E19, and E15's cross-process half): per mode, one
//! request alone, then two at once on two kept-alive connections, over
//! interleaved trials.
//!
//! Shape, and why:
//! - Two connections and two requests, never four: more asks the scheduler
//!   for fairness, which small CI runners disprove. Modes on the same server
//!   share the same two connections.
//! - Both connections are opened and used before any timing, and each
//!   [`Connection`] is one TCP stream, so set-up is never inside a figure.
//!   Where the server tells the app the peer port, every reply is checked
//!   against the connection it came back on.
//! - On a server with several workers, the two connections are chosen to
//!   land on two distinct worker processes (opening more, up to a cap, until
//!   two pids differ), and every reply's pid is checked against its
//!   connection's: two connections land on one worker 30-70% of the time.
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
use crate::reply;
use crate::spec::row::{Mode, PairRatioPlan, Trials};

/// Bounds on waiting, from the options.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub request: Duration,
    /// How long a gate waits for another gate on this machine to finish.
    pub machine_wait: Duration,
}

impl Limits {
    pub const DEFAULT_REQUEST_MS: u64 = 30_000;
    pub const DEFAULT_MACHINE_WAIT_MS: u64 = 900_000;
    /// The limits `runner gate` uses when no flag says otherwise.
    pub const DEFAULT: Limits = Limits {
        request: Duration::from_millis(Self::DEFAULT_REQUEST_MS),
        machine_wait: Duration::from_millis(Self::DEFAULT_MACHINE_WAIT_MS),
    };
}

/// Progress, for reporters.
#[derive(Debug, Clone, Serialize)]
pub struct TrialProgress {
    pub trial: u32,
    pub of: u32,
}

/// Where each mode's server listens, and how many workers it runs.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub addr: SocketAddr,
    pub workers: u32,
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
    /// Distinct worker processes seen serving this mode's pairs.
    pub pair_pids: usize,
    /// The client ports of the two connections this mode used.
    pub connection_ports: [u16; 2],
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
    #[error("{mode}: the reply on connection :{port} came from worker {seen}, but that connection was served by worker {expected}")]
    Worker {
        mode: String,
        port: u16,
        expected: u32,
        seen: u32,
    },
    #[error("{mode}: {opened} connections all landed on one worker ({pid}); cannot put a pair on two processes (raise connections_at_most)")]
    OneWorker { mode: String, opened: u32, pid: u32 },
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
    /// The under-test mode's two connections (client ports).
    pub connection_ports: [u16; 2],
    pub trials_done: u32,
    pub broken: Option<Broken>,
    /// The server reported peer ports byte-swapped (a known uWSGI bug).
    pub peer_port_byte_swapped: bool,
}

/// Two kept-alive connections to one server, and the worker each landed on.
struct Lane {
    conns: [Connection; 2],
    /// Set when the server has several workers: each reply must match.
    pids: Option<[u32; 2]>,
}

struct Session<'a> {
    plan: &'a PairRatioPlan,
    digest: WorkDigest,
    seeds: Seeds,
    limits: Limits,
    lanes: Vec<Lane>,
    /// The lane of [under test, control].
    lane_of: [usize; 2],
    /// Set when a reply named its connection's port byte-swapped.
    swapped_peer_port: std::cell::Cell<bool>,
}

impl Session<'_> {
    fn url(&mut self, mode: &Mode) -> (String, Option<u64>) {
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
        mode: &Mode,
        lane: usize,
        conn: usize,
        url: &str,
        seed: Option<u64>,
        result: Result<Reply, HttpError>,
    ) -> Result<Reply, Broken> {
        let l = &self.lanes[lane];
        let digest = seed.map(|seed| self.digest.expected(seed));
        let asked = reply::Asked {
            mode: &mode.name,
            url,
            port: l.conns[conn].local_port(),
            // The lead makes this a server-profile quirk; until then every
            // server gets uWSGI's (still noted and warned about).
            accept_swapped_port: true,
            pid: l.pids.map(|pids| pids[conn]),
            digest: digest.as_deref(),
        };
        let checked = reply::check(&asked, result)?;
        if checked.peer_port_swapped {
            self.swapped_peer_port.set(true);
        }
        Ok(checked.reply)
    }

    /// One request alone on connection `conn` of the mode's lane; its time in ms.
    async fn single(&mut self, slot: usize, mode: &Mode, conn: usize) -> Result<f64, Broken> {
        let lane = self.lane_of[slot];
        let (url, seed) = self.url(mode);
        let result = self.lanes[lane].conns[conn]
            .get(&url, self.limits.request)
            .await;
        let reply = self.check(mode, lane, conn, &url, seed, result)?;
        Ok(ms(reply.elapsed))
    }

    /// Two requests at once, one per connection of the mode's lane; the
    /// pair's time in ms and who served each.
    async fn pair(
        &mut self,
        slot: usize,
        mode: &Mode,
    ) -> Result<(f64, [(Option<u32>, Option<u64>); 2]), Broken> {
        let lane = self.lane_of[slot];
        let (url_a, seed_a) = self.url(mode);
        let (url_b, seed_b) = self.url(mode);
        let limit = self.limits.request;
        let [a, b] = &mut self.lanes[lane].conns;
        let started = Instant::now();
        let (ra, rb) = tokio::join!(a.get(&url_a, limit), b.get(&url_b, limit));
        let elapsed = started.elapsed();
        let ra = self.check(mode, lane, 0, &url_a, seed_a, ra)?;
        let rb = self.check(mode, lane, 1, &url_b, seed_b, rb)?;
        let who = |r: &Reply| (r.served_by.pid, r.served_by.thread_id);
        Ok((ms(elapsed), [who(&ra), who(&rb)]))
    }
}

/// `/work` routes carry fixed work with a digest; anything else does not.
pub fn is_work_route(path: &str) -> bool {
    path == "/work" || path.starts_with("/work?")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Opens the two connections of a lane. With several workers, keeps opening
/// (up to `cap`) until two connections are served by distinct pids.
async fn open_lane(mode: &Mode, target: Target, cap: u32, limits: Limits) -> Result<Lane, Broken> {
    let fail = |port: u16| {
        let name = mode.name.clone();
        move |error| Broken::Request {
            mode: name,
            port,
            error,
        }
    };
    if target.workers <= 1 {
        let a = Connection::open(target.addr, limits.request)
            .await
            .map_err(fail(0))?;
        let b = Connection::open(target.addr, limits.request)
            .await
            .map_err(fail(0))?;
        return Ok(Lane {
            conns: [a, b],
            pids: None,
        });
    }
    let mut first: Option<(Connection, u32)> = None;
    let mut last_pid = 0;
    for _ in 0..cap {
        let mut c = Connection::open(target.addr, limits.request)
            .await
            .map_err(fail(0))?;
        let port = c.local_port();
        let reply = c.get("/pid", limits.request).await.map_err(fail(port))?;
        let pid = reply
            .served_by
            .pid
            .or_else(|| reply.text().trim().parse().ok())
            .unwrap_or(0);
        last_pid = pid;
        match first.take() {
            None => first = Some((c, pid)),
            Some((f, fpid)) if fpid != pid => {
                return Ok(Lane {
                    conns: [f, c],
                    pids: Some([fpid, pid]),
                })
            }
            Some(keep) => first = Some(keep),
        }
    }
    Err(Broken::OneWorker {
        mode: mode.name.clone(),
        opened: cap,
        pid: last_pid,
    })
}

/// Runs the probe: `trials.min` trials, then one more at a time until
/// `settled` says the figures decide the verdict, or `trials.max`.
/// `targets` are the servers of [under test, control]; equal addresses share
/// one lane of connections.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    targets: [Target; 2],
    plan: &PairRatioPlan,
    trials: Trials,
    connections_cap: u32,
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
        peer_port_byte_swapped: false,
    };
    let args = RunArgs {
        targets,
        plan,
        trials,
        connections_cap,
        limits,
    };
    if let Err(broken) = run_into(&args, control, settled, progress, &mut out).await {
        out.broken = Some(broken);
    }
    out
}

struct RunArgs<'a> {
    targets: [Target; 2],
    plan: &'a PairRatioPlan,
    trials: Trials,
    connections_cap: u32,
    limits: Limits,
}

fn mode_run(mode: &Mode) -> ModeRun {
    ModeRun {
        name: mode.name.clone(),
        path: mode.path.clone(),
        digest_checked: is_work_route(&mode.path),
        single_ms: Vec::new(),
        pair_ms: Vec::new(),
        pair_threads: 0,
        pair_pids: 0,
        connection_ports: [0, 0],
    }
}

async fn run_into(
    args: &RunArgs<'_>,
    control: &mut CapacityControl,
    settled: &dyn Fn(&PairRatioRun) -> bool,
    progress: &mut dyn FnMut(TrialProgress),
    out: &mut PairRatioRun,
) -> Result<(), Broken> {
    let plan = args.plan;
    let modes = [&plan.under_test, &plan.control];
    let mut lanes =
        vec![open_lane(modes[0], args.targets[0], args.connections_cap, args.limits).await?];
    let lane_of = if args.targets[1].addr == args.targets[0].addr {
        [0, 0]
    } else {
        lanes.push(open_lane(modes[1], args.targets[1], args.connections_cap, args.limits).await?);
        [0, 1]
    };
    let ports = |l: &Lane| [l.conns[0].local_port(), l.conns[1].local_port()];
    out.connection_ports = ports(&lanes[0]);
    out.under_test.connection_ports = ports(&lanes[lane_of[0]]);
    out.control.connection_ports = ports(&lanes[lane_of[1]]);
    let mut s = Session {
        plan,
        digest: WorkDigest::new(plan.work_kib),
        seeds: Seeds::new(),
        limits: args.limits,
        lanes,
        lane_of,
        swapped_peer_port: Default::default(),
    };

    // Warm-up: every mode paired on both its connections, so both have
    // carried a request and the server's threads, imports and buffers exist
    // before anything is timed.
    for _ in 0..plan.warmup {
        for (slot, mode) in modes.iter().enumerate() {
            s.pair(slot, mode).await?;
        }
        // The control process warms up too: its first pair starts cold.
        let seed = s.seeds.next().unwrap_or_default();
        control
            .sample(plan.work_kib, seed, &s.digest, args.limits.request)
            .await
            .map_err(Broken::Control)?;
    }
    let mut threads: [std::collections::BTreeSet<(Option<u32>, u64)>; 2] = Default::default();
    let mut pids: [std::collections::BTreeSet<u32>; 2] = Default::default();
    for trial in 0..args.trials.max {
        let order = if trial % 2 == 0 { [0, 1] } else { [1, 0] };
        for slot in order {
            let mode = modes[slot];
            let single = s.single(slot, mode, (trial % 2) as usize).await?;
            let (pair, served) = s.pair(slot, mode).await?;
            for (pid, tid) in served {
                if let Some(tid) = tid {
                    threads[slot].insert((pid, tid));
                }
                pids[slot].extend(pid);
            }
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
            .sample(plan.work_kib, seed, &s.digest, args.limits.request)
            .await
            .map_err(Broken::Control)?;
        out.capacity.push(sample);
        out.trials_done = trial + 1;
        out.peer_port_byte_swapped = s.swapped_peer_port.get();
        out.under_test.pair_threads = threads[0].len();
        out.control.pair_threads = threads[1].len();
        out.under_test.pair_pids = pids[0].len();
        out.control.pair_pids = pids[1].len();
        progress(TrialProgress {
            trial: trial + 1,
            of: args.trials.max,
        });
        if trial + 1 >= args.trials.min && settled(out) {
            break;
        }
    }
    Ok(())
}
