//! The sweep: one route (or several) under closed-loop load on a fresh
//! server per setting of threads and workers, with the server's CPU from
//! the kernel's accounting beside each figure. The engine measures and
//! emits [`SweepEvent`]s; reporters and exporters (`terminal`, `export/`)
//! turn the [`SweepResult`] into output. Nothing here prints.
//!
//! Discipline, the same as the gates': every setting gets a server of its
//! own (started from its profile, warmed by the load's warm-up, stopped as
//! a whole process group), holds the machine lock while its server runs (a
//! gate or another sweep measuring at the same time would be load), and
//! routes are interleaved setting by setting, so drift in the machine lands
//! on every route alike.

pub mod command;
pub mod cpu;
pub mod export;
pub mod input;
pub mod load_once;
pub mod row;
pub mod table;
pub mod terminal;
pub mod warmup;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::host::process::StopOutcome;
use crate::load::{self, route::Route, LoadEvent, LoadPlan, LoadProgress, LoadResult};
use crate::server::{self, ServerStart, StartError};
use crate::session::Session;
use crate::spec::Profile;
use crate::spec::ServerSettings;

use crate::kernel::pss::{GroupPss, PeakTracker};
use cpu::ServerCpu;

/// What to sweep.
#[derive(Clone)]
pub struct SweepPlan {
    pub profile: Profile,
    /// Interleaved at every setting; each is a line on the plot.
    pub routes: Vec<Arc<Route>>,
    /// Handler threads per setting; empty: the server's default only.
    pub threads: Vec<u32>,
    /// Worker processes per setting; empty: the server's default only.
    pub workers: Vec<u32>,
    pub connections: u32,
    pub warmup: Duration,
    pub duration: Duration,
    pub request_timeout: Duration,
    /// How long each setting waits for the machine lock.
    pub machine_wait: Duration,
    /// `MODULE:ATTR` and the folder it is imported from.
    pub app: String,
    pub app_dir: PathBuf,
    /// Whether the app is the fixture (whose `/work` digests are known).
    pub fixture: bool,
    /// Where each setting's server is polled for readiness.
    pub ready: input::ReadyPath,
    /// The warm-up goes on past `warmup` until every handler thread served
    /// the route and the rate settled, but never past this.
    pub warmup_cap: Duration,
    /// The app's settings given over the profile's environment (a row's
    /// `env:`, `--env`), said in the report; already in `profile.env`.
    pub app_env: std::collections::BTreeMap<String, String>,
}

/// The warm-up's cap by default: a per-thread state built on first use
/// takes seconds on a busy machine, not minutes.
pub const WARMUP_CAP: Duration = Duration::from_secs(10);

/// One point of the sweep: a route on a server with these knobs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Setting {
    /// The route's short name (`releasing`, `holding`, or its path).
    pub label: String,
    pub path: String,
    pub threads: Option<u32>,
    pub workers: Option<u32>,
}

impl Setting {
    /// `threads=2 workers=1 releasing`.
    pub fn describe(&self) -> String {
        let knobs = self.knobs();
        if knobs.is_empty() {
            self.label.clone()
        } else {
            format!("{knobs} {}", self.label)
        }
    }

    /// `threads=2 workers=1`, or empty for the server's defaults.
    pub fn knobs(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = self.threads {
            parts.push(format!("threads={t}"));
        }
        if let Some(w) = self.workers {
            parts.push(format!("workers={w}"));
        }
        parts.join(" ")
    }

    fn server_settings(&self) -> ServerSettings {
        ServerSettings {
            threads: self.threads,
            workers: self.workers,
            preload: None,
            env: Default::default(),
        }
    }

    fn log_name(&self, server: &str, index: usize) -> String {
        let label: String = self
            .label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        format!("sweep.{server}.{:02}.{label}.log", index + 1)
    }
}

/// The settings of a plan, in the order they run: workers, then threads,
/// then routes innermost (interleaved).
pub fn settings(plan: &SweepPlan) -> Vec<Setting> {
    points(plan).into_iter().map(|(s, _)| s).collect()
}

