//! Measuring a pair-ratio run: per mode, one request alone, then two at
//! once on two kept-alive connections, over interleaved trials.
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
//!   two pids differ, with the first worker busy with the mode's own request
//!   meanwhile: `probe/spread.rs`), and every reply's pid is checked against
//!   its connection's: two connections land on one worker 30-70% of the
//!   time, and on uvicorn nearly always.
//! - The pair is released together: both requests are issued in one poll of
//!   a single-threaded runtime, microseconds apart.
//! - Modes alternate order trial by trial (ABBA...), so drift in the machine
//!   lands on both modes alike. Where there is no scheduler witness, each
//!   trial also samples the capacity control; with one, the witness's own
//!   run-queue figures say whether a core was free (no control process).
//! - Every `/work` reply's digest is checked against one computed here; a
//!   mismatch, a non-200 or a lost connection makes the run "broken", which
//!   can never pass.
//! - Where the kernel keeps per-thread scheduler accounting (Linux), every
//!   timed pair is bracketed by two snapshots of the server's process group
//!   (`schedstat`), taken just before the pair is released and just after
//!   both replies: the scheduler witness (`witness`) of that pair.

use std::time::{Duration, Instant};

use serde::Serialize;

use schemars::JsonSchema;

use super::PairRatioPlan;
use crate::digest::WorkDigest;
use crate::host::limits::Limits;
use crate::http::reply;
use crate::http::{Connection, HttpError, Reply};
use crate::kernel::control::{CapacityControl, ControlError, ControlSample};
use crate::kernel::portable::{self, PairSampler, Reading};
use crate::kernel::quiet::{QuietWaits, QuietWindow};
use crate::kernel::schedstat::{self, Snapshot};
use crate::kernel::witness::{self, Witness};
use crate::probe::seeds::Seeds;
use crate::probe::spread::Spread;
use crate::probe::trial::{ProbeEvent, TrialLoop};
use crate::server::pool::Target;
use crate::spec::{Mode, Trials};

/// What one mode measured.
#[derive(Debug, Clone, Serialize, JsonSchema)]
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
    /// The scheduler witness of each timed pair, in trial order; None for a
    /// pair whose snapshots could not be read.
    pub witness: Vec<Option<Witness>>,
}

pub use crate::http::reply::Broken;

/// The whole run: both modes and the capacity control (where one ran), or
/// why it broke.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PairRatioRun {
    pub under_test: ModeRun,
    pub control: ModeRun,
    /// The capacity control's sample of each trial; empty where no control
    /// ran (the witness's run-queue figures stand in: `core_wait_ratio`).
    pub capacity: Vec<ControlSample>,
    /// The under-test mode's two connections (client ports).
    pub connection_ports: [u16; 2],
    pub trials_done: u32,
    pub broken: Option<Broken>,
    /// The server reported peer ports byte-swapped (a known uWSGI bug).
    pub peer_port_byte_swapped: bool,
    /// Why there is no scheduler witness (not Linux, frozen counters);
    /// None when every pair was witnessed.
    pub witness_unavailable: Option<String>,
    /// Each mode's single-and-pair started in a quiet moment where one came
    /// within a bounded wait (`kernel/quiet.rs`): how the waits went.
    pub quiet: QuietWaits,
    /// KiB of each holding-control request: the plan's `work_kib`, or the
    /// view's own length in the control's work where the plan sizes it so
    /// (`control_as_long_as_view`).
    pub control_kib: u32,
}

/// The shortest control a view's length may size: about 0.75 ms of the
/// fixture's work here, still tens of GIL acquires.
pub const CONTROL_KIB_AT_LEAST: u32 = 1024;

