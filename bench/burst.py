#!/usr/bin/env python3
"""Two desynchronised burst loads as one command: the "two-core burst" the
decisive table calls burst2, for running anything beside it (a test, a
stress run, the suite).

Each load spins 100 ms and sleeps 100 ms, the pattern of `runner stress
--noise burst`; the second starts 50 ms after the first, so for part of
every period both cores are busy, for part one is, and for part none.

    python3 bench/burst.py                     # until Ctrl-C / SIGTERM
    python3 bench/burst.py --seconds 600       # for ten minutes
    python3 bench/burst.py --loads 1           # one burst load only

It prints its load processes' pids once, then nothing; on SIGTERM, SIGINT
or the end of --seconds it stops them.
"""

import argparse
import multiprocessing
import signal
import sys
import time

BUSY_S = 0.1
IDLE_S = 0.1
OFFSET_S = 0.05


def burst(delay_s, end):
    time.sleep(delay_s)
    while time.monotonic() < end:
        busy_until = time.monotonic() + BUSY_S
        while time.monotonic() < busy_until:
            pass
        time.sleep(IDLE_S)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=24 * 3600.0)
    ap.add_argument("--loads", type=int, default=2)
    args = ap.parse_args()
    end = time.monotonic() + args.seconds
    procs = [multiprocessing.Process(target=burst, args=(OFFSET_S * i, end), daemon=True)
             for i in range(args.loads)]
    for p in procs:
        p.start()
    print("burst loads: " + " ".join(str(p.pid) for p in procs), flush=True)

    def stop(*_):
        for p in procs:
            p.terminate()
        for p in procs:
            p.join()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while time.monotonic() < end and any(p.is_alive() for p in procs):
        time.sleep(0.5)
    stop()


if __name__ == "__main__":
    main()
