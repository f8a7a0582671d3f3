#!/usr/bin/env python3
"""The decisive table: how often each row kind reaches a verdict, and how
often a wrong one, under noise, for every scheduler witness (issue 24).

Each cell is one case x noise x witness: `--runs N` fresh gates through
`runner stress` (or N `runner advise` runs), release binary. Every
must-pass case stands beside its must-fail twins:

- E19: granian with two threads (pass); granian with one thread and the
  fault server's `serialise` mode (fail); E19-asgi with a threadpool of two
  (pass) and of one (fail);
- E15: granian with two workers (pass); gunicorn `--preload` (the runtime
  does not survive the fork) and one worker (fail);
- C5: granian with two threads (pass); the fault server's
  `thread-per-connection` mode (fail);
- every GIL row (pass), and the same row expecting the other answer (a
  holding call read as holding fails `expect: releases`, and so on);
- advise: the fixture's four views, libapp's five and the model app's
  three, each against the advice its docs expect (right, no advice, or
  wrong).

Noise: none, burst and spin are `runner stress --noise`; `burst2` is two
desynchronised burst loads (the runner's, and one this script starts 50 ms
out of phase), so both cores are busy part of the time.
Witness: `on` (Linux's accounting), `portable` (what macOS gives: on-CPU
time, sampled run state, host idle), `off` (the wall rules alone).

The grid is large: pick a subset with --cases (comma list of prefixes:
`E19`, `E15:preload`, `GIL-numpy`, `GIL-`, `advise:libapp`, ...), --noise and
--witness. The table goes to stdout (Markdown) and, with --out, to a file
together with the command that made it and the machine's load.

    python3 bench/decisive.py --runs 10
    python3 bench/decisive.py --runs 5 --cases E19,GIL-numpy --noise none,burst2 --witness portable,off
    python3 bench/decisive.py --list          # every case name

The whole grid takes hours on two cores. `--shard K/N` runs every Nth cell
(cells in the table's order, from the K-th), so N machines (a GitHub
Actions matrix, or N sessions on one machine) run it in parts, and
`--merge A.md B.md ...` puts their --out files back into one table, in
the grid's order, refusing parts of different commits and naming the
cells no part ran (a part may also be a subset made with --cases, --noise
and --witness, so the cells likeliest to miss run first). Every table ends
with the targets of issue 24 checked cell by cell: 0 wrong in every cell;
decisive at least 95% with `on`, 90% with `portable` quiet and 80% under
noise (`off` has no decisive target: it may read "cannot judge" wherever
the wall cannot tell a busy core from a held lock).

    python3 bench/decisive.py --runs 10 --shard 1/4 --out part1.md   # ... 4/4
    python3 bench/decisive.py --merge part1.md part2.md part3.md part4.md --out bench/results/decisive-24.md

A cell's note keeps the start of one miss's reason; `--keep DIR` writes the
whole JSON of every run that missed (an advise run with a wrong or no
advice, a gate cell with a wrong or "cannot judge" verdict) to DIR, named
by cell, so a rare miss's figures say which rule it met.
"""

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOISES = ["none", "burst", "spin", "burst2"]
WITNESSES = ["on", "portable", "off"]


def fault_profile(folder, fault, extra=()):
    """A profile starting fixtures/faultserver with `fault` (JSON is YAML)."""
    script = os.path.join(ROOT, "fixtures", "faultserver", "faultserver.py")
    profile = {
        "name": "fault-" + fault,
        "argv": ["{python}", script, "--host", "{host}", "--port", "{port}",
                 "--app-dir", "{app_dir}", "--fault", fault, *extra, "{knobs}"],
        "knobs": {"threads": ["--threads", "{threads}"]},
        "ready": {"path": "/", "timeout_ms": 20000},
        "env": {"PYTHONUNBUFFERED": "1"},
        "stop_grace_ms": 1000,
    }
    path = os.path.join(folder, "fault-%s.yaml" % fault)
    with open(path, "w") as f:
        json.dump(profile, f)
    return path