/// The control's KiB for a view as long as `view_ms`, where `work_kib` of
/// the control took `control_ms`: scaled to the view's length, never under
/// [`CONTROL_KIB_AT_LEAST`] nor over `work_kib` (a long view keeps the
/// row's control, which already settles its convoys). `work_kib` when a
/// time is not a positive number.
pub fn control_kib_for(work_kib: u32, view_ms: f64, control_ms: f64) -> u32 {
    if !(view_ms > 0.0 && control_ms > 0.0) {
        return work_kib;
    }
    let scaled = f64::from(work_kib) * view_ms / control_ms;
    // Rounded to whole MiB: the digest is cached per size.
    let mib = (scaled / 1024.0).round() * 1024.0;
    (mib as u32).clamp(CONTROL_KIB_AT_LEAST.min(work_kib), work_kib)
}

/// Two kept-alive connections to one server, and the worker each landed on.
struct Lane {
    conns: [Connection; 2],
    /// Set when the server has several workers: each reply must match.
    pids: Option<[u32; 2]>,
    /// The server's profile declares byte-swapped peer ports (a quirk).
    swapped_ok: bool,
    /// The processes of the server's group, for the witness's snapshots.
    members: Vec<i32>,
}

struct Session<'a> {
    plan: &'a PairRatioPlan,
    /// The releasing work's digests (the capacity control's).
    digest: WorkDigest,
    /// Each mode's digests, [under test, control] (`/work?mode=split` has
    /// its own construction).
    digests: [WorkDigest; 2],
    seeds: Seeds,
    limits: Limits,
    lanes: Vec<Lane>,
    /// The lane of [under test, control].
    lane_of: [usize; 2],
    /// Set when a reply named its connection's port byte-swapped.
    swapped_peer_port: std::cell::Cell<bool>,
    /// Which reading takes the scheduler witness of each pair, if any.
    witness: Option<Reading>,
    /// KiB of [under test, control] where the mode is a `/work` route.
    kib: [u32; 2],
}

/// A pair's first reading, by the witness's reading. The accounting's
/// samples run state beside its counters too: the samples' order (were the
/// serving threads ever runnable at once) is what tells a lock's waiter
/// from a convoy behind a holder kept off a core, which the counters alone
/// cannot on a loaded machine (`kernel/portable/reduce.rs`).
enum Before {
    Accounting(Snapshot, PairSampler),
    Sampled(PairSampler),
}

