#!/usr/bin/env python3
"""Decisiveness and wrong verdicts of E19 (and E15) under noise: the figures
issue 10 asks for, from `runner stress` on the release binary.

Cells: row x server x noise, each `--runs N` fresh gates. A server that must
fail is granian with one handler thread (the row's `threads: 1`) and the
fault server's `serialise` mode (two handler threads, every app call behind
one lock); granian with two threads must pass. Prints one table: pass, fail,
cannot judge, wrong, decisive share, median wall per gate.

    python3 bench/decisive.py --runs 50            # E19, all cells
    python3 bench/decisive.py --runs 20 --rows E15 --noise none,burst
    python3 bench/decisive.py --runs 10 --witness off --noise none,burst
    python3 bench/decisive.py --runs 5 --exe /tmp/runner-base   # another build

`--witness off` runs every gate as a platform without the scheduler witness
(macOS) does: the wall-clock rules alone (the runner's `--witness off`); the
table gains a `witness` column.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fault_profile(folder, fault):
    """A profile starting fixtures/faultserver with `fault` (JSON is YAML)."""
    script = os.path.join(ROOT, "fixtures", "faultserver", "faultserver.py")
    profile = {
        "name": "fault-" + fault,
        "argv": ["{python}", script, "--host", "{host}", "--port", "{port}",
                 "--app-dir", "{app_dir}", "--fault", fault, "{knobs}"],
        "knobs": {"threads": ["--threads", "{threads}"]},
        "ready": {"path": "/", "timeout_ms": 20000},
        "env": {"PYTHONUNBUFFERED": "1"},
        "stop_grace_ms": 1000,
    }
    path = os.path.join(folder, "fault-%s.yaml" % fault)
    with open(path, "w") as f:
        json.dump(profile, f)
    return path


def one_thread_row(folder, row):
    """The row with `threads: 1` for its server (E19's releasing view then
    runs one request at a time)."""
    with open(os.path.join(ROOT, "specs", row + ".yaml")) as f:
        text = f.read().replace("  threads: 2", "  threads: 1", 1)
    text = text.replace("id: %s" % row, "id: %s-one-thread" % row, 1)
    path = os.path.join(folder, "%s-one-thread.yaml" % row)
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--rows", default="E19")
    ap.add_argument("--noise", default="none,burst,spin")
    ap.add_argument("--cases", default="pass,one-thread,serialise",
                    help="which servers: pass (granian, 2 threads), one-thread, serialise")
    ap.add_argument("--witness", default="on", choices=["on", "off"],
                    help="off: no scheduler witness, the wall rules alone (the macOS path)")
    ap.add_argument("--exe", help="a runner binary to measure (default: build the release one)")
    args = ap.parse_args()
    exe = args.exe
    if not exe:
        subprocess.run(["cargo", "build", "-q", "--release", "-p", "runner"], cwd=ROOT, check=True)
        exe = os.path.join(ROOT, "target", "release", "runner")
    folder = tempfile.mkdtemp(prefix="decisive-")
    print("| row | server | noise | witness | runs | pass | fail | cannot judge | wrong | decisive | median s/gate |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in args.rows.split(","):
        cases = {
            "pass": (row, "granian", "pass"),
            "one-thread": (one_thread_row(folder, row), "granian", "fail"),
            "serialise": (row, fault_profile(folder, "serialise"), "fail"),
        }
        for case in args.cases.split(","):
            if row != "E19" and case != "pass":
                continue
            target, server, expect = cases[case]
            for noise in args.noise.split(","):
                proc = subprocess.run(
                    [exe, "stress", target, "--runs", str(args.runs), "--server", server,
                     "--noise", noise, "--expect", expect, "--json", "--witness", args.witness],
                    cwd=ROOT, capture_output=True, text=True, timeout=3600,
                )
                if proc.returncode not in (0, 1):
                    print("stress failed (exit %d): %s" % (proc.returncode, proc.stderr[-2000:]), file=sys.stderr)
                    continue
                s = json.loads(proc.stdout)
                v = s["verdicts"]
                decisive = v.get("pass", 0) + v.get("fail", 0)
                walls = [r["figures"].get("gate ms", 0) / 1000 for r in s["results"]]
                label = "granian (2 threads)" if case == "pass" else (
                    "granian (1 thread)" if case == "one-thread" else "faultserver serialise")
                print("| %s | %s | %s | %s | %d | %d | %d | %d | %d | %.0f%% | %.2f |" % (
                    row, label, noise, args.witness, s["runs"], v.get("pass", 0), v.get("fail", 0),
                    v.get("cannot-judge", 0), s["wrong"], 100.0 * decisive / max(1, s["runs"]),
                    statistics.median(walls) if walls else 0.0), flush=True)


if __name__ == "__main__":
    main()
