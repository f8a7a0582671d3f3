//! Server profiles: how to start one server (an argv, never a shell string),
//! how it spells each knob, how to tell it is ready, which program runs it
//! when that is not Python, and which knobs it cannot express (a row needing
//! one is "not applicable", not failed).
//!
//! Placeholders in `argv` and knob arguments are `{name}`s, substituted as
//! plain strings; nothing is ever handed to a shell. The format is documented
//! in specs/servers/README.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{from_yaml, SpecError};
use super::interface::Interface;
use super::locate::locate;
use super::read_bounded;
use super::settings::ServerSettings;

/// The placeholders a profile may use. `{program}` needs a `program:` block;
/// `{threads}` and `{workers}` in `argv` need the row to set that knob.
pub const PLACEHOLDERS: &[&str] = &[
    "python", "host", "port", "app", "app_dir", "threads", "workers", "program",
];

/// A profile as written in `specs/servers/NAME.yaml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    pub name: String,
    /// The interface the server speaks to the app: `wsgi` (the default) or
    /// `asgi`. An ASGI server serves the app through the runner's wrapper
    /// (runner/src/server/gates_asgi.py), which sizes anyio's threadpool.
    #[serde(default)]
    pub interface: Interface,
    /// The PyPI distribution whose version identifies the server.
    pub package: Option<String>,
    /// An external program, run as `{program}`, for servers that are not a
    /// Python package in the runner's interpreter.
    pub program: Option<ProgramFile>,
    /// The command; the element `{knobs}` is replaced by the knob arguments.
    pub argv: Vec<String>,
    #[serde(default)]
    pub knobs: Knobs,
    pub ready: Ready,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Grace between SIGTERM and SIGKILL when stopping, in ms.
    pub stop_grace_ms: u64,
    /// Known deviations of this server that the probes must allow for.
    #[serde(default)]
    pub quirks: Quirks,
    /// Cells this server cannot be judged on by design, by row id: a gate
    /// on such a row that reads "cannot judge" for the declared cause
    /// (its reason contains `when`) is reported as such, with `because`,
    /// and does not fail a run; any other verdict or cause counts as usual.
    #[serde(default)]
    pub cannot_judge: BTreeMap<String, ByDesign>,
}

/// A "cannot judge" a server is known to give by design (see
/// [`ProfileFile::cannot_judge`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ByDesign {
    /// Why the server cannot be judged on this row, for users.
    pub because: String,
    /// Text the gate's reason must contain for the cause to be this one.
    pub when: String,
}

/// Known deviations of a server, declared in its profile so that the
/// generic probes never special-case a server by name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Quirks {
    /// The server hands the app `REMOTE_PORT` with its two bytes swapped
    /// (uWSGI's HTTP router, unbit/uwsgi#1889): a reply naming the swapped
    /// port still came back on its own connection, and the report says so.
    #[serde(default)]
    pub peer_port_byte_swapped: bool,
}

/// Where an external server program is: the variable that names it, else a
/// path. Neither set means the profile is not ready (rows on it are skipped).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramFile {
    /// The environment variable holding the program's path (`M0SERVE`).
    pub env: Option<String>,
    /// Used when the variable is unset: a path (relative to the profile's
    /// folder) or a bare name looked up on PATH.
    pub path: Option<String>,
    /// Arguments that make the program print its version on stdout.
    pub version_args: Option<Vec<String>>,
}

/// How the server spells each knob; a missing knob cannot be expressed.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Knobs {
    pub threads: Option<Knob>,
    pub workers: Option<Knob>,
    /// Arguments that make the master import the app before forking workers.
    pub preload: Option<Knob>,
    /// Arguments that make each worker import the app itself (`[]` when that
    /// is the server's default).
    pub no_preload: Option<Knob>,
}

/// One knob's spelling: a list of arguments, or arguments and environment
/// variables (`{env: {GATES_ASGI_THREADS: "{threads}"}}`, how an ASGI
/// profile sizes the threadpool through the runner's wrapper).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a knob: a list of arguments, or {args: [ARG, ...], env: {NAME: VALUE}} with no other key"
)]
pub enum Knob {
    Args(Vec<String>),
    Spelled(KnobSpelling),
}

/// A knob spelled with environment variables (and arguments).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KnobSpelling {
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

