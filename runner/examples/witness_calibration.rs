//! Calibration of the scheduler witness (issue 10): for each server and
//! background load, times a releasing and a holding `/work` request alone and
//! two at once on two kept-alive connections, and reads the server group's
//! schedstat around every pair. Prints, per cell, the wall ratio, the
//! runnable parallelism P and the serving threads' blocked share, so the row
//! bounds can be set from measurements.
//!
//! ```sh
//! cargo run --release -p runner --example witness_calibration -- [--trials 12] \
//!     [--python .gates/venv/bin/python] [--noise none,spin] [--servers granian,serialise] \
//!     [--json PATH]
//! ```
//!
//! Servers: `granian` (`--blocking-threads 2`), `granian-1` (one thread: the
//! fail the wall ratio already sees), `serialise` (fixtures/faultserver,
//! two threads behind one lock), `faultserver` (its twin, no fault). Every
//! server and every load leads its own process group and is stopped (whole
//! group) at the end of its cell. A bench, not a test: it prints.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use runner::digest::WorkDigest;
use runner::host::process::GroupGuard;
use runner::http::{get_once, Connection, Reply};
use runner::kernel::noise::{Load, Noise};
use runner::kernel::schedstat::{self, Snapshot};
use runner::kernel::witness::{witness, Witness};
use runner::probe::seeds::Seeds;
use runner::stats::{ratio_of_minima, Spread};

const KIB: u32 = 24576;
const LIMIT: Duration = Duration::from_secs(30);

struct Args {
    trials: u32,
    python: PathBuf,
    noises: Vec<Noise>,
    servers: Vec<String>,
    json: Option<PathBuf>,
}

fn parse_args() -> Args {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut a = Args {
        trials: 12,
        python: root.join(".gates/venv/bin/python"),
        noises: vec![Noise::None, Noise::Spin],
        servers: ["granian", "granian-1", "serialise", "faultserver"]
            .map(String::from)
            .to_vec(),
        json: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--trials" => a.trials = value.parse().expect("--trials N"),
            "--python" => a.python = value.into(),
            "--noise" => {
                a.noises = value
                    .split(',')
                    .map(|n| n.parse::<Noise>().expect("--noise none,burst,spin"))
                    .collect()
            }
            "--servers" => a.servers = value.split(',').map(String::from).collect(),
            "--json" => a.json = Some(value.into()),
            _ => panic!("unknown flag {flag}"),
        }
    }
    a
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn server_command(name: &str, python: &Path, port: u16) -> Command {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let app_dir = root.join("fixtures/bareapp");
    let mut c = Command::new(python);
    let port = port.to_string();
    match name {
        "granian" | "granian-1" => {
            let threads = if name == "granian" { "2" } else { "1" };
            c.args(["-m", "granian", "--interface", "wsgi", "--no-ws"])
                .args(["--host", "127.0.0.1", "--port", &port, "--working-dir"])
                .arg(&app_dir)
                .args(["--blocking-threads", threads, "app:app"]);
        }
        "serialise" | "faultserver" => {
            let fault = if name == "serialise" {
                "serialise"
            } else {
                "none"
            };
            c.arg(root.join("fixtures/faultserver/faultserver.py"))
                .args(["--host", "127.0.0.1", "--port", &port, "--app-dir"])
                .arg(&app_dir)
                .args(["--fault", fault, "--threads", "2"]);
        }
        other => panic!("unknown server {other}"),
    }
    let log =
        std::fs::File::create(std::env::temp_dir().join(format!("witness-{name}.log"))).unwrap();
    c.stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
    c
}

