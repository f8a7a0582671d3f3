//! What a sweep asks for: [`SweepInput`], built by the CLI from the flags
//! of `runner sweep` and by `row` from a sweep row's `sweep:` block (it is
//! that block), checked once into a [`SweepPlan`]. A bad value is a
//! [`FieldError`] naming the [`SweepField`]: the CLI turns it into the flag,
//! the row loader into the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SweepPlan;
use crate::host::limits::Limits;
use crate::input::FieldError;
use crate::load::route::Route;
use crate::load::window::{load_window, WindowField};
use crate::spec::resolve_profile;

/// The fixture's app, served when no app is given.
pub const FIXTURE_APP: &str = "app:app";

/// The input's defaults, which the flags and a row's omitted keys take.
pub const DEFAULT_SERVER: &str = "granian";
pub const DEFAULT_PATH: &str = "/work?mode=release&kib=8192";
pub const DEFAULT_THREADS: [u32; 4] = [1, 2, 4, 8];
pub const DEFAULT_CONNECTIONS: u32 = 8;
pub const DEFAULT_DURATION: &str = "5s";
pub const DEFAULT_WARMUP: &str = "1s";

// The doc line below is the row schema's description (a test checks the
// checked-in copy): an input is also a sweep row's `sweep:` block.
/// What to sweep: the flags of `runner sweep`, as keys.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SweepBlock")]
pub struct SweepInput {
    /// Server profile: a name from specs/servers/ (`--server` overrides it).
    #[serde(default = "default_server")]
    pub server: String,
    /// Routes, interleaved at every setting; each is a line on the plot.
    pub paths: Vec<String>,
    /// Handler threads per setting.
    #[serde(default = "default_threads")]
    pub threads: Vec<u32>,
    /// Worker processes per setting; empty: the server's own.
    #[serde(default)]
    pub workers: Vec<u32>,
    /// Kept-alive connections of the closed loop.
    #[serde(default = "default_connections")]
    pub connections: u32,
    /// The measured window of each setting (`5s`, `500ms`, `1m`).
    #[serde(default = "default_duration")]
    pub duration: String,
    /// Load before the window, not counted.
    #[serde(default = "default_warmup")]
    pub warmup: String,
    /// Bound on any one request.
    #[serde(default = "default_request_timeout_ms")]
    pub request_timeout_ms: u64,
    /// Your own WSGI app, `MODULE:ATTR` (needs `app_dir`); the fixture by
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// The folder `app` is imported from, relative to this file's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_dir: Option<PathBuf>,
    /// The path polled until the server answers (any status, unless the
    /// profile asks for one); default: the route under test with `app`,
    /// the profile's `ready.path` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_path: Option<String>,
    /// Environment the server starts with, over its profile's: the app's
    /// own settings (`OPENBLAS_NUM_THREADS: "1"`), which belong to the app
    /// or the row, not to a server profile.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// How long the server may take to answer its first request, in place
    /// of its profile's `ready.timeout_ms`: for an app that loads a model
    /// at import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_timeout_ms: Option<u64>,
    /// How long each setting waits for the machine lock: the caller's, never
    /// a row's.
    #[serde(skip, default = "default_machine_wait_ms")]
    pub machine_wait_ms: u64,
}

fn default_server() -> String {
    DEFAULT_SERVER.into()
}
fn default_threads() -> Vec<u32> {
    DEFAULT_THREADS.to_vec()
}
fn default_connections() -> u32 {
    DEFAULT_CONNECTIONS
}
fn default_duration() -> String {
    DEFAULT_DURATION.into()
}
fn default_warmup() -> String {
    DEFAULT_WARMUP.into()
}
fn default_request_timeout_ms() -> u64 {
    Limits::DEFAULT_REQUEST_MS
}
fn default_machine_wait_ms() -> u64 {
    Limits::DEFAULT_MACHINE_WAIT_MS
}

impl Default for SweepInput {
    fn default() -> Self {
        Self {
            server: default_server(),
            paths: vec![DEFAULT_PATH.into()],
            threads: default_threads(),
            workers: Vec::new(),
            connections: default_connections(),
            duration: default_duration(),
            warmup: default_warmup(),
            request_timeout_ms: default_request_timeout_ms(),
            app: None,
            app_dir: None,
            ready_path: None,
            env: BTreeMap::new(),
            ready_timeout_ms: None,
            machine_wait_ms: default_machine_wait_ms(),
        }
    }
}

/// A field of [`SweepInput`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepField {
    Server,
    Paths,
    Threads,
    Workers,
    Connections,
    Duration,
    Warmup,
    RequestTimeoutMs,
    App,
    AppDir,
    ReadyPath,
    Env,
    ReadyTimeoutMs,
}