impl Knob {
    pub fn args(&self) -> &[String] {
        match self {
            Knob::Args(args) => args,
            Knob::Spelled(s) => &s.args,
        }
    }

    pub fn env(&self) -> Option<&BTreeMap<String, String>> {
        match self {
            Knob::Args(_) => None,
            Knob::Spelled(s) => Some(&s.env),
        }
    }
}

/// The readiness check: GET `path` gets a complete HTTP reply within
/// `timeout_ms`; with `status`, that reply must carry it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Ready {
    pub path: String,
    pub timeout_ms: u64,
    /// The status the reply must carry; unset: any reply means ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// A validated profile.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    pub name: String,
    pub interface: Interface,
    pub package: Option<String>,
    /// The external program, resolved when the profile was loaded.
    pub program: Option<Program>,
    pub argv: Vec<String>,
    pub knobs: Knobs,
    pub ready: Ready,
    pub env: BTreeMap<String, String>,
    pub stop_grace_ms: u64,
    pub quirks: Quirks,
    pub cannot_judge: BTreeMap<String, ByDesign>,
    pub file: PathBuf,
}

/// An external program as found at load time.
#[derive(Debug, Clone, Serialize)]
pub struct Program {
    /// The variable that names it, if the profile has one.
    pub env: Option<String>,
    /// Where it is; `None` when nothing names it: the profile is not ready.
    pub path: Option<PathBuf>,
    pub version_args: Option<Vec<String>>,
}

/// Values for the placeholders of one start.
pub struct Launch<'a> {
    pub python: &'a Path,
    pub host: &'a str,
    pub port: u16,
    pub app: &'a str,
    pub app_dir: &'a Path,
}

/// A row asks for something this profile cannot give: a knob it cannot
/// express, or a program that nothing points at.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct NotApplicable {
    pub server: String,
    /// The knob (`threads`, `workers`, `preload`, `no_preload`), or `program`.
    pub knob: &'static str,
    pub file: String,
    /// The whole sentence, naming what to change.
    pub message: String,
}

impl NotApplicable {
    fn knob(profile: &Profile, knob: &'static str) -> Self {
        let file = profile.file.display().to_string();
        Self {
            message: format!(
                "{} cannot express `{knob}` (no `knobs.{knob}` in {file})",
                profile.name
            ),
            server: profile.name.clone(),
            knob,
            file,
        }
    }
}

impl Profile {
    /// Why this profile cannot run here, if it cannot: its program is not
    /// named by anything (the message says which variable to set).
    pub fn not_ready(&self) -> Option<String> {
        let program = self.program.as_ref()?;
        if program.path.is_some() {
            return None;
        }
        Some(match &program.env {
            Some(var) => format!(
                "not ready: set {var}=/path/to/{} (profile {})",
                self.name,
                self.file.display()
            ),
            None => format!(
                "not ready: no program; set `program.path` in {}",
                self.file.display()
            ),
        })
    }

    /// The argv for `settings`, or why this server cannot run the row.
    pub fn argv(
        &self,
        launch: &Launch<'_>,
        settings: &ServerSettings,
    ) -> Result<Vec<String>, NotApplicable> {
        if let Some(message) = self.not_ready() {
            return Err(NotApplicable {
                server: self.name.clone(),
                knob: "program",
                file: self.file.display().to_string(),
                message: format!("{} is {message}", self.name),
            });
        }
        let mut knob_args = Vec::new();
        for knob in self.knobs_for(settings)? {
            knob_args.extend(knob.args().iter().cloned());
        }
        let program = self
            .program
            .as_ref()
            .and_then(|p| p.path.as_ref())
            .map(|p| p.display().to_string());
        let mut argv = Vec::new();
        let mut placed = false;
        for arg in &self.argv {
            if arg == "{knobs}" {
                argv.extend(knob_args.iter().cloned());
                placed = true;
            } else {
                argv.push(arg.clone());
            }
        }
        if !placed {
            argv.extend(knob_args);
        }
        argv.into_iter()
            .map(|arg| self.fill(&arg, launch, settings, program.as_deref()))
            .collect()
    }

