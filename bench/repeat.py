#!/usr/bin/env python3
"""Repeat `runner gate` and report the figures the E19 issue asks for.

Usage: bench/repeat.py [--runs N] [--row E19] [--server granian] [--expect pass]

Builds the release runner once (`cargo build --release -p runner`; a copy of
target/release/runner is run, so a rebuild during the runs changes nothing),
then runs the gate N times back to back, timing each process from start to
exit, and prints: median/min/max wall time, the median of each mode's ratio,
and how many runs gave the expected verdict. Each run's exit code is checked
against its verdict (0 pass or not applicable, 1 fail, 2 cannot judge): a run
that crashed (exit 101, a panic) or ended any other way is reported as such
and counted apart, never as a verdict. Timing lives here, not in tests: a
timed test on a shared runner measures the runner.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The exit code `runner gate` gives one gate's verdict (runner/src/exit.rs).
EXIT_OF_VERDICT = {"pass": 0, "not-applicable": 0, "fail": 1, "cannot-judge": 2}


def release_runner(prefix):
    """Builds the release runner and returns the path of a private copy."""
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "runner"], cwd=ROOT, check=True)
    exe = os.path.join(tempfile.mkdtemp(prefix=prefix), "runner")
    shutil.copy2(os.path.join(ROOT, "target", "release", "runner"), exe)
    return exe


def ending(proc):
    """What a finished `runner gate` process left: (verdict, result) when its
    exit code and its JSON report agree, else (None, why)."""
    if proc.returncode == 101:
        return None, "crashed (exit 101): %s" % panic_message(proc.stderr)
    if proc.returncode < 0:
        return None, "killed by signal %d" % -proc.returncode
    try:
        result = json.loads(proc.stdout)["results"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return None, "no report (exit %d): %s" % (proc.returncode, last_line(proc.stderr))
    verdict = result["verdict"]
    if EXIT_OF_VERDICT.get(verdict) != proc.returncode:
        return None, "exit %d does not match verdict %s: %s" % (
            proc.returncode, verdict, last_line(proc.stderr))
    return verdict, result


def panic_message(text):
    """`panicked at FILE:LINE: MESSAGE` from a Rust panic's stderr."""
    lines = (text or "").splitlines()
    for i, line in enumerate(lines):
        if " panicked at " in line:
            where = line.split(" panicked at ", 1)[1].rstrip(":")
            return ("panicked at %s: %s" % (where, lines[i + 1] if i + 1 < len(lines) else ""))[:200]
    return last_line(text)


def last_line(text):
    lines = [l for l in (text or "").splitlines() if l.strip()]
    return lines[-1][:200] if lines else "(nothing on stderr)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--row", default="E19")
    ap.add_argument("--server", default="granian")
    ap.add_argument("--expect", default="pass")
    args = ap.parse_args()

    exe = release_runner("repeat-")
    walls, under, control, capacity, verdicts, headlines = [], [], [], [], [], []
    broken = []
    for i in range(args.runs):
        started = time.perf_counter()
        proc = subprocess.run(
            [exe, "gate", args.row, "--server", args.server, "--json"],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )
        wall = time.perf_counter() - started
        verdict, result = ending(proc)
        if verdict is None:
            broken.append(result)
            print("run %2d: %s" % (i + 1, result), file=sys.stderr)
            continue
        walls.append(wall)
        verdicts.append(verdict)
        headlines.append(result.get("headline", ""))
        figures = result.get("figures") or {}
        if "under_test" in figures:  # pair-ratio rows
            under.append(figures["under_test"]["ratio"])
            control.append(figures["control"]["ratio"])
            capacity.append(figures["capacity"])
        print(
            "run %2d: %-13s %.2f s  %s" % (
                i + 1, result["verdict"], walls[-1],
                "%.2fx / %.2fx, capacity %.2fx" % (under[-1], control[-1], capacity[-1])
                if "under_test" in figures else (result.get("headline") or result["reason"][:100]),
            ),
            file=sys.stderr,
        )

    def spread(xs):
        return "median %.2f [%.2f-%.2f]" % (statistics.median(xs), min(xs), max(xs)) if xs else "none"

    right = sum(v == args.expect for v in verdicts)
    print("row %s on %s, %d runs" % (args.row, args.server, args.runs))
    print("wall time s:      %s" % spread(walls))
    print("under test ratio: %s" % spread(under))
    print("control ratio:    %s" % spread(control))
    print("capacity ratio:   %s" % spread(capacity))
    if not under:
        print("key figures:      %s" % ", ".join(sorted(set(headlines))))
    print("verdicts:         %s" % {v: verdicts.count(v) for v in sorted(set(verdicts))})
    print("expected %s:   %d of %d" % (args.expect, right, args.runs))
    if broken:
        print("no verdict:       %d of %d (crashed or inconsistent; not counted above)" % (
            len(broken), args.runs))
        for why in sorted(set(broken)):
            print("  %s x%d" % (why, broken.count(why)))
        sys.exit(1)


if __name__ == "__main__":
    main()