def gunicorn_preload(folder):
    """gunicorn that can import the app in the master (runner/tests/e15.rs)."""
    path = os.path.join(folder, "gunicorn-preload.yaml")
    with open(path, "w") as f:
        f.write("""name: gunicorn-preload
package: gunicorn
argv: ["{python}", "-m", "gunicorn", "--chdir", "{app_dir}", "-b", "{host}:{port}", "-k", "gthread", "{knobs}", "{app}"]
knobs:
  threads: ["--threads", "{threads}"]
  workers: ["-w", "{workers}"]
  preload: ["--preload"]
  no_preload: []
ready:
  path: /
  timeout_ms: 60000
stop_grace_ms: 3000
""")
    return path


def edited_row(folder, row, suffix, pairs):
    """specs/ROW.yaml with each (old, new) replaced once, as ROW-SUFFIX."""
    with open(os.path.join(ROOT, "specs", row + ".yaml")) as f:
        text = f.read()
    for old, new in pairs:
        if old not in text:
            sys.exit("%s.yaml has no %r to edit" % (row, old))
        text = text.replace(old, new, 1)
    text = text.replace("id: %s" % row, "id: %s-%s" % (row, suffix), 1)
    path = os.path.join(folder, "%s-%s.yaml" % (row, suffix))
    with open(path, "w") as f:
        f.write(text)
    return path


def gil_rows():
    return sorted(n[:-5] for n in os.listdir(os.path.join(ROOT, "specs"))
                  if n.startswith("GIL-") and n.endswith(".yaml"))


def gate_cases(folder):
    """(name, label, target row, server or None, expected verdict)."""
    cases = [
        ("E19", "granian, 2 threads", "E19", None, "pass"),
        ("E19:one-thread", "granian, 1 thread", edited_row(folder, "E19", "one-thread", [("  threads: 2", "  threads: 1")]), None, "fail"),
        ("E19:serialise", "faultserver serialise", "E19", fault_profile(folder, "serialise"), "fail"),
        # `stress` serves on granian unless told (WSGI only): uvicorn, as
        # `gate E19-asgi` picks.
        ("E19-asgi", "uvicorn, threadpool of 2", "E19-asgi", "uvicorn", "pass"),
        ("E19-asgi:one-thread", "uvicorn, threadpool of 1",
         edited_row(folder, "E19-asgi", "one-thread", [("  threads: 2", "  threads: 1")]), "uvicorn", "fail"),
        ("E15", "granian, 2 workers", "E15", None, "pass"),
        ("E15:preload", "gunicorn --preload", edited_row(folder, "E15", "preload", [("  preload: false", "  preload: true")]), gunicorn_preload(folder), "fail"),
        ("C5", "granian, 2 threads", "C5", None, "pass"),
        ("C5:thread-per-connection", "faultserver thread-per-connection", "C5",
         fault_profile(folder, "thread-per-connection", ["--idle-timeout-s", "2"]), "fail"),
    ]
    for row in gil_rows():
        with open(os.path.join(ROOT, "specs", row + ".yaml")) as f:
            text = f.read()
        expect = "releases" if "expect: releases" in text else "holds"
        other = "holds" if expect == "releases" else "releases"
        cases.append((row, "expects %s" % expect, row, None, "pass"))
        cases.append((row + ":flipped", "expects %s" % other,
                      edited_row(folder, row, "flipped", [("expect: " + expect, "expect: " + other)]), None, "fail"))
    return cases


def advise_cases():
    """(name, label, argv after `advise`, expected advice)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import advise  # noqa: E402 - the views and their expected advice live there
    import libapp  # noqa: E402
    out = []
    for name, path, expected in advise.VIEWS:
        out.append(("advise:fixture:" + name.replace(" ", "-"), "fixture " + name,
                    ["--path", path, "--server", "granian"], expected))
    for name, path, expected, _, _ in libapp.VIEWS:
        out.append(("advise:libapp:" + path.strip("/"), "libapp " + name,
                    ["--path", path, "--server", "granian", "--app", "app:app", "--app-dir", str(libapp.APP_DIR)],
                    expected))
    for name, path, expected, settings in advise.MODEL_VIEWS:
        out.append(("advise:model:" + name.replace(" ", "-").replace(",", ""), "model " + name,
                    ["--path", path, "--server", "granian"] + advise.MODEL_APP + settings, expected))
    return out


class SecondBurst:
    """One more burst load, 50 ms out of phase with the runner's (burst2)."""

    def __init__(self):
        code = ("import time\ntime.sleep(0.05)\nend=time.monotonic()+3600\n"
                "while time.monotonic()<end:\n t=time.monotonic()+0.1\n"
                " while time.monotonic()<t: pass\n time.sleep(0.1)\n")
        self.proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


