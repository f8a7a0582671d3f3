#!/usr/bin/env python3
"""Repeat `runner gate` and report the figures the E19 issue asks for.

Usage: bench/repeat.py [--runs N] [--row E19] [--server granian] [--expect pass]

Builds the runner once (release profile is not needed: the runner is idle
while it measures), then runs the gate N times back to back, timing each
process from start to exit, and prints: median/min/max wall time, the median
of each mode's ratio, and how many runs gave the expected verdict. Timing
lives here, not in tests: a timed test on a shared runner measures the runner.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--row", default="E19")
    ap.add_argument("--server", default="granian")
    ap.add_argument("--expect", default="pass")
    ap.add_argument("--profile", default="dev", help="cargo profile to build the runner with")
    args = ap.parse_args()

    subprocess.run(["cargo", "build", "-q", "-p", "runner", "--profile", args.profile], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "debug" if args.profile == "dev" else args.profile, "runner")
    walls, under, control, capacity, verdicts, headlines = [], [], [], [], [], []
    for i in range(args.runs):
        started = time.perf_counter()
        proc = subprocess.run(
            [exe, "gate", args.row, "--server", args.server, "--json"],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )
        walls.append(time.perf_counter() - started)
        result = json.loads(proc.stdout)["results"][0]
        verdicts.append(result["verdict"])
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


if __name__ == "__main__":
    main()
