//! `runner load --addr IP:PORT`: one closed-loop load (`runner::load`)
//! against a server someone else started, printed as one line (or JSON).
//! No fresh server and no CPU figures: this is the client alone, for
//! comparing it with wrk and oha on the very same server.
//!
//! Exit code: 0 when every request was good, 2 otherwise.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use runner::host::limits::Limits;
use runner::load::window::load_window;
use runner::load::{self, route::Route, LoadPlan};
use runner::sweep::request::{SweepField, DEFAULT_CONNECTIONS, DEFAULT_DURATION, DEFAULT_PATH};
use runner::sweep::table::{check_text, num};
use runner::verdict::Verdict;

use super::args::{sweep_flag, JsonArgs};
use super::{unusable, Finish};

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The server: a loopback address and port (127.0.0.1:8000).
    #[arg(long, value_name = "IP:PORT")]
    pub addr: String,

    /// The route to load. `/work` is taken to be the fixture's (a fresh seed
    /// per request, every digest checked) unless --no-digest.
    #[arg(
        long,
        default_value = DEFAULT_PATH,
        value_name = "PATH"
    )]
    pub path: String,

    /// Check status and body length only, for a `/work` that is not the
    /// fixture's.
    #[arg(long)]
    pub no_digest: bool,

    #[arg(long, default_value_t = DEFAULT_CONNECTIONS, value_name = "N")]
    pub connections: u32,

    #[arg(long, default_value = DEFAULT_DURATION, value_name = "TIME")]
    pub duration: String,

    #[arg(long, default_value = "0s", value_name = "TIME")]
    pub warmup: String,

    /// Bound on any one request (and on opening a connection).
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    #[command(flatten)]
    pub out: JsonArgs,
}

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
    let route = Route::parse(&args.path, !args.no_digest).map_err(|e| e.named("--path"))?;
    let (duration, warmup) = load_window(
        args.connections,
        &args.duration,
        &args.warmup,
        args.request_timeout_ms,
    )
    .map_err(|e| {
        let e = e.map(SweepField::from);
        e.named(sweep_flag(e.field))
    })?;
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
    if let Err(e) = args.out.check() {
        return unusable(&e);
    }
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => return unusable(&e),
    };
    let result = load::run(&opts.plan, &mut |_| {}).await;
    let printed = match args.out.emit_value(&result) {
        Ok(p) => p,
        Err(e) => return unusable(&e),
    };
    if !printed {
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
