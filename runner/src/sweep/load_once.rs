//! `runner load --addr IP:PORT`: one closed-loop load ([`crate::load`])
//! against a server someone else started, as one line (or JSON). No fresh
//! server and no CPU figures: this is the client alone, for comparing it
//! with wrk and oha on the very same server. It ends well only when every
//! request was good.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::input::SweepField;
use super::table::{check_text, num};
use crate::console::{Console, JsonOut};
use crate::exit::Finish;
use crate::input::FieldError;
use crate::load::window::load_window;
use crate::load::{self, route::Route, LoadPlan};

/// What `runner load` is asked.
pub struct LoadCommand {
    /// IP:PORT, on loopback.
    pub addr: String,
    pub path: String,
    /// Check status and body length only (a `/work` not the fixture's).
    pub no_digest: bool,
    pub connections: u32,
    pub duration: String,
    pub warmup: String,
    pub request_timeout_ms: u64,
    pub out: JsonOut,
    /// How a field is named to the user (its flag).
    pub name: fn(&FieldError<SweepField>) -> String,
}

impl LoadCommand {
    fn plan(&self) -> Result<LoadPlan, String> {
        let addr: SocketAddr = self
            .addr
            .parse()
            .map_err(|_| format!("--addr {}: give IP:PORT, like 127.0.0.1:8000", self.addr))?;
        if !addr.ip().is_loopback() {
            return Err(format!(
                "--addr {addr}: only loopback addresses (127.0.0.0/8, ::1) are ever loaded"
            ));
        }
        let route = Route::parse(&self.path, !self.no_digest).map_err(|e| e.named("--path"))?;
        let (duration, warmup) = load_window(
            self.connections,
            &self.duration,
            &self.warmup,
            self.request_timeout_ms,
        )
        .map_err(|e| (self.name)(&e.map(SweepField::from)))?;
        Ok(LoadPlan {
            addr,
            route: Arc::new(route),
            connections: self.connections,
            warmup,
            duration,
            request_timeout: Duration::from_millis(self.request_timeout_ms),
        })
    }
}

pub async fn run(asked: &LoadCommand, console: &dyn Console) -> Result<Finish, String> {
    asked.out.check()?;
    let plan = asked.plan()?;
    let result = load::run(&plan, &mut |_| {}).await;
    if !asked.out.emit_value(console, &result)? {
        let lat = result.latency;
        console.print(&format!(
            "{} on {}: {:.1} req/s, p50 {} ms, p90 {} ms, p99 {} ms, max {} ms; {} requests, errors {}; {}\n",
            result.path,
            plan.addr,
            result.requests_per_s,
            num(lat.map(|l| l.p50_ms), 3),
            num(lat.map(|l| l.p90_ms), 3),
            num(lat.map(|l| l.p99_ms), 3),
            num(lat.map(|l| l.max_ms), 3),
            result.requests,
            result.errors.describe(),
            check_text(&result)
        ));
    }
    Ok(if result.clean() {
        Finish::ok()
    } else {
        Finish::cannot_judge()
    })
}
