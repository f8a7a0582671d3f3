//! Where the project's files are: specs/, the fixture app, and the state
//! folder (virtualenv, server logs, locks) that the runner owns. In a
//! checkout the state is its `.gates/`; an installed runner (no checkout)
//! unpacks its embedded files (`host::embedded`) into the user's cache and
//! keeps its state there too, never in the current folder.

use std::path::{Path, PathBuf};

/// The folder under the user's cache (`$XDG_CACHE_HOME` or `~/.cache`):
/// the wheel's distribution name, so that it names what made it.
pub const CACHE_NAME: &str = "concurrency-gates";

/// The project the runner works in.
#[derive(Debug, Clone)]
pub struct Project {
    /// Holds specs/ and fixtures/.
    pub root: PathBuf,
    /// The runner's state: the venv, logs, locks.
    state: PathBuf,
}

impl Project {
    /// A checkout at `root`, its state in `root/.gates`.
    pub fn checkout(root: PathBuf) -> Self {
        let state = root.join(".gates");
        Self { root, state }
    }

    /// `explicit` (from `--project-dir`), else the nearest folder at or above
    /// the current directory that holds `specs/` and `fixtures/bareapp/`,
    /// else the checkout this binary was built in when it runs from there
    /// (`cargo run`, the tests), else the files embedded in the binary,
    /// unpacked into the user's cache.
    pub fn locate(explicit: Option<&Path>) -> Result<Self, String> {
        if let Some(dir) = explicit {
            if !is_root(dir) {
                return Err(format!(
                    "--project-dir {}: no specs/ and fixtures/bareapp/ there; point it at the gates checkout, or leave it out to use the rows built into the runner",
                    dir.display()
                ));
            }
            return Ok(Self::checkout(dir.to_path_buf()));
        }
        if let Ok(cwd) = std::env::current_dir() {
            if let Some(root) = cwd.ancestors().find(|d| is_root(d)) {
                return Ok(Self::checkout(root.to_path_buf()));
            }
        }
        if let Some(root) = built_checkout() {
            return Ok(Self::checkout(root));
        }
        Self::installed(&cache_dir(|k| std::env::var_os(k))?)
    }

    /// The embedded files unpacked under `cache`, with the state there too.
    pub fn installed(cache: &Path) -> Result<Self, String> {
        let root = super::embedded::unpack(cache).map_err(|e| {
            format!(
                "cannot unpack the runner's rows and fixtures into {}: {e}; set XDG_CACHE_HOME to a writable folder, or pass --project-dir to a checkout",
                cache.display()
            )
        })?;
        Ok(Self {
            root,
            state: cache.to_path_buf(),
        })
    }

    pub fn specs_dir(&self) -> PathBuf {
        self.root.join("specs")
    }

    pub fn servers_dir(&self) -> PathBuf {
        self.root.join("specs").join("servers")
    }

    pub fn app_dir(&self) -> PathBuf {
        self.fixture_dir("bareapp")
    }

    /// A fixture app's folder, fixtures/NAME (a row's `app:`).
    pub fn fixture_dir(&self, name: &str) -> PathBuf {
        self.root.join("fixtures").join(name)
    }

    /// The runner's own state: `.gates/` in a checkout (ignored by git),
    /// the cache folder otherwise.
    pub fn state_dir(&self) -> PathBuf {
        self.state.clone()
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.state_dir().join("logs")
    }
}

fn is_root(dir: &Path) -> bool {
    dir.join("specs").is_dir() && dir.join("fixtures").join("bareapp").is_dir()
}

/// The checkout this binary was built from, if the binary runs from inside
/// it (its target/). A binary installed elsewhere (the wheel) never reads
/// the folder of the machine that built it, even when that folder exists.
fn built_checkout() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let root = root.canonicalize().ok()?;
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    (exe.starts_with(&root) && is_root(&root)).then_some(root)
}

/// `$XDG_CACHE_HOME/concurrency-gates`, else `$HOME/.cache/concurrency-gates`
/// (the XDG base directory rule: a relative `XDG_CACHE_HOME` is ignored).
fn cache_dir(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<PathBuf, String> {
    let absolute = |k: &str| var(k).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = absolute("XDG_CACHE_HOME") {
        return Ok(xdg.join(CACHE_NAME));
    }
    if let Some(home) = absolute("HOME") {
        return Ok(home.join(".cache").join(CACHE_NAME));
    }
    Err("no checkout here and no cache folder: set XDG_CACHE_HOME or HOME, or pass --project-dir to a gates checkout".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_cache_is_xdg_cache_home_else_home_dot_cache() {
        let both = env(&[("XDG_CACHE_HOME", "/x/cache"), ("HOME", "/home/u")]);
        assert_eq!(
            cache_dir(both).unwrap(),
            Path::new("/x/cache/concurrency-gates")
        );
        let home = env(&[("HOME", "/home/u")]);
        assert_eq!(
            cache_dir(home).unwrap(),
            Path::new("/home/u/.cache/concurrency-gates")
        );
        // Its twins: a relative XDG_CACHE_HOME is ignored, and with neither
        // the error names both variables.
        let relative = env(&[("XDG_CACHE_HOME", "cache"), ("HOME", "/home/u")]);
        assert_eq!(
            cache_dir(relative).unwrap(),
            Path::new("/home/u/.cache/concurrency-gates")
        );
        let e = cache_dir(env(&[])).unwrap_err();
        assert!(e.contains("XDG_CACHE_HOME or HOME"), "{e}");
    }

    #[test]
    fn an_installed_project_keeps_its_state_in_the_cache_not_beside_the_rows() {
        let cache = tempfile::tempdir().unwrap();
        let p = Project::installed(cache.path()).unwrap();
        assert!(p.specs_dir().join("E19.yaml").is_file());
        assert!(p.app_dir().join("app.py").is_file());
        assert_eq!(p.state_dir(), cache.path());
        assert_eq!(p.logs_dir(), cache.path().join("logs"));
        // Its twin: a checkout keeps its state in .gates.
        let c = Project::checkout(PathBuf::from("/src/gates"));
        assert_eq!(c.state_dir(), Path::new("/src/gates/.gates"));
    }

    #[test]
    fn the_tests_binary_finds_the_checkout_it_was_built_in() {
        // The test binary lives in this checkout's target/, as `cargo run`'s.
        let root = built_checkout().expect("tests run from target/");
        assert!(is_root(&root));
        // Its twin: --project-dir to a folder that is not a checkout.
        let dir = tempfile::tempdir().unwrap();
        let e = Project::locate(Some(dir.path())).unwrap_err();
        assert!(e.contains("--project-dir"), "{e}");
    }
}
