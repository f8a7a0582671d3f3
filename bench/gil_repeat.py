#!/usr/bin/env python3
"""Repeat `runner gil-probe` and count right / wrong / cannot judge.

Usage: bench/gil_repeat.py [--runs 20] [--noise none|spin] [--python PATH]
                           [--case NAME]... [--out FILE.jsonl]

Cases (each with the answer it must give):
  sleep    time:sleep 0.005                 releases
  pydll    controls:pydll_usleep 5000       holds
  libzim   --setup zimsearch:setup          holds (python-libzim 3.13.1)

`--noise spin` keeps one core busy with `python3 -c 'while True: pass'`,
started here and killed at the end (its own process group). Runs are
interleaved case by case. Prints, per case: right/wrong/cannot judge, the
median and range of the call's reading and of each control, and the wall
time per probe (process start to exit). Timing lives here, not in tests.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = {
    "sleep": (["time:sleep", "--arg", "0.005"], "releases"),
    "pydll": (["controls:pydll_usleep", "--arg", "5000"], "holds"),
    "libzim": (["--setup", "zimsearch:setup"], "holds"),
}


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return "%.2f [%.2f-%.2f]" % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--noise", choices=("none", "spin"), default="none")
    ap.add_argument("--python", default=None)
    ap.add_argument("--case", action="append", choices=sorted(CASES), default=None)
    ap.add_argument("--out", default=None, help="append every --json document to this file")
    args = ap.parse_args()
    cases = args.case or list(CASES)

    subprocess.run(["cargo", "build", "-q", "-p", "runner"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "debug", "runner")
    load = None
    if args.noise == "spin":
        load = subprocess.Popen(
            [sys.executable, "-c", "while True: pass"], start_new_session=True
        )
        time.sleep(0.3)
    out = open(args.out, "a") if args.out else None
    stats = {c: {"right": 0, "wrong": 0, "cannot": 0, "walls": [], "call": [], "rel": [], "half": [], "all": [], "reasons": []} for c in cases}
    try:
        for i in range(args.runs):
            for case in cases:
                argv, expect = CASES[case]
                cmd = [exe, "gil-probe", *argv, "--json"]
                if args.python:
                    cmd[1:1] = ["--python", args.python]
                started = time.perf_counter()
                proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
                wall = time.perf_counter() - started
                doc = json.loads(proc.stdout)
                s = stats[case]
                s["walls"].append(wall)
                answer = doc.get("answer")
                if doc["verdict"] == "cannot-judge":
                    s["cannot"] += 1
                    s["reasons"].append(doc["reason"][:160])
                elif answer == expect:
                    s["right"] += 1
                else:
                    s["wrong"] += 1
                    s["reasons"].append("WRONG: " + doc["reason"][:160])
                f = doc.get("figures")
                if f:
                    s["call"].append(f["call"]["reading"]["median"])
                    s["rel"].append(f["controls"]["releases"]["reading"]["median"])
                    s["half"].append(f["controls"]["holds_half"]["reading"]["median"])
                    s["all"].append(f["controls"]["holds_all"]["reading"]["median"])
                if out:
                    doc["bench"] = {"case": case, "noise": args.noise, "wall_s": wall, "load": os.getloadavg()[0]}
                    out.write(json.dumps(doc) + "\n")
                    out.flush()
                print(
                    "run %2d %-7s %-13s %-9s %.2f s  %s"
                    % (i + 1, case, doc["verdict"], answer or "-", wall, doc.get("headline") or doc["reason"][:100]),
                    file=sys.stderr,
                )
    finally:
        if load:
            os.killpg(load.pid, signal.SIGKILL)
            load.wait()
    print("noise %s, %d runs per case, load average now %.2f" % (args.noise, args.runs, os.getloadavg()[0]))
    for case in cases:
        s = stats[case]
        print(
            "%-7s expect %-8s right %2d  wrong %d  cannot judge %2d | call %s | controls %s / %s / %s | wall %s s"
            % (case, CASES[case][1], s["right"], s["wrong"], s["cannot"], spread(s["call"]), spread(s["rel"]),
               spread(s["half"]), spread(s["all"]), spread(s["walls"]))
        )
        for r in sorted(set(s["reasons"])):
            print("    %s" % r)


if __name__ == "__main__":
    main()
