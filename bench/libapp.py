#!/usr/bin/env python3
"""`runner advise` on a user's own app: fixtures/libapp's five views (real
libraries, no `/` route, per-thread SQLite state built on first use), each
advised N times (default 10) interleaved with the release binary; a table of
right / no advice / wrong per view and the median wall time of one advise;
then `runner gil-probe` on each view's library call alone, the same call the
view makes (fixtures/libapp/views.py), so the two readings can be set side
by side.

    cargo build --release -p runner
    runner prepare --rows all        # numpy for /matmul (the GIL-numpy pin)
    python3 bench/libapp.py [--runs 10] [--server granian] [--no-probe]

Exit 1 on any wrong advice. Note the machine's load (printed first and last):
on a machine also compiling, "no advice" is the expected failure mode, a
wrong one never is.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "runner"  # --binary to use another
APP_DIR = ROOT / "fixtures" / "libapp"
# (name, view, expected advice, the view's library call for gil-probe,
#  what gil-probe should read)
VIEWS = [
    ("sqlite aggregate", "/db", "threads", ["views:db_sum", "--arg", "300000", "--arg", "7"], "releases"),
    ("re.match backtracking", "/regex", "workers", ["views:backtrack", "--arg", "25"], "holds"),
    ("json.dumps", "/json", "workers", ["views:dumps", "--arg", "8000"], "holds"),
    ("numpy BLAS matmul", "/matmul", "remainder", ["views:matmul", "--arg", "768"], "releases"),
    ("select() wait", "/wait", "pool", ["views:wait", "--arg", "30"], "releases"),
]


def loadavg():
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


def advise(path, server):
    started = time.monotonic()
    out = subprocess.run(
        [str(BINARY), "advise", "--app", "app:app", "--app-dir", str(APP_DIR),
         "--path", path, "--server", server, "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    wall = time.monotonic() - started
    try:
        doc = json.loads(out.stdout)
    except json.JSONDecodeError:
        doc = {"reason": out.stderr.strip()[-300:]}
    return (doc.get("advice") or {}).get("kind"), doc.get("reason", ""), wall


def probe(call):
    out = subprocess.run(
        [str(BINARY), "gil-probe", *call, "--json"],
        cwd=APP_DIR, capture_output=True, text=True, timeout=600,
    )
    try:
        doc = json.loads(out.stdout)
    except json.JSONDecodeError:
        return "error", out.stderr.strip()[-200:]
    answer = doc.get("answer") or "cannot judge: " + str(doc.get("reason", ""))[:80]
    blocked = None
    try:
        blocked = doc["figures"]["call"]["reading"]["median"]
    except (KeyError, TypeError):
        pass
    return answer, blocked


def main():
    global BINARY, VIEWS
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--server", default="granian")
    ap.add_argument("--no-probe", action="store_true")
    ap.add_argument("--binary", type=Path, default=BINARY)
    ap.add_argument("--views", default="", help="comma-separated paths (default: all five)")
    args = ap.parse_args()
    BINARY = args.binary.resolve()
    if args.views:
        wanted = args.views.split(",")
        VIEWS = [v for v in VIEWS if v[1] in wanted]
    if not BINARY.exists():
        sys.exit("build it first: cargo build --release -p runner")
    print("load at start: %s" % loadavg())
    tally = {name: {"right": 0, "none": 0, "wrong": 0} for name, *_ in VIEWS}
    walls = {name: [] for name, *_ in VIEWS}
    notes = []
    for run in range(args.runs):
        # Interleaved: drift in the machine lands on every view alike.
        for name, path, expected, _, _ in VIEWS:
            kind, reason, wall = advise(path, args.server)
            walls[name].append(wall)
            if kind is None:
                tally[name]["none"] += 1
                notes.append("%s run %d: %s" % (name, run + 1, reason))
            elif kind == expected:
                tally[name]["right"] += 1
            else:
                tally[name]["wrong"] += 1
                notes.append("%s run %d: WRONG %s (%s)" % (name, run + 1, kind, reason))
            print("run %d %-22s %-10s %5.1f s  load %s"
                  % (run + 1, name, kind or "none", wall, loadavg().split()[0]), file=sys.stderr)
    print()
    print("| view | path | expected | right | no advice | wrong | median s [range] |")
    print("|---|---|---|---:|---:|---:|---|")
    wrong = 0
    for name, path, expected, _, _ in VIEWS:
        t, w = tally[name], walls[name]
        wrong += t["wrong"]
        print("| %s | `%s` | %s | %d | %d | %d | %.1f [%.1f-%.1f] |"
              % (name, path, expected, t["right"], t["none"], t["wrong"],
                 statistics.median(w), min(w), max(w)))
    print()
    for n in notes:
        print("- " + n)
    if not args.no_probe:
        print()
        print("| call | gil-probe | expected | blocked (median) |")
        print("|---|---|---|---:|")
        for _, _, _, call, reads in VIEWS:
            answer, blocked = probe(call)
            print("| `%s(%s)` | %s | %s | %s |"
                  % (call[0], ", ".join(call[2::2]), answer, reads,
                     "-" if blocked is None else "%.2f" % blocked))
    print()
    print("load at end: %s" % loadavg())
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