impl Session<'_> {
    fn url(&mut self, slot: usize, mode: &Mode) -> (String, Option<u64>) {
        if is_work_route(&mode.path) {
            let seed = self.seeds.next().unwrap_or_default();
            (work_url(&mode.path, self.kib[slot], seed), Some(seed))
        } else {
            (mode.path.clone(), None)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        slot: usize,
        mode: &Mode,
        lane: usize,
        conn: usize,
        url: &str,
        seed: Option<u64>,
        result: Result<Reply, HttpError>,
    ) -> Result<Reply, Broken> {
        let l = &self.lanes[lane];
        let digest = seed.map(|seed| self.digests[slot].expected(seed));
        let asked = reply::Asked {
            mode: &mode.name,
            url,
            port: l.conns[conn].local_port(),
            // A profile may declare that its server hands the app the port
            // byte-swapped (uWSGI's router): still this connection, noted.
            accept_swapped_port: l.swapped_ok,
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
        let (url, seed) = self.url(slot, mode);
        let result = self.lanes[lane].conns[conn]
            .get(&url, self.limits.request)
            .await;
        let reply = self.check(slot, mode, lane, conn, &url, seed, result)?;
        Ok(ms(reply.elapsed))
    }

    /// Two requests at once, one per connection of the mode's lane: the
    /// pair's time in ms, who served each, and the pair's scheduler witness.
    async fn pair(&mut self, slot: usize, mode: &Mode) -> Result<PairReading, Broken> {
        let lane = self.lane_of[slot];
        let (url_a, seed_a) = self.url(slot, mode);
        let (url_b, seed_b) = self.url(slot, mode);
        let limit = self.limits.request;
        let members = &self.lanes[lane].members;
        let before = self.witness.map(|r| match r {
            Reading::Accounting => {
                Before::Accounting(Snapshot::of_pids(members), PairSampler::start(members))
            }
            Reading::Sampled => Before::Sampled(PairSampler::start(members)),
        });
        let [a, b] = &mut self.lanes[lane].conns;
        let started = Instant::now();
        let (ra, rb) = tokio::join!(a.get(&url_a, limit), b.get(&url_b, limit));
        let elapsed = started.elapsed();
        let members = &self.lanes[lane].members;
        // The portable reading's pair has no reading when it took too few
        // samples or contradicts the host's idle time: None, as for a
        // snapshot that could not be read.
        let read = before.and_then(|b| match b {
            Before::Accounting(before, sampler) => {
                let after = Snapshot::of_pids(members);
                Some((schedstat::delta(&before, &after), sampler.finish()))
            }
            Before::Sampled(sampler) => {
                let record = sampler.finish();
                portable::reduce::reduce(&record)
                    .ok()
                    .map(|delta| (delta, record))
            }
        });
        let ra = self.check(slot, mode, lane, 0, &url_a, seed_a, ra)?;
        let rb = self.check(slot, mode, lane, 1, &url_b, seed_b, rb)?;
        let who = |r: &Reply| (r.served_by.pid, r.served_by.thread_id);
        let served = [who(&ra), who(&rb)];
        let infer = self.plan.infer_serving_threads;
        let witness = read.map(|(delta, record)| {
            let mut tids: Vec<i32> = served
                .iter()
                .filter_map(|(_, tid)| tid.and_then(|t| i32::try_from(t).ok()))
                .collect();
            if infer && tids.is_empty() {
                tids = witness::busiest(&delta, 2);
            }
            let mut w = witness::witness(&delta, &tids);
            w.sampled = Some(portable::reduce::facts(&record, &delta, &w, &tids));
            w
        });
        Ok(PairReading {
            ms: ms(elapsed),
            served,
            witness,
        })
    }
}

/// One timed pair.
struct PairReading {
    ms: f64,
    served: [(Option<u32>, Option<u64>); 2],
    witness: Option<Witness>,
}

/// The processes of a server's group, for its snapshots (empty where /proc
/// cannot be listed: the witness then reads nothing and says so).
fn members(target: Target) -> Vec<i32> {
    portable::group_members(target.pgid)
}

/// A `/work` route's URL for `kib` of work from `seed`.
fn work_url(path: &str, kib: u32, seed: u64) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}kib={kib}&seed={seed}")
}

/// A mode's request as a busy one (`probe/spread.rs`): its own work, whose
/// reply nothing judges.
pub fn busy_request(path: &str, work_kib: u32) -> String {
    if is_work_route(path) {
        work_url(path, work_kib, 0)
    } else {
        path.to_string()
    }
}

/// `/work` routes carry fixed work with a digest; anything else does not.
pub fn is_work_route(path: &str) -> bool {
    path == "/work" || path.starts_with("/work?")
}

/// The `mode` of a `/work` route (`release` when it names none).
fn work_mode(path: &str) -> &str {
    path.split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.strip_prefix("mode="))
        .next_back()
        .unwrap_or("release")
}