    /// The knobs `settings` asks for, in argument order, or the first one
    /// this profile cannot express.
    fn knobs_for(&self, settings: &ServerSettings) -> Result<Vec<&Knob>, NotApplicable> {
        let mut knobs = Vec::new();
        for (knob, value, spelling) in [
            ("threads", settings.threads, &self.knobs.threads),
            ("workers", settings.workers, &self.knobs.workers),
        ] {
            if value.is_none() {
                continue;
            }
            let Some(spelling) = spelling else {
                return Err(NotApplicable::knob(self, knob));
            };
            knobs.push(spelling);
        }
        let preload = match settings.preload {
            None => None,
            Some(true) => Some(("preload", &self.knobs.preload)),
            Some(false) => Some(("no_preload", &self.knobs.no_preload)),
        };
        if let Some((knob, spelling)) = preload {
            let Some(spelling) = spelling else {
                return Err(NotApplicable::knob(self, knob));
            };
            knobs.push(spelling);
        }
        Ok(knobs)
    }

    /// The environment the knobs of `settings` set (`{env: ...}` knobs),
    /// placeholders filled, or why this server cannot run the row.
    pub fn knob_env(
        &self,
        launch: &Launch<'_>,
        settings: &ServerSettings,
    ) -> Result<BTreeMap<String, String>, NotApplicable> {
        let mut env = BTreeMap::new();
        for knob in self.knobs_for(settings)? {
            for (name, value) in knob.env().into_iter().flatten() {
                env.insert(name.clone(), self.fill(value, launch, settings, None)?);
            }
        }
        Ok(env)
    }

    /// Substitutes every placeholder in one argument.
    fn fill(
        &self,
        arg: &str,
        launch: &Launch<'_>,
        settings: &ServerSettings,
        program: Option<&str>,
    ) -> Result<String, NotApplicable> {
        let mut out = arg.to_string();
        for name in placeholders_in(arg) {
            let value = match name.as_str() {
                "python" => launch.python.display().to_string(),
                "host" => launch.host.to_string(),
                "port" => launch.port.to_string(),
                "app" => launch.app.to_string(),
                "app_dir" => launch.app_dir.display().to_string(),
                "program" => program.unwrap_or_default().to_string(),
                knob @ ("threads" | "workers") => {
                    let value = if knob == "threads" {
                        settings.threads
                    } else {
                        settings.workers
                    };
                    let Some(value) = value else {
                        let knob: &'static str = if knob == "threads" {
                            "threads"
                        } else {
                            "workers"
                        };
                        return Err(NotApplicable {
                            server: self.name.clone(),
                            knob,
                            file: self.file.display().to_string(),
                            message: format!(
                                "{}'s argv uses {{{knob}}} but the row sets no `server.{knob}` \
                                 (set it in the row, or move the argument under `knobs.{knob}` in {})",
                                self.name,
                                self.file.display()
                            ),
                        });
                    };
                    value.to_string()
                }
                // Unknown names were refused when the profile was loaded.
                _ => continue,
            };
            out = out.replace(&format!("{{{name}}}"), &value);
        }
        Ok(out)
    }
}

