#!/usr/bin/env python3
"""Measured flakiness of E19 (issue 6, section 2), through `runner stress`.

Usage: bench/stress.py [--runs 50] [--server granian] [--only quiet,burst,spin,threads1]

Four scenarios, each `runner stress ... --json`, each gate on a fresh server:

  quiet     E19, no load of our own          target: 0 wrong (no fail)
  burst     E19, one core 100 ms on/100 off  target: 0 wrong (no fail)
  spin      E19, one core busy throughout    target: every run cannot judge
  threads1  E19 with `threads: 1`            target: 0 passes

"Wrong" is the opposite verdict (fail for a claim that holds, pass for one
that does not); cannot judge claims nothing and is never wrong. The load is
started by the runner for each gate once its server is ready and killed when
the gate ends. Prints one table; exits 1 if any target is missed. Runs a
copy of the release runner (`cargo build --release -p runner`). Each
`runner stress` exit code is checked: 0 no wrong run, 1 some wrong (it must
agree with the summary); a crash (exit 101, a panic) or any other ending is
reported as such and misses its target, never read as verdicts. Timing and
counts live here, not in tests: a timed test on a shared runner measures the
runner.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stress(exe, row, runs, server, noise, expect):
    """The `runner stress --json` summary, or (None, why) when the process
    did not end with one (its stderr, progress and any panic, is shown as it
    runs)."""
    started = time.monotonic()
    proc = subprocess.run(
        [exe, "stress", row, "--runs", str(runs), "--server", server,
         "--noise", noise, "--expect", expect, "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True, timeout=runs * 120 + 600,
    )
    if proc.returncode == 101:
        return None, "crashed (exit 101, a panic: see its stderr above)"
    if proc.returncode < 0:
        return None, "killed by signal %d" % -proc.returncode
    if proc.returncode not in (0, 1):
        return None, "exited %d (see its stderr above)" % proc.returncode
    try:
        summary = json.loads(proc.stdout)
    except ValueError:
        return None, "exited %d without a JSON summary" % proc.returncode
    if (summary["wrong"] > 0) != (proc.returncode == 1):
        return None, "exited %d with %d wrong runs" % (proc.returncode, summary["wrong"])
    summary["wall_s"] = time.monotonic() - started
    return summary, None


def spread(summary, name):
    s = summary["figures"].get(name)
    return "%.2f [%.2f-%.2f]" % (s["median"], s["min"], s["max"]) if s else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--server", default="granian")
    ap.add_argument("--only", default="quiet,burst,spin,threads1")
    args = ap.parse_args()

    subprocess.run(["cargo", "build", "--release", "-q", "-p", "runner"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="stress-")
    # A copy: a rebuild of target/release/runner during the long run must not
    # change the runner half way.
    exe = os.path.join(tmp, "runner")
    shutil.copy2(os.path.join(ROOT, "target", "release", "runner"), exe)
    one_thread = os.path.join(tmp, "E19-threads1.yaml")
    with open(os.path.join(ROOT, "specs", "E19.yaml")) as f:
        text = f.read()
    assert "threads: 2" in text, "specs/E19.yaml no longer says threads: 2"
    with open(one_thread, "w") as f:
        f.write(text.replace("threads: 2", "threads: 1", 1))

    scenarios = {
        "quiet": ("E19", "none", "pass"),
        "burst": ("E19", "burst", "pass"),
        "spin": ("E19", "spin", "pass"),
        "threads1": (one_thread, "none", "fail"),
    }
    rows = []
    missed = []
    crashed = []
    for name in args.only.split(","):
        row, noise, expect = scenarios[name]
        print("== %s: %d runs of %s, noise %s" % (name, args.runs, os.path.basename(row), noise),
              file=sys.stderr, flush=True)
        s, broken = stress(exe, row, args.runs, args.server, noise, expect)
        if s is None:
            missed.append(name)
            crashed.append((name, broken))
            continue
        v = s["verdicts"]
        if name in ("quiet", "burst"):
            target, ok = "0 wrong", s["wrong"] == 0
        elif name == "spin":
            cj = v.get("cannot-judge", 0)
            target, ok = "all cannot judge", cj == s["runs"] and s["wrong"] == 0
        else:
            target, ok = "0 passes", v.get("pass", 0) == 0
        if not ok:
            missed.append(name)
        rows.append((name, s, target, ok))
        with open(os.path.join(tmp, name + ".json"), "w") as f:
            json.dump(s, f, indent=1)

    print("E19 on %s, %d runs per scenario (raw summaries in %s)" % (args.server, args.runs, tmp))
    print("%-9s %-5s %-5s %-6s %-5s %-20s %-20s %-20s %-20s %-8s %s" % (
        "scenario", "pass", "fail", "cannot", "wrong", "releasing x", "holding x",
        "capacity x", "trials", "wall s", "target"))
    for name, s, target, ok in rows:
        v = s["verdicts"]
        print("%-9s %-5d %-5d %-6d %-5d %-20s %-20s %-20s %-20s %-8.0f %s: %s" % (
            name, v.get("pass", 0), v.get("fail", 0), v.get("cannot-judge", 0), s["wrong"],
            spread(s, "releasing ratio"), spread(s, "holding ratio"),
            spread(s, "capacity"), spread(s, "trials"), s["wall_s"], target,
            "met" if ok else "MISSED"))
    for name, why in crashed:
        print("%-9s no verdicts: runner stress %s: MISSED" % (name, why))
    for name, s, _, _ in rows:
        reasons = {}
        for r in s["results"]:
            if r["verdict"] != "pass":
                key = r["reason"].split(":")[0][:60]
                reasons[key] = reasons.get(key, 0) + 1
        if reasons:
            print("  %s, why not pass: %s" % (name, "; ".join("%s x%d" % kv for kv in sorted(reasons.items()))))
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
