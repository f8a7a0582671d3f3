//! `runner load --addr IP:PORT`: one closed-loop load (`runner::load`)
//! against a server someone else started, printed as one line (or JSON).
//! No fresh server and no CPU figures: this is the client alone, for
//! comparing it with wrk and oha on the very same server.
//!
//! Exit code: 0 when every request was good, 2 otherwise.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use runner::cli::LoadArgs;
use runner::load::{self, route::Route, LoadPlan};
use runner::sweep::options::parse_duration;
use runner::sweep::table::{check_text, num};
use runner::verdict::Verdict;

use super::{unusable, Finish};

struct LoadOptions {
    plan: LoadPlan,
}

fn options(args: &LoadArgs) -> Result<LoadOptions, String> {
    let addr: SocketAddr = args
        .addr
        .parse()
        .map_err(|_| format!("--addr {}: give IP:PORT, like 127.0.0.1:8000", args.addr))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "--addr {addr}: only loopback addresses (127.0.0.0/8, ::1) are ever loaded"
        ));
    }
    let route = Route::parse(&args.path, !args.no_digest)?;
    if !(1..=1024).contains(&args.connections) {
        return Err(format!("--connections {}: use 1 to 1024", args.connections));
    }
    let duration = parse_duration("--duration", &args.duration)?;
    if duration < Duration::from_millis(100) || duration > Duration::from_secs(3600) {
        return Err(format!("--duration {}: use 100ms to 1h", args.duration));
    }
    let warmup = parse_duration("--warmup", &args.warmup)?;
    if warmup > Duration::from_secs(600) {
        return Err(format!("--warmup {}: use 0s to 10m", args.warmup));
    }
    if !(100..=600_000).contains(&args.request_timeout_ms) {
        return Err(format!(
            "--request-timeout-ms {}: use 100 to 600000",
            args.request_timeout_ms
        ));
    }
    Ok(LoadOptions {
        plan: LoadPlan {
            addr,
            route: Arc::new(route),
            connections: args.connections,
            warmup,
            duration,
            request_timeout: Duration::from_millis(args.request_timeout_ms),
        },
    })
}

pub async fn run(args: &LoadArgs) -> Finish {
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => return unusable(&e),
    };
    let result = load::run(&opts.plan, &mut |_| {}).await;
    if args.json {
        match serde_json::to_string_pretty(&result) {
            Ok(s) => println!("{s}"),
            Err(e) => return unusable(&format!("cannot render the result: {e}")),
        }
    } else {
        let lat = result.latency;
        println!(
            "{} on {}: {:.1} req/s, p50 {} ms, p90 {} ms, p99 {} ms, max {} ms; {} requests, errors {}; {}",
            result.path,
            opts.plan.addr,
            result.requests_per_s,
            num(lat.map(|l| l.p50_ms), 3),
            num(lat.map(|l| l.p90_ms), 3),
            num(lat.map(|l| l.p99_ms), 3),
            num(lat.map(|l| l.max_ms), 3),
            result.requests,
            result.errors.describe(),
            check_text(&result)
        );
    }
    if result.clean() {
        Finish::ok()
    } else {
        Finish::verdicts(vec![Verdict::CannotJudge])
    }
}