/// Each setting with the route it loads.
fn points(plan: &SweepPlan) -> Vec<(Setting, Arc<Route>)> {
    let opt = |v: &[u32]| -> Vec<Option<u32>> {
        if v.is_empty() {
            vec![None]
        } else {
            v.iter().copied().map(Some).collect()
        }
    };
    let mut out = Vec::new();
    for workers in opt(&plan.workers) {
        for threads in opt(&plan.threads) {
            for route in &plan.routes {
                let setting = Setting {
                    label: route.label(),
                    path: route.path.clone(),
                    threads,
                    workers,
                };
                out.push((setting, route.clone()));
            }
        }
    }
    out
}

/// How one setting ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Measured; every request good (and, for `/work`, every digest right).
    Clean,
    /// Measured, but some requests failed or answered the wrong work: the
    /// figures are not the server's at this setting.
    Errors,
    /// Measured, nothing failed, but no reply finished inside the window:
    /// a reply takes longer than the window here (lengthen `duration`).
    Slow,
    /// The server cannot express a knob of this setting.
    NotApplicable,
    /// Not measured: the server did not start, or the machine stayed busy.
    Failed,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Clean => "clean",
            Status::Errors => "ERRORS",
            Status::Slow => "slow",
            Status::NotApplicable => "not applicable",
            Status::Failed => "not measured",
        }
    }
}

/// The server one setting ran on.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerNote {
    pub argv: Vec<String>,
    pub pgid: i32,
    pub log: PathBuf,
    pub ready_ms: Option<f64>,
    /// How the stop went.
    pub stopped: Option<StopOutcome>,
    /// Set when the server exited by itself during the load.
    pub exited: Option<String>,
}

/// One setting's figures.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SettingResult {
    pub setting: Setting,
    pub status: Status,
    /// Why it is not clean, where it is not.
    pub reason: Option<String>,
    pub server: Option<ServerNote>,
    pub load: Option<LoadResult>,
    /// The server's CPU over the measured window.
    pub cpu: Option<ServerCpu>,
    /// Why there are no CPU figures, where there are none.
    pub cpu_note: Option<String>,
    /// The server's memory: PSS summed over its process group, at its peak
    /// over the measured window (kernel::pss).
    pub pss: Option<GroupPss>,
    /// Why there is no PSS figure, where there is none.
    pub pss_note: Option<String>,
    /// req/s against the first measured setting of the same route.
    pub scaling: Option<f64>,
    /// The warm-up before the window: threads reached, how long.
    pub warmup: Option<warmup::Warmup>,
    pub elapsed_s: f64,
}

impl SettingResult {
    pub fn requests_per_s(&self) -> Option<f64> {
        self.load.as_ref().map(|l| l.requests_per_s)
    }
}

/// The whole sweep.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SweepResult {
    /// The sweep row this ran (`runner sweep ROW`), if one.
    pub row: Option<row::RowRef>,
    pub server: String,
    pub app: String,
    pub app_dir: PathBuf,
    pub connections: u32,
    pub warmup_s: f64,
    pub duration_s: f64,
    pub request_timeout_ms: u64,
    /// The app's settings given over the server profile's environment.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    pub settings: Vec<SettingResult>,
    pub elapsed_s: f64,
    /// The signal that stopped the sweep early, if one did.
    pub interrupted: Option<String>,
}

/// The JSON Schema of `runner sweep --json`
/// (runner/schema/sweep-report.schema.json).
pub fn report_schema() -> String {
    let schema = schemars::schema_for!(SweepResult);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

impl SweepResult {
    /// Every setting measured, and every request of each good.
    pub fn clean(&self) -> bool {
        self.interrupted.is_none()
            && !self.settings.is_empty()
            && self.settings.iter().all(|s| s.status == Status::Clean)
    }
}

/// What the engine reports as it goes.
#[derive(Debug, Clone)]
pub enum SweepEvent<'a> {
    SettingStarted {
        setting: &'a Setting,
        index: usize,
        of: usize,
    },
    ServerReady {
        setting: &'a Setting,
        after: Duration,
        pgid: i32,
    },
    Load {
        setting: &'a Setting,
        progress: LoadProgress,
    },
    SettingFinished {
        result: &'a SettingResult,
        index: usize,
        of: usize,
    },
}

