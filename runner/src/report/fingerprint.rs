//! The environment fingerprint of a sign-off (`env.json`): which runner at
//! which commit, which server at which version, which Python, OS and CPU,
//! and how loaded the machine was at the start and the end. A verdict is
//! only as good as the machine it ran on; this says what that machine was.
//! Every outside query is bounded in time, and a value that cannot be
//! learned is `null`, never a guess.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::host::bounded::{self, CommandBounds};
use crate::host::pyenv;
use crate::report::export::iso8601;
use crate::server::status;
use crate::spec::Profile;

/// How long one outside query (git, sysctl, sw_vers) may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Serialize)]
pub struct Fingerprint {
    pub runner_version: String,
    pub git: Git,
    pub server: ServerInfo,
    pub python: PythonInfo,
    pub os: OsInfo,
    pub cpu: CpuInfo,
    pub load_average: LoadAverage,
    pub started_at: String,
    pub finished_at: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Git {
    /// `git rev-parse HEAD` in the project, if it is a git checkout.
    pub commit: Option<String>,
    /// Whether tracked files differ from that commit.
    pub dirty: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    pub name: String,
    /// `granian 2.8.9`, as `runner servers` shows it.
    pub version: Option<String>,
    pub profile: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct PythonInfo {
    pub executable: PathBuf,
    pub version: Option<String>,
    pub implementation: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OsInfo {
    /// `linux`, `macos`.
    pub family: &'static str,
    /// `x86_64`, `aarch64`.
    pub arch: &'static str,
    /// The kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// The distribution or product (`Debian GNU/Linux 12 (bookworm)`, `macOS 14.4`).
    pub name: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuInfo {
    /// The cores this process may use (what the gates compete for).
    pub available: Option<usize>,
    /// The cores online on the machine.
    pub online: Option<usize>,
    pub model: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadAverage {
    /// 1, 5 and 15 minute load averages when the sign-off started.
    pub start: Option<[f64; 3]>,
    /// The same when it ended.
    pub end: Option<[f64; 3]>,
}

impl Fingerprint {
    /// The fingerprint at the start of a run of `profile` under `python`.
    pub fn start(root: &Path, profile: &Profile, python: &Path) -> Self {
        let load = load_average();
        let version = status::statuses(std::slice::from_ref(profile), Some(python))
            .into_iter()
            .next()
            .and_then(|s| s.version);
        let py = pyenv::query(
            python,
            "import platform; print(platform.python_version()); print(platform.python_implementation())",
        )
        .ok();
        let mut py_lines = py.as_deref().unwrap_or_default().lines().map(str::trim);
        let py_version = py_lines.next().filter(|l| !l.is_empty()).map(String::from);
        let py_impl = py_lines.next().filter(|l| !l.is_empty()).map(String::from);
        Self {
            runner_version: env!("CARGO_PKG_VERSION").into(),
            git: git(root),
            server: ServerInfo {
                name: profile.name.clone(),
                version,
                profile: profile.file.clone(),
            },
            python: PythonInfo {
                executable: python.to_path_buf(),
                version: py_version,
                implementation: py_impl,
            },
            os: os_info(),
            cpu: cpu_info(),
            load_average: LoadAverage {
                start: load,
                end: None,
            },
            started_at: iso8601(SystemTime::now()),
            finished_at: None,
        }
    }

    /// Records the end of the run.
    pub fn finish(&mut self) {
        self.load_average.end = load_average();
        self.finished_at = Some(iso8601(SystemTime::now()));
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"cannot render the fingerprint: {e}\"}}"))
            + "\n"
    }

    /// A few Markdown lines for the top of the sign-off report.
    pub fn markdown(&self) -> String {
        let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        let load = |l: &Option<[f64; 3]>| {
            l.map_or("unknown".into(), |l| {
                format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])
            })
        };
        format!(
            "- server: {} ({})\n- runner: {} at {}{}\n- Python: {} {}\n- OS: {} ({} {}, kernel {})\n\
             - CPU: {} ({} available of {} online)\n- load average: {} at the start, {} at the end\n",
            self.server.name,
            or(&self.server.version),
            self.runner_version,
            or(&self.git.commit),
            if self.git.dirty == Some(true) {
                " (with uncommitted changes)"
            } else {
                ""
            },
            or(&self.python.implementation),
            or(&self.python.version),
            or(&self.os.name),
            self.os.family,
            self.os.arch,
            or(&self.os.kernel),
            or(&self.cpu.model),
            self.cpu
                .available
                .map_or("unknown".into(), |n| n.to_string()),
            self.cpu.online.map_or("unknown".into(), |n| n.to_string()),
            load(&self.load_average.start),
            load(&self.load_average.end),
        )
    }
}

fn git(root: &Path) -> Git {
    let commit = capture("git", &["rev-parse", "HEAD"], root)
        .filter(|c| c.len() >= 7 && c.chars().all(|ch| ch.is_ascii_hexdigit()));
    let dirty = commit.as_ref().and_then(|_| {
        capture_raw(
            "git",
            &["status", "--porcelain", "--untracked-files=no"],
            root,
        )
        .map(|out| !out.trim().is_empty())
    });
    Git { commit, dirty }
}

/// The 1, 5 and 15 minute load averages.
pub fn load_average() -> Option<[f64; 3]> {
    let mut loads = [0f64; 3];
    // SAFETY: getloadavg writes at most 3 doubles into the buffer we own.
    let n = unsafe { libc::getloadavg(loads.as_mut_ptr(), 3) };
    (n == 3).then_some(loads)
}

fn os_info() -> OsInfo {
    let kernel = uname_release();
    let name = if cfg!(target_os = "macos") {
        capture("sw_vers", &["-productVersion"], Path::new("/")).map(|v| format!("macOS {v}"))
    } else {
        std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|text| os_release_name(&text))
    };
    OsInfo {
        family: std::env::consts::OS,
        arch: std::env::consts::ARCH,
        kernel,
        name,
    }
}