/// Times the view and the control alone, each on both connections, and
/// gives the control's KiB for the view's length ([`control_kib_for`], the
/// fastest of each: noise only adds time).
async fn size_control(s: &mut Session<'_>, modes: [&Mode; 2]) -> Result<u32, Broken> {
    const SINGLES: usize = 4;
    let mut fastest = [f64::INFINITY; 2];
    for i in 0..SINGLES {
        for (slot, mode) in modes.iter().enumerate() {
            let t = s.single(slot, mode, i % 2).await?;
            fastest[slot] = fastest[slot].min(t);
        }
    }
    Ok(control_kib_for(s.plan.work_kib, fastest[0], fastest[1]))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Opens the two connections of a lane. With several workers, keeps opening
/// (up to `cap`) until two connections are served by distinct pids.
async fn open_lane(
    mode: &Mode,
    target: Target,
    cap: u32,
    work_kib: u32,
    limits: Limits,
) -> Result<Lane, Broken> {
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
            swapped_ok: target.peer_port_byte_swapped,
            members: members(target),
        });
    }
    // The mode's own request keeps each worker reached busy while the next
    // connection is accepted (`probe/spread.rs`); its reply is not judged.
    let busy = busy_request(&mode.path, work_kib);
    let mut spread = Spread::new(target.addr, Some(busy), 2, limits);
    let mut last_pid = 0;
    for _ in 0..cap {
        let (conn, reply) = spread.ask("/pid").await.map_err(|e| Broken::Request {
            mode: mode.name.clone(),
            port: e.port,
            error: e.error,
        })?;
        let pid = reply
            .served_by
            .pid
            .or_else(|| reply.text().trim().parse().ok())
            .unwrap_or(0);
        last_pid = pid;
        spread.keep(pid, conn);
        if spread.reached() >= 2 {
            let mut reached = spread.into_reached().into_iter();
            if let (Some((fpid, f)), Some((pid, c))) = (reached.next(), reached.next()) {
                return Ok(Lane {
                    conns: [f, c],
                    pids: Some([fpid, pid]),
                    swapped_ok: target.peer_port_byte_swapped,
                    members: members(target),
                });
            }
            break;
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
/// one lane of connections. `control`, where given, is sampled every trial.
pub async fn run(
    targets: [Target; 2],
    plan: &PairRatioPlan,
    trials: Trials,
    mut control: Option<&mut CapacityControl>,
    limits: Limits,
    settled: &dyn Fn(&PairRatioRun) -> bool,
    emit: &mut dyn FnMut(ProbeEvent),
) -> PairRatioRun {
    let mut out = PairRatioRun {
        under_test: mode_run(&plan.under_test),
        control: mode_run(&plan.control),
        capacity: Vec::new(),
        connection_ports: [0, 0],
        trials_done: 0,
        broken: None,
        peer_port_byte_swapped: false,
        witness_unavailable: None,
        quiet: QuietWaits::default(),
        control_kib: plan.work_kib,
    };
    let args = RunArgs {
        targets,
        plan,
        trials,
        limits,
    };
    if let Err(broken) = run_into(&args, &mut control, settled, emit, &mut out).await {
        out.broken = Some(broken);
    }
    out
}

struct RunArgs<'a> {
    targets: [Target; 2],
    plan: &'a PairRatioPlan,
    trials: Trials,
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
        witness: Vec::new(),
    }
}

