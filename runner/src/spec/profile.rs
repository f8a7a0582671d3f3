//! Server profiles: how to start one server (an argv, never a shell string),
//! how it spells each knob, how to tell it is ready, and which knobs it
//! cannot express (a row needing one is "not applicable", not failed).
//!
//! Placeholders in `argv` and knob arguments are whole-word `{name}`s,
//! substituted as plain strings; nothing is ever handed to a shell.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{from_yaml, SpecError};
use super::locate::locate;
use super::row::{read_bounded, ServerSettings};

/// The placeholders a profile may use.
pub const PLACEHOLDERS: &[&str] = &[
    "python", "host", "port", "app", "app_dir", "threads", "workers",
];

/// A profile as written in `specs/servers/NAME.yaml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    pub name: String,
    /// The PyPI distribution whose version identifies the server.
    pub package: Option<String>,
    /// The command; the element `{knobs}` is replaced by the knob arguments.
    pub argv: Vec<String>,
    #[serde(default)]
    pub knobs: Knobs,
    pub ready: Ready,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Grace between SIGTERM and SIGKILL when stopping, in ms.
    pub stop_grace_ms: u64,
}

/// How the server spells each knob; a missing knob cannot be expressed.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Knobs {
    pub threads: Option<Vec<String>>,
    pub workers: Option<Vec<String>>,
    /// Arguments that make the master import the app before forking workers.
    pub preload: Option<Vec<String>>,
    /// Arguments that make each worker import the app itself (`[]` when that
    /// is the server's default).
    pub no_preload: Option<Vec<String>>,
}

/// The readiness check: GET `path` answers 200 within `timeout_ms`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Ready {
    pub path: String,
    pub timeout_ms: u64,
}

/// A validated profile.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    pub name: String,
    pub package: Option<String>,
    pub argv: Vec<String>,
    pub knobs: Knobs,
    pub ready: Ready,
    pub env: BTreeMap<String, String>,
    pub stop_grace_ms: u64,
    pub file: PathBuf,
}

/// Values for the placeholders of one start.
pub struct Launch<'a> {
    pub python: &'a Path,
    pub host: &'a str,
    pub port: u16,
    pub app: &'a str,
    pub app_dir: &'a Path,
}

/// A row asks for a knob this profile cannot express.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{server} cannot express `{knob}` (no `knobs.{knob}` in {file})")]
pub struct NotApplicable {
    pub server: String,
    pub knob: &'static str,
    pub file: String,
}

impl Profile {
    /// The argv for `settings`, or which knob this server cannot express.
    pub fn argv(
        &self,
        launch: &Launch<'_>,
        settings: &ServerSettings,
    ) -> Result<Vec<String>, NotApplicable> {
        let mut knob_args = Vec::new();
        for (knob, value, spelling) in [
            ("threads", settings.threads, &self.knobs.threads),
            ("workers", settings.workers, &self.knobs.workers),
        ] {
            let Some(value) = value else { continue };
            let Some(spelling) = spelling else {
                return Err(NotApplicable {
                    server: self.name.clone(),
                    knob,
                    file: self.file.display().to_string(),
                });
            };
            let value = value.to_string();
            knob_args.extend(
                spelling
                    .iter()
                    .map(|a| a.replace(&format!("{{{knob}}}"), &value)),
            );
        }
        let preload = match settings.preload {
            None => None,
            Some(true) => Some(("preload", &self.knobs.preload)),
            Some(false) => Some(("no_preload", &self.knobs.no_preload)),
        };
        if let Some((knob, spelling)) = preload {
            let Some(spelling) = spelling else {
                return Err(NotApplicable {
                    server: self.name.clone(),
                    knob,
                    file: self.file.display().to_string(),
                });
            };
            knob_args.extend(spelling.iter().cloned());
        }
        let fill = |s: &str| {
            s.replace("{python}", &launch.python.display().to_string())
                .replace("{host}", launch.host)
                .replace("{port}", &launch.port.to_string())
                .replace("{app_dir}", &launch.app_dir.display().to_string())
                .replace("{app}", launch.app)
        };
        let mut argv = Vec::new();
        let mut placed = false;
        for arg in &self.argv {
            if arg == "{knobs}" {
                argv.extend(knob_args.iter().map(|a| fill(a)));
                placed = true;
            } else {
                argv.push(fill(arg));
            }
        }
        if !placed {
            argv.extend(knob_args.iter().map(|a| fill(a)));
        }
        Ok(argv)
    }
}

/// Reads and validates one profile file.
pub fn load_profile(file: &Path) -> Result<Profile, SpecError> {
    let source = read_bounded(file)?;
    if source.trim().is_empty() {
        return Err(SpecError::new(
            file,
            "is empty; a profile needs name, argv, ready and stop_grace_ms (see specs/README.md)",
        ));
    }
    let raw: ProfileFile = serde_norway::from_str(&source).map_err(|e| from_yaml(file, &e))?;
    let err = |path: &[&str], message: String| {
        SpecError::new(file, message)
            .at(locate(&source, path))
            .key(path.join("."))
    };
    if raw.argv.is_empty() {
        return Err(err(
            &["argv"],
            "is empty; it must start with the program to run".into(),
        ));
    }
    let check = |key: &[&str], args: &[String], extra: Option<&str>| -> Result<(), SpecError> {
        for arg in args {
            for name in placeholders_in(arg) {
                let known = PLACEHOLDERS.contains(&name.as_str())
                    || Some(name.as_str()) == extra
                    || (name == "knobs" && arg == "{knobs}");
                if !known {
                    return Err(err(
                        key,
                        format!(
                            "unknown placeholder {{{name}}} in {arg:?}; known: {}",
                            PLACEHOLDERS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    };
    check(&["argv"], &raw.argv, None)?;
    if let Some(t) = &raw.knobs.threads {
        check(&["knobs", "threads"], t, Some("threads"))?;
    }
    if let Some(w) = &raw.knobs.workers {
        check(&["knobs", "workers"], w, Some("workers"))?;
    }
    for (key, args) in [
        ("preload", &raw.knobs.preload),
        ("no_preload", &raw.knobs.no_preload),
    ] {
        if let Some(args) = args {
            check(&["knobs", key], args, None)?;
        }
    }
    if !raw.ready.path.starts_with('/') {
        return Err(err(
            &["ready", "path"],
            format!("{:?} must start with /", raw.ready.path),
        ));
    }
    if !(100..=600_000).contains(&raw.ready.timeout_ms) {
        return Err(err(
            &["ready", "timeout_ms"],
            format!(
                "is {}; it must be between 100 and 600000",
                raw.ready.timeout_ms
            ),
        ));
    }
    if raw.stop_grace_ms > 60_000 {
        return Err(err(
            &["stop_grace_ms"],
            format!("is {}; at most 60000", raw.stop_grace_ms),
        ));
    }
    Ok(Profile {
        name: raw.name,
        package: raw.package,
        argv: raw.argv,
        knobs: raw.knobs,
        ready: raw.ready,
        env: raw.env,
        stop_grace_ms: raw.stop_grace_ms,
        file: file.to_path_buf(),
    })
}

fn placeholders_in(arg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push(rest[open + 1..open + close].to_string());
        rest = &rest[open + close + 1..];
    }
    out
}
