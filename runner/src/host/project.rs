//! Where the project's files are: specs/, the fixture app, and the `.gates/`
//! state folder (virtualenv, server logs) that the runner owns.

use std::path::{Path, PathBuf};

/// The project checkout the runner works in.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    /// `explicit` (from `--project-dir`), else the nearest folder at or above
    /// the current directory that holds `specs/` and `fixtures/bareapp/`, else
    /// the checkout this binary was built from.
    pub fn locate(explicit: Option<&Path>) -> Result<Self, String> {
        if let Some(dir) = explicit {
            let root = dir.to_path_buf();
            if !is_root(&root) {
                return Err(format!(
                    "--project-dir {}: no specs/ and fixtures/bareapp/ there; point it at the gates checkout",
                    dir.display()
                ));
            }
            return Ok(Self { root });
        }
        if let Ok(cwd) = std::env::current_dir() {
            if let Some(root) = cwd.ancestors().find(|d| is_root(d)) {
                return Ok(Self {
                    root: root.to_path_buf(),
                });
            }
        }
        let built = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf);
        match built {
            Some(root) if is_root(&root) => Ok(Self { root }),
            _ => Err("cannot find the project (a folder with specs/ and fixtures/bareapp/); run from the checkout or pass --project-dir".into()),
        }
    }

    pub fn specs_dir(&self) -> PathBuf {
        self.root.join("specs")
    }

    pub fn servers_dir(&self) -> PathBuf {
        self.root.join("specs").join("servers")
    }

    pub fn app_dir(&self) -> PathBuf {
        self.root.join("fixtures").join("bareapp")
    }

    /// The runner's own state; ignored by git.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(".gates")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.state_dir().join("logs")
    }
}

fn is_root(dir: &Path) -> bool {
    dir.join("specs").is_dir() && dir.join("fixtures").join("bareapp").is_dir()
}
