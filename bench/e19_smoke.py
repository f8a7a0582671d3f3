#!/usr/bin/env python3
"""E19 at the smoke's speed: `runner gate E19` timed side by side with a
plain Python smoke of the same claim (issue 19's figure).

The smoke: a fresh granian (WSGI, 2 blocking threads) on the fixture app,
one warm-up pair, then 5 trials a mode, each timing one request alone and
then two at once on two kept-alive connections, for the releasing and the
holding `/work` modes (24 MiB of SHA-256 each, E19's work); it prints
min(pair)/min(single) per mode and stops the server. The gate: the release
binary's `gate E19 --server granian`. Both are timed from start to exit,
interleaved run by run (the order alternates), `--runs` each.

Prints a Markdown table: median and range of seconds, the runner's median
over the smoke's, the gate's verdicts and the trials it ran.

    python3 bench/e19_smoke.py --runs 10
    python3 bench/e19_smoke.py --runs 10 --noise burst   # both under the same load
    python3 bench/e19_smoke.py --runs 3 --exe /tmp/runner-base   # another build

`--noise burst` keeps one core busy 100 ms out of every 200 ms (the
runner's own `--noise burst` pattern) for the whole bench, in one process
the bench starts and stops, so the smoke and the gate run under the same
load; `spin` keeps one core busy all along.
"""

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIB = 24576
TRIALS = 5


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(conn, path):
    conn.request("GET", path)
    reply = conn.getresponse()
    body = reply.read()
    if reply.status != 200:
        raise RuntimeError("%s: HTTP %d %r" % (path, reply.status, body[:200]))


def smoke(python):
    """One smoke run: (wall seconds, {mode: ratio})."""
    start = time.monotonic()
    port = free_port()
    server = subprocess.Popen(
        [python, "-m", "granian", "--interface", "wsgi", "--no-ws", "--host", "127.0.0.1",
         "--port", str(port), "--working-dir", os.path.join(ROOT, "fixtures", "bareapp"),
         "--blocking-threads", "2", "app:app"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                get(c, "/")
                c.close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("granian did not answer in 20 s")
                time.sleep(0.02)
        conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=30) for _ in range(2)]
        seed = [0]

        def path(mode):
            seed[0] += 1
            return "/work?mode=%s&kib=%d&seed=%d" % (mode, KIB, seed[0])

        def pair(mode):
            paths = [path(mode), path(mode)]
            go = threading.Barrier(3)
            errors = []

            def one(i):
                go.wait()
                try:
                    get(conns[i], paths[i])
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(e)

            ts = [threading.Thread(target=one, args=(i,)) for i in range(2)]
            for t in ts:
                t.start()
            go.wait()
            t0 = time.perf_counter()
            for t in ts:
                t.join()
            if errors:
                raise errors[0]
            return time.perf_counter() - t0

        def single(mode):
            t0 = time.perf_counter()
            get(conns[0], path(mode))
            return time.perf_counter() - t0

        modes = ("release", "hold")
        for mode in modes:
            pair(mode)  # warm-up
        times = {m: ([], []) for m in modes}
        for _ in range(TRIALS):
            for mode in modes:
                times[mode][0].append(single(mode))
                times[mode][1].append(pair(mode))
        ratios = {m: min(times[m][1]) / min(times[m][0]) for m in modes}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    return time.monotonic() - start, ratios


def gate(exe):
    """One `gate E19`: (wall seconds, verdict, trials)."""
    start = time.monotonic()
    proc = subprocess.run([exe, "gate", "E19", "--server", "granian", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - start
    try:
        doc = json.loads(proc.stdout)
        result = doc["results"][0] if "results" in doc else doc
        verdict = result.get("verdict", "?")
        trials = (result.get("run") or {}).get("trials_done") or \
            (result.get("figures") or {}).get("trials", "?")
    except (ValueError, KeyError, IndexError, TypeError):
        verdict, trials = "exit %d" % proc.returncode, "?"
    return wall, verdict, trials


# The runner's burst and spin loads (runner/src/kernel/noise.rs), as one
# process for the whole bench.
NOISE_LOOP = '''
import sys, time
on, off = float(sys.argv[1]) / 1e3, float(sys.argv[2]) / 1e3
end = time.monotonic() + 3600
while time.monotonic() < end:
    busy = time.monotonic() + on
    while time.monotonic() < busy:
        pass
    if off:
        time.sleep(off)
'''
DUTY_MS = {"burst": (100, 100), "spin": (1000, 0)}


def start_noise(noise):
    if noise == "none":
        return None
    on, off = DUTY_MS[noise]
    return subprocess.Popen([sys.executable, "-c", NOISE_LOOP, str(on), str(off)],
                            start_new_session=True)


def spread(xs):
    return "%.2f [%.2f-%.2f]" % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--exe", help="a runner binary to time (default: build the release one)")
    ap.add_argument("--noise", choices=["none", "burst", "spin"], default="none",
                    help="background load for the whole bench, the same for both")
    args = ap.parse_args()
    exe = args.exe
    if not exe:
        subprocess.run(["cargo", "build", "-q", "--release", "-p", "runner"], cwd=ROOT, check=True)
        exe = os.path.join(ROOT, "target", "release", "runner")
    python = os.path.join(ROOT, ".gates", "venv", "bin", "python")
    if not os.path.exists(python):
        sys.exit("no %s: run `runner prepare` first" % python)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    smokes, gates, verdicts, trials, ratios = [], [], [], [], []
    noise = start_noise(args.noise)
    try:
        measure(args, exe, python, smokes, gates, verdicts, trials, ratios)
    finally:
        if noise is not None:
            os.killpg(noise.pid, signal.SIGKILL)
            noise.wait()
    print("load average at start: %s; noise: %s" % (" ".join(load), args.noise))
    print()
    print("| | runs | median s [range] | runner / smoke |")
    print("|---|---:|---:|---:|")
    print("| plain Python smoke (granian, 5 trials a mode) | %d | %s | |" % (len(smokes), spread(smokes)))
    print("| runner gate E19 | %d | %s | %.2fx |" % (
        len(gates), spread(gates), statistics.median(gates) / statistics.median(smokes)))
    print()
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    print("gate verdicts: %s; trials: %s" % (counts, trials))
    print("smoke ratios: release %s, hold %s" % (
        spread([r["release"] for r in ratios]), spread([r["hold"] for r in ratios])))


def measure(args, exe, python, smokes, gates, verdicts, trials, ratios):
    for i in range(args.runs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for which in order:
            if which == 0:
                wall, r = smoke(python)
                smokes.append(wall)
                ratios.append(r)
            else:
                wall, v, n = gate(exe)
                gates.append(wall)
                verdicts.append(v)
                trials.append(n)
        print("run %d: smoke %.2f s (release %.2fx, hold %.2fx), gate %.2f s (%s, %s trials)" % (
            i + 1, smokes[-1], ratios[-1]["release"], ratios[-1]["hold"], gates[-1],
            verdicts[-1], trials[-1]), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
