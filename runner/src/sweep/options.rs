//! Validated `runner sweep` options: what the flags asked for, checked once,
//! with messages that name the flag to change. Parsing is `cli`'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::cli::SweepArgs;
use crate::load::route::Route;
use crate::options::report_path;

/// The fixture's app, served when no `--app` is given.
pub const FIXTURE_APP: &str = "app:app";

/// Where each report goes.
#[derive(Debug, Clone, Default)]
pub struct Reports {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    /// `--svg`, else next to `--markdown` (same name, `.svg`).
    pub svg: Option<PathBuf>,
}

/// Validated options.
pub struct SweepOptions {
    pub server: String,
    pub routes: Vec<Arc<Route>>,
    pub threads: Vec<u32>,
    pub workers: Vec<u32>,
    pub connections: u32,
    pub warmup: Duration,
    pub duration: Duration,
    pub request_timeout: Duration,
    pub machine_wait: Duration,
    pub app: String,
    pub app_dir: PathBuf,
    /// Whether the app is the fixture (whose `/work` digests are known).
    pub fixture: bool,
    pub reports: Reports,
}

impl SweepOptions {
    /// `fixture_dir` is the project's fixtures/bareapp.
    pub fn from_args(args: &SweepArgs, fixture_dir: &Path) -> Result<Self, String> {
        let (app, app_dir) = match (&args.app, &args.app_dir) {
            (None, None) => (FIXTURE_APP.to_string(), fixture_dir.to_path_buf()),
            (Some(app), None) => {
                return Err(format!(
                    "--app {app}: give --app-dir DIR too, the folder `{}` is imported from",
                    app.split(':').next().unwrap_or(app)
                ))
            }
            (app, Some(dir)) => {
                let app = app.clone().unwrap_or_else(|| FIXTURE_APP.to_string());
                check_app(&app)?;
                if !dir.is_dir() {
                    return Err(format!(
                        "--app-dir {}: no such folder; give the folder your app module is in",
                        dir.display()
                    ));
                }
                let dir = dir
                    .canonicalize()
                    .map_err(|e| format!("--app-dir {}: cannot resolve it: {e}", dir.display()))?;
                (app, dir)
            }
        };
        let fixture = app == FIXTURE_APP
            && fixture_dir
                .canonicalize()
                .is_ok_and(|f| f == app_dir.canonicalize().unwrap_or_default());
        // The model app (fixtures/modelapp, next to the fixture), whose
        // `/embed` digests are known too.
        let model = app == FIXTURE_APP
            && app_dir.file_name().is_some_and(|n| n == "modelapp")
            && fixture_dir
                .parent()
                .and_then(|p| p.canonicalize().ok())
                .is_some_and(|p| Some(p.as_path()) == app_dir.parent());
        let mut routes: Vec<Arc<Route>> = Vec::new();
        for path in &args.paths {
            let route = if model {
                Route::parse_model(path)?
            } else {
                Route::parse(path, fixture)?
            };
            if routes.iter().any(|r| r.path == route.path) {
                return Err(format!("--path {path:?}: given twice"));
            }
            if routes.iter().any(|r| r.label() == route.label()) {
                return Err(format!(
                    "--path {path:?}: another --path is also {:?}; sweep one of them",
                    route.label()
                ));
            }
            routes.push(Arc::new(route));
        }
        if routes.is_empty() {
            return Err("--path: give at least one route".into());
        }
        let threads = knob_values("--threads", &args.threads, 256)?;
        let workers = knob_values("--workers", &args.workers, 64)?;
        let (duration, warmup) = load_window(
            args.connections,
            &args.duration,
            &args.warmup,
            args.request_timeout_ms,
        )?;
        for (flag, path) in [
            ("--json", &args.json),
            ("--csv", &args.csv),
            ("--markdown", &args.markdown),
            ("--svg", &args.svg),
        ] {
            report_path(flag, path.as_deref())?;
        }
        let svg = args
            .svg
            .clone()
            .or_else(|| args.markdown.as_ref().map(|m| m.with_extension("svg")));
        Ok(Self {
            server: args
                .server
                .clone()
                .unwrap_or_else(|| super::row::DEFAULT_SERVER.into()),
            routes,
            threads,
            workers,
            connections: args.connections,
            warmup,
            duration,
            request_timeout: Duration::from_millis(args.request_timeout_ms),
            machine_wait: Duration::from_millis(args.machine_wait_ms),
            app,
            app_dir,
            fixture,
            reports: Reports {
                json: args.json.clone(),
                csv: args.csv.clone(),
                markdown: args.markdown.clone(),
                svg,
            },
        })
    }
}