/// Runs every setting of `plan` in order, pushing each result onto `out` as
/// it finishes (so a sweep stopped by a signal keeps what it measured). Err
/// when the session's Python could not be prepared.
pub async fn run(
    session: &Session,
    plan: &SweepPlan,
    out: &mut Vec<SettingResult>,
    emit: &mut dyn FnMut(SweepEvent<'_>),
) -> Result<(), String> {
    let python = &session.python()?.python;
    let all = points(plan);
    let of = all.len();
    for (index, (setting, route)) in all.iter().enumerate() {
        emit(SweepEvent::SettingStarted { setting, index, of });
        let result =
            run_setting(session, python, plan, (setting, index), route.clone(), emit).await;
        emit(SweepEvent::SettingFinished {
            result: &result,
            index,
            of,
        });
        out.push(result);
    }
    scale(out);
    Ok(())
}

/// Fills in each setting's scaling against the first measured setting of
/// the same route.
pub fn scale(results: &mut [SettingResult]) {
    for i in 0..results.len() {
        let base = results[..=i]
            .iter()
            .filter(|r| r.setting.path == results[i].setting.path)
            .find_map(|r| r.requests_per_s().filter(|x| *x > 0.0));
        results[i].scaling = match (results[i].requests_per_s(), base) {
            (Some(x), Some(b)) => Some(x / b),
            _ => None,
        };
    }
}

async fn run_setting(
    session: &Session,
    python: &Path,
    plan: &SweepPlan,
    (setting, index): (&Setting, usize),
    route: Arc<Route>,
    emit: &mut dyn FnMut(SweepEvent<'_>),
) -> SettingResult {
    let started = Instant::now();
    let mut result = SettingResult {
        setting: setting.clone(),
        status: Status::Failed,
        reason: None,
        server: None,
        load: None,
        cpu: None,
        cpu_note: None,
        pss: None,
        pss_note: None,
        scaling: None,
        warmup: None,
        elapsed_s: 0.0,
    };
    // Held until this setting's server is stopped: a server shutting down
    // still burns CPU, which the next measurement would see.
    let lock = match session.lock(plan.machine_wait).await {
        Ok(lock) => lock,
        Err(e) => {
            result.reason = Some(e);
            result.elapsed_s = started.elapsed().as_secs_f64();
            return result;
        }
    };
    let log = session
        .project()
        .logs_dir()
        .join(setting.log_name(&plan.profile.name, index));
    let settings = setting.server_settings();
    let request = ServerStart {
        profile: &plan.profile,
        settings: &settings,
        python,
        app: &plan.app,
        app_dir: &plan.app_dir,
        log: &log,
        ready_path: plan.ready.for_route(&setting.path),
    };
    let starting = match server::spawn(request) {
        Ok(s) => s,
        Err(e) => {
            result.status = match e {
                StartError::NotApplicable(_) => Status::NotApplicable,
                _ => Status::Failed,
            };
            result.reason = Some(e.to_string());
            result.elapsed_s = started.elapsed().as_secs_f64();
            return result;
        }
    };
    let mut note = ServerNote {
        argv: starting.argv().to_vec(),
        pgid: starting.pgid(),
        log: log.clone(),
        ready_ms: None,
        stopped: None,
        exited: None,
    };
    let mut server = match starting.ready().await {
        Ok(s) => s,
        Err(e) => {
            result.reason = Some(format!("server would not start: {e}"));
            result.server = Some(note);
            result.elapsed_s = started.elapsed().as_secs_f64();
            return result;
        }
    };
    note.ready_ms = Some(server.ready_after.as_secs_f64() * 1000.0);
    emit(SweepEvent::ServerReady {
        setting,
        after: server.ready_after,
        pgid: server.pgid(),
    });
    let warm = warmup::run(&warmup::WarmupPlan {
        addr: server.addr,
        route: route.clone(),
        connections: plan.connections,
        // N connections keep at most N requests in flight: no more
        // threads than that can be reached.
        threads: setting.threads.map(|t| {
            t.saturating_mul(setting.workers.unwrap_or(1))
                .min(plan.connections)
        }),
        pgid: server.pgid(),
        at_least: plan.warmup,
        cap: plan.warmup_cap,
        request_timeout: plan.request_timeout,
    })
    .await;
    let warmup_errors = warm.errors.clone();
    result.warmup = Some(warm);
    // The warm-up above is the load's warm-up: the window opens at once.
    let load_plan = LoadPlan {
        addr: server.addr,
        route,
        connections: plan.connections,
        warmup: Duration::ZERO,
        duration: plan.duration,
        request_timeout: plan.request_timeout,
    };
    let cpu_unavailable = cpu::unavailable();
    let pgid = server.pgid();
    let mut before = None;
    let mut cpu_figures: Result<Option<ServerCpu>, String> = Ok(None);
    // PSS at the window's edges and at every progress tick inside it.
    let mut pss = PeakTracker::default();
    let mut load = load::run(&load_plan, &mut |e| match e {
        LoadEvent::WindowStarted => {
            pss.sample(pgid);
            if cpu_unavailable.is_none() {
                before = Some(cpu::open(pgid));
            }
        }
        LoadEvent::WindowEnded => {
            if let Some(b) = before.take() {
                cpu_figures = b.and_then(|b| cpu::close(b, pgid));
            }
            pss.sample(pgid);
        }
        LoadEvent::Progress(progress) => {
            if progress.measuring {
                pss.sample(pgid);
            }
            emit(SweepEvent::Load { setting, progress })
        }
    })
    .await;
    match pss.finish() {
        Ok(p) => result.pss = Some(p),
        Err(e) => result.pss_note = Some(e),
    }
    // A view that raised (5xx): its traceback, read before the shutdown's lines.
    let said = (load.errors.server_error() || load.warmup_errors.server_error())
        .then(|| server.log_tail());
    note.exited = server.exited();
    note.stopped = Some(server.stop());
    drop(lock);
    match cpu_figures {
        Ok(Some(c)) => result.cpu = Some(c),
        Ok(None) => result.cpu_note = cpu_unavailable,
        Err(e) => result.cpu_note = Some(e),
    }
    // The warm-up's failures are the load's warm-up errors, as reported.
    load.warmup_errors.merge(&warmup_errors);
    let failed = load.errors.total() + load.warmup_errors.total();
    let warm_note = result
        .warmup
        .as_ref()
        .map_or_else(String::new, |w| format!(" ({})", w.describe()));
    result.status = if load.clean() && failed == 0 {
        Status::Clean
    } else if failed == 0 {
        Status::Slow
    } else {
        Status::Errors
    };
    if result.status == Status::Slow {
        result.reason = Some(format!(
            "slow, not failing: no reply finished inside the {:.1} s window and none failed; a reply takes longer than that here{warm_note}; lengthen --duration",
            load.window_s
        ));
    } else if result.status == Status::Errors {
        let mut why = Vec::new();
        if load.requests == 0 {
            why.push("no good reply in the measured window".to_string());
        }
        if load.errors.total() > 0 {
            why.push(format!("errors: {}", load.errors.describe()));
        }
        if load.warmup_errors.total() > 0 {
            why.push(format!(
                "errors during the warm-up: {}",
                load.warmup_errors.describe()
            ));
        }
        if let Some(sample) = load
            .errors
            .samples
            .values()
            .chain(load.warmup_errors.samples.values())
            .next()
        {
            why.push(format!("first: {sample}"));
        }
        result.reason = Some(why.join("; "));
    }
    if let (Some(reason), Some(tail)) = (&result.reason, said) {
        result.reason = Some(server::with_log_tail(reason, &log, &tail));
    }
    if let Some(status) = &note.exited {
        result.status = Status::Errors;
        let why = format!(
            "the server exited during the load ({status}); log {}",
            log.display()
        );
        result.reason = Some(match result.reason.take() {
            Some(r) => format!("{why}; {r}"),
            None => why,
        });
    }
    result.server = Some(note);
    result.load = Some(load);
    result.elapsed_s = started.elapsed().as_secs_f64();
    result
}
