#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`rocewatch fleet check FILE...` over N snapshot files (default 8 000: a 64 000-GPU job).

Each file is the 8-NIC mlx5 model (the last element of
tests/fixtures/snapshots/rules/good-8nic.json, indented as `json.dumps(indent=2)` writes
it, about 150 KiB) with its own host name, one file per node, as
`srun --output=DIR/%N.json rocewatch snapshot` leaves them.  Budget: 8 000 files in
<= 3 s wall and <= 256 MiB peak RSS.

Prints wall time, CPU time of all of fleet check's threads (user + system) and its peak
RSS, best and median of several runs.  --before BINARY runs an older build on the same
files too, and the two reports must agree: the same exit status and the same JSON report
(every node's state, reason and outcome, every rule's result), timings aside.

--quick: 200 files, one run (the bench suite keeps this working).
--dir DIR: write the files there and keep them (a later run with the same DIR and N
reuses them).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SNAP = os.path.join(HERE, "..", "fixtures", "snapshots", "rules", "good-8nic.json")


def generate(directory, n):
    """n snapshot files gpuNNNNN.json in directory (kept if already there)."""
    with open(SNAP) as f:
        model = json.load(f)[-1]
    os.makedirs(directory, exist_ok=True)
    marker = os.path.join(directory, ".count")
    if os.path.exists(marker) and open(marker).read() == str(n):
        return
    for name in os.listdir(directory):
        if name.endswith(".json"):
            os.unlink(os.path.join(directory, name))
    # one encoding with a placeholder host, so 8 000 files take a second, not a minute
    model["host"] = "@HOST@"
    text = json.dumps(model, indent=2)
    for i in range(n):
        host = "gpu%05d" % i
        with open(os.path.join(directory, host + ".json"), "w") as f:
            f.write(text.replace('"@HOST@"', '"%s"' % host, 1))
    with open(marker, "w") as f:
        f.write(str(n))


def run_measured(binary, directory):
    t0 = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                os.execv(binary, [binary, "fleet", "check", "-j", directory])
            finally:
                os._exit(127)
        _, status, ru = os.wait4(pid, 0)
        wall = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        report, errors = out.read(), err.read()
    rc = os.waitstatus_to_exitcode(status)
    try:
        d = json.loads(report)
    except ValueError:
        raise SystemExit("%s: fleet check printed no JSON (exit %d): %s" % (binary, rc, errors[-500:]))
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss, "rc": rc,
            "report": d}


def verdicts(d):
    """The report without what differs from run to run (times)."""
    d = dict(d)
    for k in ("time", "gather_seconds", "rocewatch_version"):
        d.pop(k, None)
    return json.dumps(d, sort_keys=True)


def measure(label, binary, directory, runs):
    res = [run_measured(binary, directory) for _ in range(runs)]
    walls = [r["wall"] for r in res]
    cpus = [r["cpu"] for r in res]
    print("%-8s %9.2fs %9.2fs %9.2fs %7d MiB   exit %d  %s" % (
        label, min(walls),
        statistics.median(walls), statistics.median(cpus), max(r["rss"] for r in res) // 1024,
        res[-1]["rc"], binary))
    return res[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--files", type=int, default=8000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--before", metavar="BINARY", help="an older build, run on the same files")
    ap.add_argument("--dir", help="where the files are written (kept)")
    a = ap.parse_args()
    n = 200 if a.quick else a.files
    runs = 1 if a.quick else a.runs
    tmp = None
    directory = a.dir
    if not directory:
        tmp = tempfile.mkdtemp(prefix="rw-fleet-files-")
        directory = tmp
    try:
        generate(directory, n)
        size = os.path.getsize(os.path.join(directory, "gpu00000.json"))
        print("fleet check of %d snapshot files (%d KiB each, 8 NICs), %d CPUs, best and median of %d"
              % (n, size // 1024, os.cpu_count(), runs))
        print("%-8s %10s %10s %10s %10s" % ("build", "wall best", "wall med", "CPU med", "max RSS"))
        now = measure("this", a.binary, directory, runs)
        d = now["report"]
        if d["counts"]["answered"] != n:
            bad = [x for x in d["nodes"] if x["state"] != "ok"][:3]
            raise SystemExit("not every file was read: %s" % bad)
        if d["status"] != "OK":
            raise SystemExit("fleet check said %s of %d identical nodes" % (d["status"], n))
        if a.before:
            old = measure("before", a.before, directory, runs)
            same = old["rc"] == now["rc"] and verdicts(old["report"]) == verdicts(d)
            print("verdicts: %s (exit %d and %d)" % ("identical" if same else "DIFFERENT",
                                                      now["rc"], old["rc"]))
            if not same:
                return 1
        print("budget: 8 000 files in <= 3 s wall and <= 256 MiB peak RSS")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