# `--keep-all`: advise runs that gave the right advice are kept too (the
# figures a rule is calibrated on).
KEEP_ALL = False


def keep(folder, stem, text):
    """Write a run's whole JSON to `folder` (`--keep`): a miss's figures are
    what says which rule it met; the table's note keeps only its start."""
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, stem.replace(":", "_") + ".json"), "w") as f:
        f.write(text)


def run_child(argv, timeout):
    """`subprocess.run` that stops the runner with SIGTERM, never SIGKILL:
    on a timeout, or when this script is stopped, the runner must get to
    stop its servers' process groups (a SIGKILLed runner left a model app
    server listening for 50 min)."""
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = child.communicate(timeout=timeout)
    except BaseException:
        child.terminate()
        try:
            child.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
        raise
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def stress(exe, target, server, noise, expect, runs, witness, kept=None, stem=""):
    argv = [exe, "stress", target, "--runs", str(runs), "--noise", "burst" if noise == "burst2" else noise,
            "--expect", expect, "--json", "--witness", witness]
    if server:
        argv += ["--server", server]
    proc = run_child(argv, 7200)
    if proc.returncode not in (0, 1):
        return None, "stress exit %d: %s" % (proc.returncode, proc.stderr.strip()[-400:])
    s = json.loads(proc.stdout)
    v = s["verdicts"]
    if s["wrong"] or v.get("cannot-judge", 0):
        keep(kept, stem, proc.stdout)
    walls = [r["figures"].get("gate ms", 0) / 1000 for r in s["results"]]
    reasons = [r["reason"] for r in s["results"] if r["verdict"] == "cannot-judge" or r.get("wrong")]
    return {"runs": s["runs"], "pass": v.get("pass", 0), "fail": v.get("fail", 0),
            "cannot": v.get("cannot-judge", 0) + v.get("not-applicable", 0), "wrong": s["wrong"],
            "median_s": statistics.median(walls) if walls else 0.0}, "; ".join(reasons[:2])


def advise_runs(exe, argv, expected, noise, runs, witness, kept=None, stem=""):
    right = none = wrong = 0
    walls = []
    notes = []
    load = None
    if noise in ("burst", "spin", "burst2"):
        load = []
        # The runner's own noise loads start with `stress`; advise has none,
        # so the same patterns are started here.
        busy = {"burst": 1, "burst2": 2, "spin": 1}[noise]
        for i in range(busy):
            if noise == "spin":
                code = "end=__import__('time').monotonic()+3600\nwhile __import__('time').monotonic()<end: pass\n"
            else:
                code = ("import time\ntime.sleep(%s)\nend=time.monotonic()+3600\n"
                        "while time.monotonic()<end:\n t=time.monotonic()+0.1\n"
                        " while time.monotonic()<t: pass\n time.sleep(0.1)\n") % (0.05 * i)
            load.append(subprocess.Popen([sys.executable, "-c", code], start_new_session=True))
    try:
        for i in range(runs):
            started = time.monotonic()
            out = run_child([exe, "advise", *argv, "--json", "--witness", witness], 900)
            walls.append(time.monotonic() - started)
            try:
                doc = json.loads(out.stdout)
            except json.JSONDecodeError:
                doc = {}
            kind = (doc.get("advice") or {}).get("kind", "none")
            if kind == expected:
                right += 1
                if KEEP_ALL:
                    keep(kept, "%s-%d-right" % (stem, i + 1), out.stdout)
                continue
            keep(kept, "%s-%d" % (stem, i + 1), out.stdout or json.dumps({"stderr": out.stderr[-4000:]}))
            if kind == "none":
                none += 1
                notes.append(str(doc.get("reason", out.stderr.strip()[-200:]))[:200])
            else:
                wrong += 1
                notes.append("WRONG %s: %s" % (kind, str(doc.get("reason", ""))[:200]))
    finally:
        for p in load or []:
            p.kill()
            p.wait()
    return {"runs": runs, "pass": right, "fail": 0, "cannot": none, "wrong": wrong,
            "median_s": statistics.median(walls) if walls else 0.0}, "; ".join(notes[:2])


