#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fast poll in steady state: serve after its longest window has filled.

bench.py measures a serve in its first seconds, while every counter window is still
filling (each result's "(only 3.2s of the 5m window observed)" changes every poll).  A
serve runs for days: after the shipped profile's longest window (1 h) its counter
results stand frozen while their counters do not move (docs/rules.md, Settled
results), and the poll costs what that state costs.  This starts `serve --interval
100ms` for each binary given (an A/B: the same tree, the same time), on an 8-device
tree (classic counters only unless --full), waits --minutes, then measures as bench.py
does: CPU of all threads per fast poll over windows of --seconds, the floor run in each
window alongside, the binaries' windows interleaved; prints the median [min-max] of the
per-window ratios to the floor and to the paced floor.

Usage: bench_steady.py BINARY [BINARY...] [--minutes 62] [--rounds 6] [--seconds 2]
                       [--full] [--floor PATH]
Not part of `make bench` (an hour's wait); README, Performance, gives its figures.
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def cpu_all_threads(pid):
    return sum(int(open(f).read().split()[0])
               for f in glob.glob("/proc/%d/task/*/schedstat" % pid))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--minutes", type=float, default=62)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--full", action="store_true", help="classic and hw counters")
    ap.add_argument("--floor", help="default: the first binary's build dir/tests/bench_floor")
    a = ap.parse_args()
    floor = a.floor or os.path.join(os.path.dirname(os.path.abspath(a.binaries[0])), "tests",
                                    "bench_floor")
    classic = not a.full
    with tempfile.TemporaryDirectory(prefix="rw-steady-") as tmp:
        tree = os.path.join(tmp, "sys")
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "gen-sysfs.py"),
                        tree, "-n", "8"] + (["--classic-only"] if classic else []), check=True)
        serves = [bench.start_rocewatch(b, tree, "100ms") for b in a.binaries]
        try:
            print("waiting %.0f min for the windows to fill (%s)" % (a.minutes, time.strftime("%T")),
                  flush=True)
            time.sleep(a.minutes * 60)
            ratios = {b: ([], [], []) for b in a.binaries}
            for r in range(a.rounds):
                for b, s in zip(a.binaries, serves):
                    c0, p0 = cpu_all_threads(s.p.pid), bench.polls(bench.get(s.url))
                    fl, paced, _ = bench.floor_once(floor, tree, a.seconds, classic)
                    c1, p1 = cpu_all_threads(s.p.pid), bench.polls(bench.get(s.url))
                    per = (c1 - c0) / max(p1 - p0, 1)
                    x, xp, us = ratios[b]
                    x.append(per / fl)
                    xp.append(per / paced)
                    us.append(per)
                    print("round %d %s: %.0f us a poll, floor %.0f (paced %.0f): %.2fx, paced %.2fx"
                          % (r, b, per / 1e3, fl / 1e3, paced / 1e3, per / fl, per / paced),
                          flush=True)
            for b, s in zip(a.binaries, serves):
                x, xp, us = ratios[b]
                print("%s: %.2fx [%.2f-%.2f] the floor, %.2fx [%.2f-%.2f] paced, %.0f us a poll, "
                      "RSS %.2f MiB" % (b, statistics.median(x), min(x), max(x),
                                         statistics.median(xp), min(xp), max(xp),
                                         statistics.median(us) / 1e3,
                                         bench.rss_kib(s.p.pid) / 1024))
        finally:
            for s in serves:
                s.stop()


if __name__ == "__main__":
    main()
