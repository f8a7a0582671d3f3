#!/usr/bin/env python3
"""Decisiveness of `runner advise`: each of the fixture's four views advised
N times (default 10) with the release binary, one after another (advise
takes the machine lock like any gate), then a table of advice counts per
view and the wall time of one advise (median and range).

    cargo build --release -p runner
    python3 bench/advise.py [--runs 10] [--server granian]
    python3 bench/advise.py --model [--runs 10]
    python3 bench/advise.py --fastapi [--runs 10]

`--model` advises the model app's three views instead (fixtures/modelapp,
installed by `runner prepare --rows all`; issue #18) on granian: `/embed`
with BLAS free to use every core must say "remainder", `/embed` with
`--env OPENBLAS_NUM_THREADS=1` "threads", and `/embed/hold` (one numba call
that keeps the GIL for the whole prediction) "workers". The app's settings
(the BLAS threads, a readiness bound long enough to load the weights) are
flags of each view, not server profiles.

Every view must come out the same in every run: a count below N in the
expected column is a failure of the rule's decisiveness; any count in
another advice's column is a wrong advice.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "runner"
VIEWS = [
    ("releasing", "/work?mode=release&kib=8192", "threads"),
    ("holding", "/work?mode=hold&kib=8192", "workers"),
    ("sleeping", "/slow?ms=50", "pool"),
    ("already parallel", "/work?mode=split&kib=8192", "remainder"),
]
# The model app's views: (name, path, expected advice, the app's settings).
BLAS1 = ["--env", "OPENBLAS_NUM_THREADS=1"]
MODEL_VIEWS = [
    ("embed, BLAS free", "/embed", "remainder", []),
    ("embed, BLAS=1", "/embed", "threads", BLAS1),
    ("holding embed", "/embed/hold", "workers", []),
]
MODEL_APP = ["--app", "app:app", "--app-dir", str(ROOT / "fixtures" / "modelapp"),
             "--ready-timeout-ms", "180000"]
# The FastAPI app's five views (fixtures/fastapiapp; FastAPI installed by
# `runner prepare --rows all`), given with no --server and no --interface:
# the runner finds the app is ASGI and serves it on uvicorn.
FASTAPI_VIEWS = [
    ("def, releases", "/hash?kib=32768", "threads"),
    ("def, holds", "/hash/hold?kib=32768", "workers"),
    ("def, waits", "/wait?ms=100", "pool"),
    ("async def, blocks the loop", "/hash/loop?kib=32768", "to-thread"),
    ("async def, awaits", "/wait/async?ms=100", "loop"),
]
FASTAPI_APP = ["--app", "app:app", "--app-dir", str(ROOT / "fixtures" / "fastapiapp")]
KINDS = ["threads", "workers", "pool", "remainder", "to-thread", "loop", "none"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--server", default="granian")
    ap.add_argument("--model", action="store_true", help="the model app's three views (MODEL_VIEWS)")
    ap.add_argument("--fastapi", action="store_true", help="the FastAPI app's five views (FASTAPI_VIEWS), no --server")
    args = ap.parse_args()
    if not BINARY.exists():
        sys.exit("build it first: cargo build --release -p runner")
    if args.model:
        views = [(name, path, expected, args.server, MODEL_APP + settings)
                 for name, path, expected, settings in MODEL_VIEWS]
    elif args.fastapi:
        views = [(name, path, expected, None, FASTAPI_APP) for name, path, expected in FASTAPI_VIEWS]
    else:
        views = [(name, path, expected, args.server, []) for name, path, expected in VIEWS]
    counts = {v[0]: {k: 0 for k in KINDS} for v in views}
    walls = []
    notes = []
    for run in range(args.runs):
        # Interleaved: drift in the machine lands on every view alike.
        for name, path, expected, server, app in views:
            started = time.monotonic()
            out = subprocess.run(
                [str(BINARY), "advise", "--path", path, "--json"]
                + (["--server", server] if server else [])
                + app,
                cwd=ROOT, capture_output=True, text=True, timeout=600,
            )
            walls.append(time.monotonic() - started)
            try:
                doc = json.loads(out.stdout)
            except json.JSONDecodeError:
                doc = {}
            advice = (doc.get("advice") or {}).get("kind", "none")
            counts[name][advice] += 1
            if advice != expected:
                notes.append("%s run %d: %s: %s" % (name, run + 1, advice, doc.get("reason", out.stderr.strip()[-300:])))
            print("run %d %-17s %-10s %.1f s%s" % (run + 1, name, advice, walls[-1],
                                                ("  (" + notes[-1] + ")") if advice != expected else ""),
                  file=sys.stderr)
    print("| view | expected | " + " | ".join(KINDS) + " |")
    print("|---|---|" + "---:|" * len(KINDS))
    wrong = 0
    for name, _, expected, _, _ in views:
        row = counts[name]
        wrong += sum(v for k, v in row.items() if k not in (expected, "none"))
        print("| %s | %s | %s |" % (name, expected, " | ".join(str(row[k]) for k in KINDS)))
    print()
    print("wall time of one advise: median %.1f s [%.1f-%.1f] over %d runs"
          % (statistics.median(walls), min(walls), max(walls), len(walls)))
    print("wrong advice: %d" % wrong)
    for n in notes:
        print("not the expected advice: " + n)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