def takes(prefix, name):
    """Whether `prefix` names case `name` or a case under it (`E19` takes
    E19:one-thread too, not E19-asgi; `advise:libapp` every libapp view);
    a prefix ending in `-` takes every name it begins (`GIL-`: every GIL
    row and its flipped twin)."""
    if prefix.endswith("-"):
        return name.startswith(prefix)
    return name == prefix or name.startswith(prefix + ":")


def selected(name, prefixes):
    """Whether `name` is taken by one of `prefixes` (all, when none)."""
    return not prefixes or any(takes(p, name) for p in prefixes)


def main():
    # The noise loads run in sessions of their own and are killed in
    # `finally` blocks, which SIGTERM would skip: exit through them instead.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cases", default="", help="comma list of case names or prefixes (default: all)")
    ap.add_argument("--noise", default=",".join(NOISES))
    ap.add_argument("--witness", default=",".join(WITNESSES))
    ap.add_argument("--exe", help="a runner binary (default: build the release one)")
    ap.add_argument("--out", help="also write the table, its command and the load here")
    ap.add_argument("--keep", metavar="DIR",
                    help="write the whole JSON of every run that missed (a wrong or no advice; a gate cell "
                         "with a wrong or 'cannot judge' verdict) here, named by cell")
    ap.add_argument("--keep-all", action="store_true",
                    help="with --keep: keep the advise runs that gave the right advice too (calibration)")
    ap.add_argument("--list", action="store_true", help="print every case name and exit")
    ap.add_argument("--shard", help="K/N: run only every Nth cell, from the K-th (1 <= K <= N)")
    ap.add_argument("--merge", nargs="+", metavar="OUT", help="merge the --out files of shards into one table")
    args = ap.parse_args()
    if args.merge:
        sys.exit(merge(args.merge, args.out))
    if args.keep_all and not args.keep:
        sys.exit("--keep-all keeps runs in the --keep DIR: give --keep DIR too")
    global KEEP_ALL
    KEEP_ALL = args.keep_all
    shard = parse_shard(args.shard)
    folder = tempfile.mkdtemp(prefix="decisive-")
    gates = gate_cases(folder)
    advises = advise_cases()
    if args.list:
        for c in gates:
            print("%-28s %-36s must %s" % (c[0], c[1], c[4]))
        for c in advises:
            print("%-28s %-36s must advise %s" % (c[0], c[1], c[3]))
        return
    prefixes = [p for p in args.cases.split(",") if p]
    names = [c[0] for c in gates] + [c[0] for c in advises]
    for p in prefixes:
        if not any(takes(p, n) for n in names):
            sys.exit("--cases %s: no case is %s or under it (`--list` names them; "
                     "`GIL-` takes every GIL row)" % (p, p))
    exe = args.exe
    if not exe:
        subprocess.run(["cargo", "build", "-q", "--release", "-p", "runner"], cwd=ROOT, check=True)
        exe = os.path.join(ROOT, "target", "release", "runner")
    noises = [n for n in args.noise.split(",") if n]
    witnesses = [w for w in args.witness.split(",") if w]
    for n in noises:
        if n not in NOISES:
            sys.exit("--noise %s: use %s" % (n, ",".join(NOISES)))
    for w in witnesses:
        if w not in WITNESSES:
            sys.exit("--witness %s: use %s" % (w, ",".join(WITNESSES)))
    lines = ["| case | server / view | must | noise | witness | runs | right | cannot judge | wrong | decisive | median s | note |",
             "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    print("\n".join(lines), flush=True)
    load_before = os.getloadavg()
    started = time.time()
    total_wrong = 0
    cell_index = [0]

    def mine():
        """Whether the next cell in the grid's order is this shard's."""
        i = cell_index[0]
        cell_index[0] += 1
        return shard is None or i % shard[1] == shard[0] - 1

    for name, label, target, server, expect in gates:
        if not selected(name, prefixes):
            continue
        for noise in noises:
            for witness in witnesses:
                if not mine():
                    continue
                extra = SecondBurst() if noise == "burst2" else None
                try:
                    cell, note = stress(exe, target, server, noise, expect, args.runs, witness,
                                        args.keep, "%s-%s-%s" % (name, noise, witness))
                finally:
                    if extra:
                        extra.stop()
                lines.append(row_line(name, label, expect, noise, witness, cell, note, expect))
                print(lines[-1], flush=True)
                total_wrong += cell["wrong"] if cell else 0
    for name, label, argv, expected in advises:
        if not selected(name, prefixes):
            continue
        for noise in noises:
            for witness in witnesses:
                if not mine():
                    continue
                cell, note = advise_runs(exe, argv, expected, noise, args.runs, witness,
                                         args.keep, "%s-%s-%s" % (name, noise, witness))
                lines.append(row_line(name, label, "advise " + expected, noise, witness, cell, note, "pass"))
                print(lines[-1], flush=True)
                total_wrong += cell["wrong"]
    load_after = os.getloadavg()
    footer = ("\nwrong verdicts in all: %d. Load average (1, 5, 15 min) before %s, after %s; %.0f min.\n"
              % (total_wrong, "/".join("%.1f" % x for x in load_before),
                 "/".join("%.1f" % x for x in load_after), (time.time() - started) / 60))
    footer += targets_footer(lines[2:])
    print(footer)
    if args.out:
        with open(args.out, "w") as f:
            f.write("Made by `python3 %s`\n\n" % " ".join(shlex.quote(a) for a in ["bench/decisive.py"] + sys.argv[1:]))
            f.write("commit: %s\n\n" % commit())
            f.write("\n".join(lines) + "\n" + footer)
    sys.exit(1 if total_wrong else 0)


def parse_shard(text):
    """(K, N) from `K/N`, or None; exits naming the flag when malformed."""
    if not text:
        return None
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        sys.exit("--shard %s: use K/N, as 1/4" % text)
    if not 1 <= k <= n:
        sys.exit("--shard %s: K must be between 1 and N" % text)
    return k, n


def commit():
    """The checkout's commit, with `+dirty` when it has uncommitted changes."""
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return head + ("+dirty" if dirty else "")


TARGET_ON = 95.0
TARGET_PORTABLE_QUIET = 90.0
TARGET_PORTABLE_NOISE = 80.0


def target(noise, witness):
    """The least decisive share a cell must reach (None: only 0 wrong)."""
    if witness == "on":
        return TARGET_ON
    if witness == "portable":
        return TARGET_PORTABLE_QUIET if noise == "none" else TARGET_PORTABLE_NOISE
    return None


def cell_fields(line):
    """A table row's cells, or None for a line that is not a cell row."""
    if not line.startswith("| ") or line.startswith("| case ") or line.startswith("|---"):
        return None
    fields = [f.strip() for f in line.strip().strip("|").split("|")]
    return fields if len(fields) >= 12 else None


def misses(line):
    """Why a cell row misses its targets ("" when it meets them)."""
    f = cell_fields(line)
    if f is None:
        return ""
    noise, witness, wrong, decisive = f[3], f[4], f[8], f[9]
    if wrong == "-":
        return "no reading (%s)" % f[11][:80]
    why = []
    if int(wrong) > 0:
        why.append("%s wrong" % wrong)
    least = target(noise, witness)
    if least is not None and float(decisive.rstrip("%")) < least:
        why.append("decisive %s < %.0f%%" % (decisive, least))
    return ", ".join(why)


def targets_footer(rows):
    """The targets checked over `rows`: a count, and each cell that misses."""
    cells = [r for r in rows if cell_fields(r)]
    missed = [(r, misses(r)) for r in cells if misses(r)]
    out = "\ntargets (0 wrong; decisive >= %.0f%% on, >= %.0f%% portable quiet, >= %.0f%% portable under noise): %d of %d cells meet them.\n" % (
        TARGET_ON, TARGET_PORTABLE_QUIET, TARGET_PORTABLE_NOISE, len(cells) - len(missed), len(cells))
    for r, why in missed:
        f = cell_fields(r)
        out += "- %s, %s, witness %s: %s\n" % (f[0], f[3], f[4], why)
    return out


def merge(paths, out):
    """One table from shards' --out files, in the grid's order."""
    made, commits, rows = [], set(), []
    for path in paths:
        with open(path) as f:
            text = f.read()
        for line in text.splitlines():
            if line.startswith("Made by "):
                made.append(line[len("Made by "):])
            elif line.startswith("commit: "):
                commits.add(line[len("commit: "):])
            elif cell_fields(line):
                rows.append(line)
    if len(commits) != 1:
        return "--merge: the parts must come from one commit, and they name %s" % (sorted(commits) or "none")
    keys = [tuple(cell_fields(r)[i] for i in (0, 3, 4)) for r in rows]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        return "--merge: %s, noise %s, witness %s comes from more than one part" % twice[0]
    order = grid_order()
    rows.sort(key=lambda r: order.get(tuple(cell_fields(r)[i] for i in (0, 3, 4)), len(order)))
    header = ["| case | server / view | must | noise | witness | runs | right | cannot judge | wrong | decisive | median s | note |",
              "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    wrong = sum(int(cell_fields(r)[8]) for r in rows if cell_fields(r)[8] != "-")
    text = "Merged by `python3 bench/decisive.py --merge %s` from:\n\n" % " ".join(shlex.quote(p) for p in paths)
    text += "".join("- %s\n" % m for m in made)
    text += "\ncommit: %s\n\n" % commits.pop()
    text += "\n".join(header + rows) + "\n\nwrong verdicts in all: %d.\n" % wrong
    text += targets_footer(rows)
    text += coverage(keys, order)
    print(text)
    for path in (out, os.environ.get("GITHUB_STEP_SUMMARY")):
        if path:
            with open(path, "w" if path == out else "a") as f:
                f.write(text)
    return 1 if wrong else 0


def coverage(keys, order):
    """Whether the merged cells are the whole grid for the witnesses they
    name (macOS has no `on`); the missing ones named."""
    witnesses = [w for w in WITNESSES if any(k[2] == w for k in keys)]
    grid = [k for k, _ in sorted(order.items(), key=lambda kv: kv[1]) if k[2] in witnesses]
    have = set(keys)
    missing = [k for k in grid if k not in have]
    scope = "witness %s" % ", ".join(witnesses)
    if not missing:
        return "\nthe whole grid for %s: %d of %d cells.\n" % (scope, len(grid), len(grid))
    named = "; ".join("%s, %s, %s" % k for k in missing[:8])
    return "\nnot the whole grid for %s: %d of %d cells are missing (%s%s).\n" % (
        scope, len(missing), len(grid), named, "; ..." if len(missing) > 8 else "")


def grid_order():
    """(case, noise, witness) -> its place in the full grid."""
    folder = tempfile.mkdtemp(prefix="decisive-")
    names = [c[0] for c in gate_cases(folder)] + [c[0] for c in advise_cases()]
    return {(n, noise, w): i for i, (n, noise, w) in enumerate(
        (n, noise, w) for n in names for noise in NOISES for w in WITNESSES)}


def row_line(name, label, must, noise, witness, cell, note, expect):
    if cell is None:
        return "| %s | %s | %s | %s | %s | - | - | - | - | - | - | %s |" % (name, label, must, noise, witness, note)
    right = cell["pass"] if expect == "pass" else cell["fail"]
    # A verdict either way is decisive (wrong ones included, and counted).
    decisive = cell["pass"] + cell["fail"] + (cell["wrong"] if must.startswith("advise") else 0)
    return "| %s | %s | %s | %s | %s | %d | %d | %d | %d | %.0f%% | %.1f | %s |" % (
        name, label, must, noise, witness, cell["runs"], right, cell["cannot"], cell["wrong"],
        100.0 * decisive / max(1, cell["runs"]), cell["median_s"], note.replace("|", "/")[:160])


if __name__ == "__main__":
    main()