impl From<WindowField> for SweepField {
    fn from(f: WindowField) -> Self {
        match f {
            WindowField::Connections => SweepField::Connections,
            WindowField::Duration => SweepField::Duration,
            WindowField::Warmup => SweepField::Warmup,
            WindowField::RequestTimeoutMs => SweepField::RequestTimeoutMs,
        }
    }
}

/// An input that passed its checks, before a profile is chosen.
struct Checked {
    routes: Vec<Arc<Route>>,
    threads: Vec<u32>,
    workers: Vec<u32>,
    duration: Duration,
    warmup: Duration,
    app: String,
    app_dir: PathBuf,
    fixture: bool,
    ready: ReadyPath,
}

/// Where a server's readiness is polled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadyPath {
    /// The profile's `ready.path` (the fixture answers 200 on `/`).
    Profile,
    /// The route under test: the user's app has it, whatever else it
    /// lacks (many have no `/`).
    RouteUnderTest,
    /// `--ready-path PATH` (a row's `ready_path`).
    Given(String),
}

impl ReadyPath {
    /// The path to poll for a setting on `route`; None: the profile's.
    pub fn for_route<'a>(&'a self, route: &'a str) -> Option<&'a str> {
        match self {
            ReadyPath::Profile => None,
            ReadyPath::RouteUnderTest => Some(route),
            ReadyPath::Given(path) => Some(path),
        }
    }

    /// The field checked; the default follows whose app it is.
    fn from_field(given: Option<&str>, fixture: bool) -> Result<Self> {
        match given {
            Some(path) if !path.starts_with('/') || path.chars().any(char::is_whitespace) => {
                Err(FieldError::new(
                    SweepField::ReadyPath,
                    "give a path that starts with / and has no spaces",
                )
                .value(format!("{path:?}")))
            }
            Some(path) => Ok(ReadyPath::Given(path.to_string())),
            None if fixture => Ok(ReadyPath::Profile),
            None => Ok(ReadyPath::RouteUnderTest),
        }
    }
}

type Result<T> = std::result::Result<T, FieldError<SweepField>>;

impl SweepInput {
    /// Checks every field without starting anything (a row loader's check).
    /// `fixture_dir` is the project's fixtures/bareapp.
    pub fn check(&self, fixture_dir: &Path) -> Result<()> {
        self.checked(fixture_dir).map(|_| ())
    }

    /// The plan: every field checked, then the server's profile resolved
    /// from `servers_dir` (specs/servers) and found ready to run here.
    pub fn plan(&self, fixture_dir: &Path, servers_dir: &Path) -> Result<SweepPlan> {
        let c = self.checked(fixture_dir)?;
        let mut profile = resolve_profile(servers_dir, &self.server)
            .map_err(|e| FieldError::new(SweepField::Server, e.to_string()))?;
        profile.env.extend(self.env.clone());
        if let Some(ms) = self.ready_timeout_ms {
            profile.ready.timeout_ms = ms;
        }
        if let Some(why) = profile.not_ready() {
            return Err(FieldError::new(SweepField::Server, why).value(&self.server));
        }
        Ok(SweepPlan {
            profile,
            routes: c.routes,
            threads: c.threads,
            workers: c.workers,
            connections: self.connections,
            warmup: c.warmup,
            duration: c.duration,
            request_timeout: Duration::from_millis(self.request_timeout_ms),
            machine_wait: Duration::from_millis(self.machine_wait_ms),
            app: c.app,
            app_dir: c.app_dir,
            fixture: c.fixture,
            ready: c.ready,
            warmup_cap: super::WARMUP_CAP,
            app_env: self.env.clone(),
        })
    }