/// `PRETTY_NAME` from an os-release file.
fn os_release_name(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim().trim_matches('"').to_string())
        .filter(|v| !v.is_empty())
}

fn uname_release() -> Option<String> {
    // SAFETY: uname fills the struct we own; the fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return None;
        }
        let release = std::ffi::CStr::from_ptr(u.release.as_ptr());
        Some(release.to_string_lossy().into_owned())
    }
}

fn cpu_info() -> CpuInfo {
    // SAFETY: sysconf reads a system value and touches no memory of ours.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let model = if cfg!(target_os = "macos") {
        capture(
            "sysctl",
            &["-n", "machdep.cpu.brand_string"],
            Path::new("/"),
        )
    } else {
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpuinfo_model(&t))
    };
    CpuInfo {
        available: std::thread::available_parallelism().ok().map(Into::into),
        online: (online > 0).then_some(online as usize),
        model,
    }
}

/// The CPU model from /proc/cpuinfo (x86 `model name`; Arm boards spell it
/// `Hardware`, `Model` or `cpu model`).
fn cpuinfo_model(text: &str) -> Option<String> {
    ["model name", "cpu model", "Hardware", "Model"]
        .iter()
        .find_map(|key| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
}

/// The first line a program printed, trimmed; `None` on any failure.
fn capture(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    capture_raw(program, args, dir)
        .and_then(|out| out.lines().next().map(|l| l.trim().to_string()))
        .filter(|l| !l.is_empty())
}

/// Everything a program printed on stdout, if it exited 0 within the bound.
fn capture_raw(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    let mut command = Command::new(program);
    command.args(args).current_dir(dir);
    let finished = bounded::run_blocking(command, CommandBounds::new(QUERY_TIMEOUT)).ok()?;
    finished
        .success()
        .then(|| finished.stdout_text().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_distribution_and_cpu_model() {
        let os = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            os_release_name(os).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(os_release_name("NAME=x\n"), None);
        let cpu = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            cpuinfo_model(cpu).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        assert_eq!(cpuinfo_model("processor\t: 0\n"), None);
    }

    #[test]
    fn load_average_is_three_non_negative_numbers() {
        let l = load_average().expect("getloadavg works on Linux and macOS");
        assert!(l.iter().all(|x| x.is_finite() && *x >= 0.0), "{l:?}");
    }
}
