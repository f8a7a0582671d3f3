//! The wheel end to end, as a library's author gets it: maturin builds the
//! `concurrency-gates` wheel from pyproject.toml, pip installs it into a
//! fresh venv with no network (`--no-index`), and the installed `runner`
//! runs `gil-probe time:sleep --arg 0.005 --expect releases` (time.sleep
//! needs its argument: without one the call raises and the probe cannot
//! judge) and `gate E19` from a
//! temporary folder outside the repository, with no checkout to find: the
//! rows and fixtures come from the binary, the venv and logs go to a
//! temporary `XDG_CACHE_HOME`, and nothing lands in the current folder.
//!
//! Cost: the wheel is built from the dev profile (`maturin build --profile
//! dev`), which reuses the `runner` that `cargo build` / `cargo test` just
//! built (seconds); a release build would compile everything again
//! (minutes). The runner's own venv installs the pinned servers from PyPI,
//! as `runner prepare` does. maturin comes from PyPI into a tools venv kept
//! under target/ between runs.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use common::root;

/// The maturin the wheel is built with (pyproject.toml asks >=1.16,<2).
const MATURIN: &str = "maturin==1.16.0";

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ok(cmd: &mut Command) -> Output {
    let out = run(cmd);
    assert!(out.status.success(), "{cmd:?}: {}", text(&out));
    out
}

fn venv(dir: &Path) -> PathBuf {
    ok(Command::new("python3").args(["-m", "venv"]).arg(dir));
    dir.join("bin")
}

/// target/wheel-tools: a venv with maturin, made once.
fn maturin() -> PathBuf {
    let tools = root().join("target").join("wheel-tools");
    let bin = tools.join("bin").join("maturin");
    if !bin.exists() {
        let venv_bin = venv(&tools);
        ok(Command::new(venv_bin.join("python")).args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-q",
            MATURIN,
        ]));
    }
    bin
}

#[test]
fn the_installed_wheel_runs_gil_probe_and_e19_from_a_folder_with_no_checkout() {
    // What each phase cost, printed with the test's output (`--nocapture`).
    let started = Instant::now();
    let phase = |name: &str| {
        eprintln!(
            "wheel test: {name} at {:.1} s",
            started.elapsed().as_secs_f64()
        )
    };
    let scratch = tempfile::tempdir().unwrap();
    let wheels = scratch.path().join("wheels");
    ok(Command::new(maturin())
        .args(["build", "--profile", "dev", "--out"])
        .arg(&wheels)
        .current_dir(root()));
    phase("wheel built");
    let wheel: Vec<PathBuf> = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(wheel.len(), 1, "{wheel:?}");
    let name = wheel[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("concurrency_gates-"), "{name}");

    // A fresh venv, and the wheel installed with no network.
    let bin = venv(&scratch.path().join("venv"));
    ok(Command::new(bin.join("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-index",
            "--no-deps",
            "-q",
        ])
        .arg(&wheel[0]));
    assert!(bin.join("runner").is_file());
    phase("wheel installed");

    // An empty folder outside the repository, and a cache of its own.
    let work = scratch.path().join("work");
    let cache = scratch.path().join("cache");
    std::fs::create_dir_all(&work).unwrap();
    assert!(!work.starts_with(root()));
    let path = std::env::join_paths(
        std::iter::once(bin.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let installed = |args: &[&str]| {
        run(Command::new("runner")
            .args(args)
            .current_dir(&work)
            .env("PATH", &path)
            .env("XDG_CACHE_HOME", &cache)
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY"))
    };

    let probe = installed(&[
        "gil-probe",
        "time:sleep",
        "--arg",
        "0.005",
        "--expect",
        "releases",
    ]);
    assert_eq!(probe.status.code(), Some(0), "{}", text(&probe));
    assert!(
        String::from_utf8_lossy(&probe.stdout).starts_with("RELEASES"),
        "{}",
        text(&probe)
    );
    phase("gil-probe done (with the venv prepared)");
    let gate = installed(&["gate", "E19"]);
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate));
    assert!(
        String::from_utf8_lossy(&gate.stdout).contains("PASS E19"),
        "{}",
        text(&gate)
    );

    phase("gate E19 done");
    // The rows came from the binary, unpacked into the cache with the venv
    // and the logs; the current folder got nothing.
    let unpacked: Vec<PathBuf> = std::fs::read_dir(cache.join("concurrency-gates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("project-")
        })
        .collect();
    assert_eq!(unpacked.len(), 1, "{unpacked:?}");
    assert!(unpacked[0].join("specs/E19.yaml").is_file());
    assert!(cache.join("concurrency-gates/venv/bin/python").exists());
    assert!(cache.join("concurrency-gates/logs").is_dir());
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);

    // The README's row for a library's call, run as its pytest line runs
    // it: a path in the user's folder, in the wheel's own venv's python (no
    // server needed), the setup imported from the current folder.
    std::fs::create_dir_all(work.join("gates")).unwrap();
    std::fs::create_dir_all(work.join("tests")).unwrap();
    std::fs::write(
        work.join("tests/gil_setup.py"),
        "import time\n\ndef setup():\n    return time.sleep, (0.005,)\n",
    )
    .unwrap();
    let row = common::readme_yaml("id: GIL-mylib");
    std::fs::write(work.join("gates/GIL-mylib.yaml"), &row).unwrap();
    let python = bin.join("python").display().to_string();
    let mine = installed(&["--python", &python, "gate", "gates/GIL-mylib.yaml"]);
    assert_eq!(mine.status.code(), Some(0), "{}", text(&mine));
    assert!(
        String::from_utf8_lossy(&mine.stdout).contains("PASS GIL-mylib"),
        "{}",
        text(&mine)
    );
    phase("the README's row done");

    // Its twins: the other answer fails the probe and the row (exit 1),
    // and a --project-dir that is not a checkout is refused, naming it.
    let holds = installed(&[
        "gil-probe",
        "time:sleep",
        "--arg",
        "0.005",
        "--expect",
        "holds",
    ]);
    assert_eq!(holds.status.code(), Some(1), "{}", text(&holds));
    std::fs::write(
        work.join("gates/GIL-mylib.yaml"),
        row.replace("expect: releases", "expect: holds"),
    )
    .unwrap();
    let theirs = installed(&["--python", &python, "gate", "gates/GIL-mylib.yaml"]);
    assert_eq!(theirs.status.code(), Some(1), "{}", text(&theirs));
    let nowhere = installed(&["--project-dir", ".", "list"]);
    assert_eq!(nowhere.status.code(), Some(2), "{}", text(&nowhere));
    assert!(
        String::from_utf8_lossy(&nowhere.stderr).contains("--project-dir"),
        "{}",
        text(&nowhere)
    );
}