/// `MODULE:ATTR`, each a dotted Python name.
fn check_app(app: &str) -> Result<(), String> {
    let ident = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match app.split_once(':') {
        Some((module, attr)) if module.split('.').all(ident) && ident(attr) => Ok(()),
        _ => Err(format!(
            "--app {app:?}: use MODULE:ATTR, e.g. myapp:app (the WSGI callable `app` in myapp.py)"
        )),
    }
}

/// Distinct values from 1 to `max`, in the order given.
fn knob_values(flag: &str, values: &[u32], max: u32) -> Result<Vec<u32>, String> {
    let mut out: Vec<u32> = Vec::new();
    for &v in values {
        if !(1..=max).contains(&v) {
            return Err(format!("{flag} {v}: use 1 to {max}"));
        }
        if out.contains(&v) {
            return Err(format!("{flag}: {v} is given twice"));
        }
        out.push(v);
    }
    Ok(out)
}

/// `5s`, `500ms`, `1.5s`, `2m`. By hand: four units, and a crate's wider
/// grammar (`1h 30m`, `1 day`) would be accepted here and mean nothing.
/// The flags every closed load shares (`runner sweep`, `runner load`),
/// checked once: `--connections`, `--duration`, `--warmup`,
/// `--request-timeout-ms`. Returns the duration and the warm-up.
pub fn load_window(
    connections: u32,
    duration: &str,
    warmup: &str,
    request_timeout_ms: u64,
) -> Result<(Duration, Duration), String> {
    if !(1..=1024).contains(&connections) {
        return Err(format!("--connections {connections}: use 1 to 1024"));
    }
    let d = parse_duration("--duration", duration)?;
    if d < Duration::from_millis(100) || d > Duration::from_secs(3600) {
        return Err(format!("--duration {duration}: use 100ms to 1h"));
    }
    let w = parse_duration("--warmup", warmup)?;
    if w > Duration::from_secs(600) {
        return Err(format!("--warmup {warmup}: use 0s to 10m"));
    }
    if !(100..=600_000).contains(&request_timeout_ms) {
        return Err(format!(
            "--request-timeout-ms {request_timeout_ms}: use 100 to 600000"
        ));
    }
    Ok((d, w))
}

pub fn parse_duration(flag: &str, text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{flag} {text}: give a number and a unit, like 5s or 500ms"))?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "" => return Err(format!("{flag} {text}: give a unit: {text}s or {text}ms")),
        other => {
            return Err(format!(
                "{flag} {text}: unknown unit {other:?}; use ms, s or m"
            ))
        }
    };
    if !seconds.is_finite() || !(0.0..=86_400.0).contains(&seconds) {
        return Err(format!("{flag} {text}: out of range"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("--d", "5s").unwrap(), Duration::from_secs(5));
        assert_eq!(
            parse_duration("--d", "250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(
            parse_duration("--d", "1.5s").unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(
            parse_duration("--d", "2m").unwrap(),
            Duration::from_secs(120)
        );
        for bad in ["5", "s", "5h", "-1s", "1e3s", ""] {
            let e = parse_duration("--duration", bad).unwrap_err();
            assert!(e.starts_with("--duration"), "{bad}: {e}");
        }
    }

    #[test]
    fn apps_and_knobs() {
        assert!(check_app("app:app").is_ok());
        assert!(check_app("pkg.mod:application").is_ok());
        for bad in ["app", "app:", ":app", "my-app:app", "1x:app", "a:b:c"] {
            assert!(check_app(bad).unwrap_err().starts_with("--app"), "{bad}");
        }
        assert_eq!(
            knob_values("--threads", &[1, 2, 4], 256).unwrap(),
            [1, 2, 4]
        );
        assert!(knob_values("--threads", &[0], 256).is_err());
        assert!(knob_values("--threads", &[2, 2], 256).is_err());
        assert!(knob_values("--workers", &[65], 64).is_err());
    }
}