    fn checked(&self, fixture_dir: &Path) -> Result<Checked> {
        let (app, app_dir) = match (&self.app, &self.app_dir) {
            (None, None) => (FIXTURE_APP.to_string(), fixture_dir.to_path_buf()),
            (Some(app), None) => {
                return Err(FieldError::new(
                    SweepField::AppDir,
                    format!(
                        "missing: give the folder `{}` is imported from (the app is {app})",
                        app.split(':').next().unwrap_or(app)
                    ),
                ))
            }
            (app, Some(dir)) => {
                let app = app.clone().unwrap_or_else(|| FIXTURE_APP.to_string());
                check_app(&app)?;
                let bad = |message: String| {
                    FieldError::new(SweepField::AppDir, message).value(dir.display())
                };
                if !dir.is_dir() {
                    return Err(bad(
                        "no such folder; give the folder your app module is in".into()
                    ));
                }
                let dir = dir
                    .canonicalize()
                    .map_err(|e| bad(format!("cannot resolve it: {e}")))?;
                (app, dir)
            }
        };
        let fixture = app == FIXTURE_APP
            && fixture_dir
                .canonicalize()
                .is_ok_and(|f| f == app_dir.canonicalize().unwrap_or_default());
        let ready = ReadyPath::from_field(self.ready_path.as_deref(), fixture)?;
        check_env(&self.env)?;
        if let Some(ms) = self.ready_timeout_ms {
            if !(READY_TIMEOUT_MS_MIN..=READY_TIMEOUT_MS_MAX).contains(&ms) {
                return Err(FieldError::new(
                    SweepField::ReadyTimeoutMs,
                    format!(
                        "give {READY_TIMEOUT_MS_MIN} to {READY_TIMEOUT_MS_MAX} ms (an app that loads a model at import may need minutes)"
                    ),
                )
                .value(ms));
            }
        }
        // The model app (fixtures/modelapp, next to the fixture), whose
        // `/embed` digests are known too.
        let model = app == FIXTURE_APP
            && app_dir.file_name().is_some_and(|n| n == "modelapp")
            && fixture_dir
                .parent()
                .and_then(|p| p.canonicalize().ok())
                .is_some_and(|p| Some(p.as_path()) == app_dir.parent());
        let mut routes: Vec<Arc<Route>> = Vec::new();
        for path in &self.paths {
            let route = if model {
                Route::parse_model(path)
            } else {
                Route::parse(path, fixture)
            }
            .map_err(|e| e.map(|()| SweepField::Paths))?;
            let bad = |message: String| {
                FieldError::new(SweepField::Paths, message).value(format!("{path:?}"))
            };
            if routes.iter().any(|r| r.path == route.path) {
                return Err(bad("given twice".into()));
            }
            if routes.iter().any(|r| r.label() == route.label()) {
                return Err(bad(format!(
                    "another route is also {:?}; sweep one of them",
                    route.label()
                )));
            }
            routes.push(Arc::new(route));
        }
        if routes.is_empty() {
            return Err(FieldError::new(
                SweepField::Paths,
                "give at least one route",
            ));
        }
        let threads = knob_values(SweepField::Threads, &self.threads, 256)?;
        let workers = knob_values(SweepField::Workers, &self.workers, 64)?;
        let (duration, warmup) = load_window(
            self.connections,
            &self.duration,
            &self.warmup,
            self.request_timeout_ms,
        )
        .map_err(|e| e.map(SweepField::from))?;
        Ok(Checked {
            routes,
            threads,
            workers,
            duration,
            warmup,
            app,
            app_dir,
            fixture,
            ready,
        })
    }
}

/// The bounds of `ready_timeout_ms`: a second, ten minutes.
pub const READY_TIMEOUT_MS_MIN: u64 = 1_000;
pub const READY_TIMEOUT_MS_MAX: u64 = 600_000;

/// Environment names as POSIX shells take them, values with no NUL (which
/// no process environment can hold); names the runner sets itself for
/// every server are refused, so that no row can quietly change them.
fn check_env(env: &BTreeMap<String, String>) -> Result<()> {
    for (name, value) in env {
        let bad =
            |message: &str| FieldError::new(SweepField::Env, message).value(format!("{name:?}"));
        let first_ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if !first_ok || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad(
                "give a name of letters, digits and _ that does not start with a digit",
            ));
        }
        if value.contains('\0') {
            return Err(bad(
                "its value holds a NUL byte, which no environment can carry",
            ));
        }
    }
    Ok(())
}

/// `MODULE:ATTR`, each a dotted Python name.
fn check_app(app: &str) -> Result<()> {
    let ident = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match app.split_once(':') {
        Some((module, attr)) if module.split('.').all(ident) && ident(attr) => Ok(()),
        _ => Err(FieldError::new(
            SweepField::App,
            "use MODULE:ATTR, e.g. myapp:app (the WSGI callable `app` in myapp.py)",
        )
        .value(format!("{app:?}"))),
    }
}

/// Distinct values from 1 to `max`, in the order given.
fn knob_values(field: SweepField, values: &[u32], max: u32) -> Result<Vec<u32>> {
    let mut out: Vec<u32> = Vec::new();
    for &v in values {
        if !(1..=max).contains(&v) {
            return Err(FieldError::new(field, format!("use 1 to {max}")).value(v));
        }
        if out.contains(&v) {
            return Err(FieldError::new(field, format!("{v} is given twice")));
        }
        out.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_and_knobs() {
        assert!(check_app("app:app").is_ok());
        assert!(check_app("pkg.mod:application").is_ok());
        for bad in ["app", "app:", ":app", "my-app:app", "1x:app", "a:b:c"] {
            assert_eq!(check_app(bad).unwrap_err().field, SweepField::App, "{bad}");
        }
        let t = SweepField::Threads;
        assert_eq!(knob_values(t, &[1, 2, 4], 256).unwrap(), [1, 2, 4]);
        assert!(knob_values(t, &[0], 256).is_err());
        assert!(knob_values(t, &[2, 2], 256).is_err());
        assert!(knob_values(SweepField::Workers, &[65], 64).is_err());
    }
}
