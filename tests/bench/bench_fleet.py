#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`rocewatch fleet check` of 1024 nodes on loopback (budget: well under 10 s on a LAN).

Real `rocewatch serve --from` instances answer /api/v1/state; each serve stands for many
nodes, reached at distinct loopback addresses (127.1.X.1 all route to lo), so the node
list is a Slurm hostlist of 1024 names: 127.1.[0-127].1:[P-P+7].  Every answer is a
whole 8-NIC node model (tests/fixtures/snapshots/rules/good-8nic.json, about 130 KiB).
Prints wall time, the CPU time of fleet check itself and its peak RSS, best and median
of several runs, for a few --parallel settings.

A loopback run measures the client (transfers, JSON parsing, rule evaluation) and one
machine's serve instances; on a LAN every node renders its own answer, in parallel.

--quick: 64 nodes, one run, so the bench suite keeps this working.
"""
import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SNAP = os.path.join(HERE, "..", "fixtures", "snapshots", "rules", "good-8nic.json")


def free_run(n):
    """A base port with n free ports after it."""
    for base in range(20000, 60000, 97):
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                s.bind(("0.0.0.0", p))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise SystemExit("no run of %d free ports" % n)


def wait_up(url, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("%s did not come up" % url)


def run_fleet(binary, hostlist, parallel):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([binary, "fleet", "check", "-j", "--parallel", str(parallel),
                        "--timeout", "30s", hostlist], capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        d = json.loads(p.stdout)
    except ValueError:
        raise SystemExit("fleet check printed no JSON (exit %d): %s" % (p.returncode, p.stderr[-500:]))
    if d["counts"]["answered"] != d["counts"]["nodes"]:
        bad = [n for n in d["nodes"] if n["state"] != "ok"][:3]
        raise SystemExit("not every node answered: %s" % bad)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss, d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--nodes", type=int, default=1024)
    ap.add_argument("--servers", type=int, default=16)
    a = ap.parse_args()
    nodes = 64 if a.quick else a.nodes
    servers = a.servers
    per = nodes // servers
    runs = 1 if a.quick else 5
    base = free_run(servers)
    procs = []
    log = tempfile.TemporaryFile()
    try:
        for k in range(servers):
            procs.append(subprocess.Popen([a.binary, "serve", "--web.listen-address", ":%d" % (base + k),
                                           "--interval", "1s", "--from", SNAP],
                                          stdout=log, stderr=log))
        for k in range(servers):
            wait_up("http://127.0.0.1:%d/healthz" % (base + k))
        hostlist = "127.1.[0-%d].1:[%d-%d]" % (per - 1, base, base + servers - 1)
        size = len(urllib.request.urlopen("http://127.0.0.1:%d/api/v1/state" % base).read())
        print("fleet check: %d nodes (%d serve instances, %d KiB per answer, 8 NICs each), %d CPUs"
              % (per * servers, servers, size // 1024, os.cpu_count()))
        print("%-10s %10s %10s %10s %10s" % ("parallel", "wall best", "wall med", "CPU med", "max RSS"))
        # a serve takes 64 connections per client address; 16 serves take 256 in flight
        for par in ([64] if a.quick else [16, 64, 256]):
            res = [run_fleet(a.binary, hostlist, par) for _ in range(runs)]
            walls = [r[0] for r in res]
            cpus = [r[1] for r in res]
            print("%-10d %9.2fs %9.2fs %9.2fs %7d MiB" % (par, min(walls), statistics.median(walls),
                                                        statistics.median(cpus), max(r[2] for r in res) // 1024))
            d = res[-1][3]
            assert d["status"] == "OK", d["status"]
        print("budget: 1024 nodes well under 10 s on a LAN")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