async fn run_into(
    args: &RunArgs<'_>,
    control: &mut Option<&mut CapacityControl>,
    settled: &dyn Fn(&PairRatioRun) -> bool,
    emit: &mut dyn FnMut(ProbeEvent),
    out: &mut PairRatioRun,
) -> Result<(), Broken> {
    let plan = args.plan;
    let modes = [&plan.under_test, &plan.control];
    let mut lanes = vec![
        open_lane(
            modes[0],
            args.targets[0],
            plan.connections_at_most,
            plan.work_kib,
            args.limits,
        )
        .await?,
    ];
    let lane_of = if args.targets[1].addr == args.targets[0].addr {
        [0, 0]
    } else {
        lanes.push(
            open_lane(
                modes[1],
                args.targets[1],
                plan.connections_at_most,
                plan.work_kib,
                args.limits,
            )
            .await?,
        );
        [0, 1]
    };
    let ports = |l: &Lane| [l.conns[0].local_port(), l.conns[1].local_port()];
    out.connection_ports = ports(&lanes[0]);
    out.under_test.connection_ports = ports(&lanes[lane_of[0]]);
    out.control.connection_ports = ports(&lanes[lane_of[1]]);
    let mut s = Session {
        plan,
        digest: WorkDigest::cached(plan.work_kib),
        digests: modes.map(|m| WorkDigest::for_mode(work_mode(&m.path), plan.work_kib)),
        seeds: Seeds::new(),
        limits: args.limits,
        lanes,
        lane_of,
        swapped_peer_port: Default::default(),
        witness: None,
        kib: [plan.work_kib; 2],
    };
    // Checked once per process (about 30 ms of spinning), after the servers
    // are up and before anything is timed.
    match portable::reading() {
        Ok(reading) => s.witness = Some(reading),
        Err(why) => out.witness_unavailable = Some(why),
    }
    if s.witness.is_none() && control.is_none() {
        // The wall rules need a free core proved trial by trial.
        return Err(Broken::Control(ControlError::Start(
            "no scheduler witness and no capacity control to tell a free core".into(),
        )));
    }

    // Warm-up: every mode paired on both its connections, so both have
    // carried a request and the server's threads, imports and buffers exist
    // before anything is timed.
    for _ in 0..plan.warmup {
        for (slot, mode) in modes.iter().enumerate() {
            s.pair(slot, mode).await?;
        }
        // The control process warms up too: its first pair starts cold.
        if let Some(control) = control.as_deref_mut() {
            let seed = s.seeds.next().unwrap_or_default();
            control
                .sample(plan.work_kib, seed, &s.digest, args.limits.request)
                .await
                .map_err(Broken::Control)?;
        }
    }
    if plan.control_as_long_as_view
        && !is_work_route(&plan.under_test.path)
        && is_work_route(&plan.control.path)
    {
        let kib = size_control(&mut s, modes).await?;
        s.kib[1] = kib;
        s.digests[1] = WorkDigest::for_mode(work_mode(&plan.control.path), kib);
        out.control_kib = kib;
    }
    let mut threads: [std::collections::BTreeSet<(Option<u32>, u64)>; 2] = Default::default();
    let mut pids: [std::collections::BTreeSet<u32>; 2] = Default::default();
    let mut trials = TrialLoop::new(args.trials);
    let mut quiet = QuietWindow::new(std::thread::available_parallelism().map_or(1, |n| n.get()));
    while let Some(trial) = trials.next(|| settled(out)) {
        for slot in trial.order() {
            let mode = modes[slot];
            quiet.wait().await;
            out.quiet = quiet.waits.clone();
            let single = s.single(slot, mode, (trial.index % 2) as usize).await?;
            // Again before the pair, the reading a free core is proved on:
            // the single takes about as long as a burst load's idle moment
            // on both cores lasts (50 ms of every 200 ms beside two of them),
            // so a pair started right after it mostly missed the moment
            // (measured: the suite beside two burst loads, E19 and E15 on
            // granian found a free core in 0 of 15 trials each).
            quiet.wait().await;
            out.quiet = quiet.waits.clone();
            let reading = s.pair(slot, mode).await?;
            for (pid, tid) in reading.served {
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
            run.pair_ms.push(reading.ms);
            run.witness.push(reading.witness);
        }
        if let Some(control) = control.as_deref_mut() {
            let seed = s.seeds.next().unwrap_or_default();
            let sample = control
                .sample(plan.work_kib, seed, &s.digest, args.limits.request)
                .await
                .map_err(Broken::Control)?;
            out.capacity.push(sample);
        }
        out.trials_done = trial.index + 1;
        out.peer_port_byte_swapped = s.swapped_peer_port.get();
        out.under_test.pair_threads = threads[0].len();
        out.control.pair_threads = threads[1].len();
        out.under_test.pair_pids = pids[0].len();
        out.control.pair_pids = pids[1].len();
        emit(trial.done());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_is_sized_to_the_view() {
        // A 6 ms view against 24 MiB of control taking 18 ms: a third.
        assert_eq!(control_kib_for(24576, 6.0, 18.0), 8192);
        // Longer than the control: the row's control stays.
        assert_eq!(control_kib_for(24576, 40.0, 18.0), 24576);
        // A view of a few microseconds: the floor.
        assert_eq!(control_kib_for(24576, 0.01, 18.0), CONTROL_KIB_AT_LEAST);
        // Nothing timed: the row's control.
        assert_eq!(control_kib_for(24576, f64::NAN, 18.0), 24576);
        assert_eq!(control_kib_for(24576, 6.0, 0.0), 24576);
        assert_eq!(control_kib_for(24576, f64::INFINITY, 18.0), 24576);
        // A row's work under the floor is never raised past itself.
        assert_eq!(control_kib_for(64, 0.01, 18.0), 64);
    }
}