async fn wait_ready(addr: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(r) = get_once(addr, "/", Duration::from_secs(1)).await {
            if r.status == 200 {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server at {addr} not ready in 30 s");
}

#[derive(Default, serde::Serialize)]
struct ModeCell {
    single_ms: Vec<f64>,
    pair_ms: Vec<f64>,
    trial_ratio: Vec<f64>,
    parallelism: Vec<f64>,
    serving_parallelism: Vec<f64>,
    blocked: Vec<f64>,
    max_blocked: Vec<f64>,
    /// Run-queue share of the group's runnable time.
    queue_share: Vec<f64>,
    /// Pairs served by one thread only, or whose threads were not read.
    odd_pairs: u32,
    snapshot_us: Vec<f64>,
}

#[derive(serde::Serialize)]
struct Cell {
    server: String,
    noise: &'static str,
    load_before: String,
    load_after: String,
    group_scan_us: f64,
    tasks: usize,
    modes: Vec<(String, ModeCell)>,
}

fn check(r: Result<Reply, runner::http::HttpError>, digest: &WorkDigest, seed: u64) -> Reply {
    let r = r.expect("request failed");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.text().trim(), digest.expected(seed), "wrong digest");
    r
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

async fn cell(args: &Args, server: &str, noise: Noise) -> Cell {
    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut guard = GroupGuard::spawn(
        &mut server_command(server, &args.python, port),
        Duration::from_secs(2),
    )
    .expect("start the server");
    wait_ready(addr).await;
    let pgid = guard.pgid();
    let digest = WorkDigest::new(KIB);
    let mut seeds = Seeds::new();
    let mut a = Connection::open(addr, LIMIT).await.unwrap();
    let mut b = Connection::open(addr, LIMIT).await.unwrap();
    let modes = ["release", "hold"];
    // Warm-up: each connection, each mode, once; lazily spawned threads too.
    for m in modes {
        for c in [&mut a, &mut b] {
            let seed = seeds.next().unwrap();
            let url = format!("/work?mode={m}&kib={KIB}&seed={seed}");
            check(c.get(&url, LIMIT).await, &digest, seed);
        }
    }
    let scan_started = Instant::now();
    let members = schedstat::group_members(pgid).unwrap();
    let group_scan_us = scan_started.elapsed().as_secs_f64() * 1e6;
    let tasks = Snapshot::of_pids(&members).tasks.len();
    let mut load = Load::start(noise, &args.python, Duration::from_secs(600)).unwrap();
    let load_before = loadavg();
    let mut out: Vec<(String, ModeCell)> = modes
        .iter()
        .map(|m| (m.to_string(), ModeCell::default()))
        .collect();
    for n in 0..args.trials {
        let order = if n % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let m = modes[i];
            let cellm = &mut out[i].1;
            let url = |seed: u64| format!("/work?mode={m}&kib={KIB}&seed={seed}");
            let seed = seeds.next().unwrap();
            let single = check(a.get(&url(seed), LIMIT).await, &digest, seed).elapsed;
            let (sa, sb) = (seeds.next().unwrap(), seeds.next().unwrap());
            let (ua, ub) = (url(sa), url(sb));
            let before = Snapshot::of_pids(&members);
            let started = Instant::now();
            let (ra, rb) = tokio::join!(a.get(&ua, LIMIT), b.get(&ub, LIMIT));
            let pair = started.elapsed();
            let after = Snapshot::of_pids(&members);
            let (ra, rb) = (check(ra, &digest, sa), check(rb, &digest, sb));
            let tids: Vec<i32> = [&ra, &rb]
                .iter()
                .filter_map(|r| r.served_by.thread_id.map(|t| t as i32))
                .collect();
            let w: Witness = witness(&schedstat::delta(&before, &after), &tids);
            if w.threads.len() != 2 {
                cellm.odd_pairs += 1;
            }
            let (s_ms, p_ms) = (single.as_secs_f64() * 1e3, pair.as_secs_f64() * 1e3);
            cellm.single_ms.push(s_ms);
            cellm.pair_ms.push(p_ms);
            cellm.trial_ratio.push(p_ms / s_ms);
            cellm.parallelism.push(w.parallelism.unwrap_or(f64::NAN));
            cellm
                .serving_parallelism
                .push(w.serving_parallelism().unwrap_or(f64::NAN));
            cellm.blocked.push(w.blocked_fraction().unwrap_or(f64::NAN));
            cellm
                .max_blocked
                .push(w.max_blocked_fraction().unwrap_or(f64::NAN));
            let runnable = (w.on_cpu_ns + w.run_queue_ns) as f64;
            cellm.queue_share.push(if runnable > 0.0 {
                w.run_queue_ns as f64 / runnable
            } else {
                f64::NAN
            });
            cellm
                .snapshot_us
                .push((before.took + after.took).as_secs_f64() * 1e6 / 2.0);
        }
    }
    let load_after = loadavg();
    if let Some(l) = load.as_mut() {
        l.stop();
    }
    drop((a, b));
    guard.stop();
    Cell {
        server: server.into(),
        noise: noise.name(),
        load_before,
        load_after,
        group_scan_us,
        tasks,
        modes: out,
    }
}

fn spread(v: &[f64]) -> String {
    match Spread::of(v) {
        Some(s) => format!("{:.2} [{:.2}-{:.2}]", s.median, s.min, s.max),
        None => "-".into(),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = parse_args();
    let avail = schedstat::availability();
    println!(
        "schedstat: {:?}; {} trials per cell; {} KiB per request",
        avail, args.trials, KIB
    );
    let mut cells = Vec::new();
    for server in &args.servers {
        for &noise in &args.noises {
            let c = cell(&args, server, noise).await;
            eprintln!(
                "done {} {} (load {} -> {})",
                c.server, c.noise, c.load_before, c.load_after
            );
            cells.push(c);
        }
    }
    println!();
    println!("| server | load | mode | wall ratio (min/min) | per-trial wall ratio med [range] | P med [range] | P of the serving threads med [range] | serving threads blocked med [range] | most blocked thread med [range] | run-queue share of runnable | odd pairs | loadavg start -> end |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for c in &cells {
        for (m, x) in &c.modes {
            println!(
                "| {} | {} | {} | {:.2}x | {} | {} | {} | {} | {} | {} | {} | {} -> {} |",
                c.server,
                c.noise,
                if m == "release" {
                    "releasing"
                } else {
                    "holding"
                },
                ratio_of_minima(&x.pair_ms, &x.single_ms).unwrap_or(f64::NAN),
                spread(&x.trial_ratio),
                spread(&x.parallelism),
                spread(&x.serving_parallelism),
                spread(&x.blocked),
                spread(&x.max_blocked),
                spread(&x.queue_share),
                x.odd_pairs,
                c.load_before,
                c.load_after,
            );
        }
    }
    println!();
    println!("| server | tasks in group | group scan us | snapshot (of_pids) us med [range] |");
    println!("|---|---|---|---|");
    for c in &cells {
        let snaps: Vec<f64> = c
            .modes
            .iter()
            .flat_map(|(_, m)| m.snapshot_us.iter().copied())
            .collect();
        println!(
            "| {} {} | {} | {:.0} | {} |",
            c.server,
            c.noise,
            c.tasks,
            c.group_scan_us,
            spread(&snaps)
        );
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&cells).unwrap()).unwrap();
    }
}