/// Reads and validates one profile file. A program the profile names
/// explicitly (a path in `argv`, `program.path`, or a set `program.env`
/// variable) must exist and be executable, or the profile is unusable.
pub fn load_profile(file: &Path) -> Result<Profile, SpecError> {
    let source = read_bounded(file)?;
    if source.trim().is_empty() {
        return Err(SpecError::new(
            file,
            "is empty; a profile needs name, argv, ready and stop_grace_ms (see specs/servers/README.md)",
        ));
    }
    let raw: ProfileFile = serde_norway::from_str(&source).map_err(|e| from_yaml(file, &e))?;
    let err = |path: &[&str], message: String| {
        SpecError::new(file, message)
            .at(locate(&source, path))
            .key(path.join("."))
    };
    if raw.name.trim().is_empty()
        || !raw
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        return Err(err(
            &["name"],
            format!(
                "{:?} is not a server name (letters, digits, -, _ and .)",
                raw.name
            ),
        ));
    }
    if let Some(package) = &raw.package {
        if package.is_empty()
            || !package
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            return Err(err(
                &["package"],
                format!("{package:?} is not a PyPI distribution name"),
            ));
        }
    }
    if raw.argv.is_empty() {
        return Err(err(
            &["argv"],
            "is empty; it must start with the program to run".into(),
        ));
    }
    // No shell: one would re-read every substituted value as shell syntax.
    if let Some(shell) = shell_in(&raw.argv) {
        return Err(err(
            &["argv"],
            format!(
                "runs the shell {shell:?}; start the server's own program from the argv list \
                 (a shell would re-parse every value substituted into it)"
            ),
        ));
    }
    let has_program = raw.program.is_some();
    let check = |key: &[&str], args: &[String]| -> Result<(), SpecError> {
        for arg in args {
            for name in placeholders_in(arg) {
                if name == "knobs" && arg == "{knobs}" && key == ["argv"] {
                    continue;
                }
                if name == "program" && !has_program {
                    return Err(err(
                        key,
                        format!(
                            "{arg:?} uses {{program}} but the profile has no `program:` block saying where it is \
                             (add `program: {{env: VAR}}` or `program: {{path: ...}}`)"
                        ),
                    ));
                }
                if !PLACEHOLDERS.contains(&name.as_str()) {
                    return Err(err(
                        key,
                        format!(
                            "unknown placeholder {{{name}}} in {arg:?}; known: {}{}",
                            PLACEHOLDERS
                                .iter()
                                .map(|p| format!("{{{p}}}"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            if key == ["argv"] {
                                ", and the element {knobs}"
                            } else {
                                ""
                            }
                        ),
                    ));
                }
            }
        }
        Ok(())
    };
    check(&["argv"], &raw.argv)?;
    for (key, knob) in [
        ("threads", &raw.knobs.threads),
        ("workers", &raw.knobs.workers),
        ("preload", &raw.knobs.preload),
        ("no_preload", &raw.knobs.no_preload),
    ] {
        let Some(knob) = knob else { continue };
        check(&["knobs", key], knob.args())?;
        for (name, value) in knob.env().into_iter().flatten() {
            if !env_name(name) {
                return Err(err(
                    &["knobs", key, "env"],
                    format!("{name:?} is not an environment variable name (letters, digits and _)"),
                ));
            }
            check(&["knobs", key, "env"], std::slice::from_ref(value))?;
            if placeholders_in(value).iter().any(|p| p == "program") {
                return Err(err(
                    &["knobs", key, "env"],
                    format!("{value:?}: {{program}} is for argv; an env value may use the others"),
                ));
            }
        }
    }
    let base = file.parent().unwrap_or(Path::new("."));
    let program = match &raw.program {
        None => None,
        Some(p) => Some(resolve_program(p, base, &err)?),
    };
    if has_program && !raw.argv.iter().any(|a| a.contains("{program}")) {
        return Err(err(
            &["program"],
            "is set but `argv` never uses {program}; start argv with \"{program}\"".into(),
        ));
    }
    let mut argv = raw.argv;
    // A literal program (no placeholder) must be there now, not at the first
    // gate: a typo is an unusable profile, not a server that would not start.
    if placeholders_in(&argv[0]).is_empty() {
        match find_executable(&argv[0], base) {
            Ok(found) => {
                if argv[0].contains('/') {
                    argv[0] = found.display().to_string();
                }
            }
            Err(why) => return Err(err(&["argv"], format!("its program {:?} {why}", argv[0]))),
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
    for (row, d) in &raw.cannot_judge {
        if d.because.trim().is_empty() || d.when.trim().is_empty() {
            return Err(err(
                &["cannot_judge", row],
                "needs a `because:` for users and a `when:` the gate's reason contains".into(),
            ));
        }
    }
    if let Some(status) = raw.ready.status {
        if !(100..=599).contains(&status) {
            return Err(err(
                &["ready", "status"],
                format!("is {status}; an HTTP status is between 100 and 599"),
            ));
        }
    }
    if raw.stop_grace_ms > 60_000 {
        return Err(err(
            &["stop_grace_ms"],
            format!("is {}; at most 60000", raw.stop_grace_ms),
        ));
    }
    Ok(Profile {
        name: raw.name,
        interface: raw.interface,
        package: raw.package,
        program,
        argv,
        knobs: raw.knobs,
        ready: raw.ready,
        env: raw.env,
        stop_grace_ms: raw.stop_grace_ms,
        quirks: raw.quirks,
        cannot_judge: raw.cannot_judge,
        file: file.to_path_buf(),
    })
}

/// Finds the program a `program:` block names: the variable if it is set,
/// else `path`; neither gives a profile that is not ready.
fn resolve_program(
    p: &ProgramFile,
    base: &Path,
    err: &dyn Fn(&[&str], String) -> SpecError,
) -> Result<Program, SpecError> {
    if p.env.is_none() && p.path.is_none() {
        return Err(err(
            &["program"],
            "needs `env` (a variable naming the program) or `path`".into(),
        ));
    }
    if let Some(var) = &p.env {
        if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(err(
                &["program", "env"],
                format!("{var:?} is not an environment variable name"),
            ));
        }
    }
    let from_env = p.env.as_ref().and_then(|var| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(|v| (var, v))
    });
    let path = match (from_env, &p.path) {
        (Some((var, value)), _) => {
            let value = value.to_string_lossy().into_owned();
            // The variable is the user's; a relative value means the cwd.
            let found = find_executable(&value, Path::new(".")).map_err(|why| {
                err(
                    &["program", "env"],
                    format!(
                        "{var}={value:?}, but that program {why}; point {var} at the server binary"
                    ),
                )
            })?;
            Some(found)
        }
        (None, Some(path)) => Some(
            find_executable(path, base)
                .map_err(|why| err(&["program", "path"], format!("{path:?} {why}")))?,
        ),
        (None, None) => None,
    };
    Ok(Program {
        env: p.env.clone(),
        path,
        version_args: p.version_args.clone(),
    })
}

/// `name` as an executable file: a path (relative to `base`) when it has a
/// slash, else looked up on PATH. The error completes "the program X ...".
fn find_executable(name: &str, base: &Path) -> Result<PathBuf, String> {
    let search = std::env::var_os("PATH").unwrap_or_default();
    match which::which_in(name, Some(search), base) {
        Ok(path) if name.contains('/') => Ok(std::fs::canonicalize(&path).unwrap_or(path)),
        Ok(path) => Ok(path),
        Err(_) if name.contains('/') => {
            let path = base.join(name);
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            Err(if path.exists() {
                format!("({}) is not an executable file", path.display())
            } else {
                format!("({}) does not exist", path.display())
            })
        }
        Err(_) => Err("is not on PATH; give its full path".to_string()),
    }
}

/// The shell an argv would run, if it starts with one (directly or through
/// `env`).
fn shell_in(argv: &[String]) -> Option<&str> {
    const SHELLS: &[&str] = &[
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "busybox",
    ];
    let base = |a: &str| {
        Path::new(a)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string()
    };
    let mut args = argv.iter();
    let mut program = args.next()?;
    if base(program) == "env" {
        program = args.find(|a| !a.starts_with('-') && !a.contains('='))?;
    }
    SHELLS
        .contains(&base(program).as_str())
        .then_some(program.as_str())
}

/// A POSIX environment variable name.
fn env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const BASE: &str = "name: t\nargv: [\"{python}\", \"-m\", \"srv\", \"--port\", \"{port}\", \"{knobs}\", \"{app}\"]\nknobs:\n  threads: [\"--threads={threads}\"]\nready: {path: /, timeout_ms: 1000}\nstop_grace_ms: 100\n";

    fn launch<'a>(python: &'a Path, dir: &'a Path) -> Launch<'a> {
        Launch {
            python,
            host: "127.0.0.1",
            port: 4242,
            app: "app:app",
            app_dir: dir,
        }
    }

    #[test]
    fn knobs_fill_in_place_and_missing_knobs_are_not_applicable() {
        let dir = tempfile::tempdir().unwrap();
        let p = load_profile(&write(dir.path(), "t.yaml", BASE)).unwrap();
        let py = Path::new("/py");
        let settings = ServerSettings {
            threads: Some(2),
            ..Default::default()
        };
        let argv = p.argv(&launch(py, dir.path()), &settings).unwrap();
        assert_eq!(
            argv,
            [
                "/py",
                "-m",
                "srv",
                "--port",
                "4242",
                "--threads=2",
                "app:app"
            ]
        );
        let workers = ServerSettings {
            workers: Some(2),
            ..Default::default()
        };
        let na = p.argv(&launch(py, dir.path()), &workers).unwrap_err();
        assert_eq!(na.knob, "workers");
        assert!(na.to_string().contains("cannot express `workers`"), "{na}");
    }

    #[test]
    fn env_knobs_set_the_environment_and_not_the_argv() {
        let dir = tempfile::tempdir().unwrap();
        let text = BASE
            .replace("name: t\n", "name: t\ninterface: asgi\n")
            .replace(
                "threads: [\"--threads={threads}\"]",
                "threads: {env: {POOL: \"{threads}\"}}\n  workers: [\"-w\", \"{workers}\"]",
            );
        let p = load_profile(&write(dir.path(), "t.yaml", &text)).unwrap();
        assert_eq!(p.interface, Interface::Asgi);
        let py = Path::new("/py");
        let settings = ServerSettings {
            threads: Some(3),
            workers: Some(2),
            ..Default::default()
        };
        let argv = p.argv(&launch(py, dir.path()), &settings).unwrap();
        assert!(!argv.iter().any(|a| a.contains('3')), "{argv:?}");
        assert!(argv.contains(&"-w".to_string()), "{argv:?}");
        let env = p.knob_env(&launch(py, dir.path()), &settings).unwrap();
        assert_eq!(env.get("POOL").map(String::as_str), Some("3"));
        // The twin: without `threads` the variable is not set at all.
        let none = p
            .knob_env(&launch(py, dir.path()), &ServerSettings::default())
            .unwrap();
        assert!(none.is_empty(), "{none:?}");
        // A profile that says nothing speaks WSGI.
        let wsgi = load_profile(&write(dir.path(), "w.yaml", BASE)).unwrap();
        assert_eq!(wsgi.interface, Interface::Wsgi);
    }

    #[test]
    fn unknown_placeholder_names_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), "t.yaml", &BASE.replace("{port}\"", "{prot}\""));
        let e = load_profile(&f).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("argv"));
        assert!(e.message.contains("{prot}"), "{e}");
    }

    #[test]
    fn program_block_without_a_value_is_not_ready() {
        let dir = tempfile::tempdir().unwrap();
        let text = BASE
            .replace("[\"{python}\", \"-m\", \"srv\"", "[\"{program}\"")
            .replace(
                "name: t\n",
                "name: t\nprogram: {env: GATES_TEST_UNSET_PROGRAM_VAR}\n",
            );
        let p = load_profile(&write(dir.path(), "t.yaml", &text)).unwrap();
        let msg = p.not_ready().unwrap();
        assert!(
            msg.contains("set GATES_TEST_UNSET_PROGRAM_VAR=/path/to/t"),
            "{msg}"
        );
        let na = p
            .argv(
                &launch(Path::new("/py"), dir.path()),
                &ServerSettings::default(),
            )
            .unwrap_err();
        assert_eq!(na.knob, "program");
    }

    #[test]
    fn program_path_resolves_next_to_the_profile() {
        let dir = tempfile::tempdir().unwrap();
        let bin = write(dir.path(), "srv.sh", "#!/bin/sh\n");
        std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let text = BASE
            .replace("[\"{python}\", \"-m\", \"srv\"", "[\"{program}\"")
            .replace("name: t\n", "name: t\nprogram: {path: ./srv.sh}\n");
        let p = load_profile(&write(dir.path(), "t.yaml", &text)).unwrap();
        assert!(p.not_ready().is_none());
        let argv = p
            .argv(
                &launch(Path::new("/py"), dir.path()),
                &ServerSettings::default(),
            )
            .unwrap();
        assert_eq!(Path::new(&argv[0]), std::fs::canonicalize(&bin).unwrap());
        // The same block pointing at nothing is unusable, naming the key.
        let missing = text.replace("./srv.sh", "./nope.sh");
        let e = load_profile(&write(dir.path(), "u.yaml", &missing)).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("program.path"));
    }

    #[test]
    fn threads_in_argv_needs_the_row_to_set_it() {
        let dir = tempfile::tempdir().unwrap();
        let text = BASE.replace("\"{app}\"]", "\"--t\", \"{threads}\", \"{app}\"]");
        let p = load_profile(&write(dir.path(), "t.yaml", &text)).unwrap();
        let py = Path::new("/py");
        let set = ServerSettings {
            threads: Some(3),
            ..Default::default()
        };
        assert!(p
            .argv(&launch(py, dir.path()), &set)
            .unwrap()
            .contains(&"3".to_string()));
        let na = p
            .argv(&launch(py, dir.path()), &ServerSettings::default())
            .unwrap_err();
        assert_eq!(na.knob, "threads");
    }
}
