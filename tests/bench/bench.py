#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rocewatch vs prometheus-node-exporter on the same generated RDMA sysfs tree.

Prints, for 1, 8 and 32 mlx5-shaped devices: CPU time per collection (rocewatch per
fast poll, node_exporter per scrape with --collector.infiniband) and the ratio;
/metrics latency (median, p99) under a steady scrape load; resident memory after
warm-up; `rocewatch check` wall time; rocewatch's fast-poll CPU share at 1 Hz and
10 Hz.  CPU time comes from /proc/PID/task/*/schedstat (nanoseconds), so it is exact
per process and not a sampled estimate.  Absolute times vary between machines;
compare the ratios.

--quick runs every measurement once, briefly, so `make test` keeps this working.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cpu_ns(pid):
    total = 0
    for f in glob.glob("/proc/%d/task/*/schedstat" % pid):
        try:
            with open(f) as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def mem_kib(pid):
    """RSS, PSS and private (anonymous + private file) KiB from smaps_rollup."""
    out = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                k, _, rest = line.partition(":")
                if k in ("Rss", "Pss", "Private_Clean", "Private_Dirty"):
                    out[k] = int(rest.split()[0])
    except OSError:
        return rss_kib(pid), 0, 0
    return out.get("Rss", 0), out.get("Pss", 0), out.get("Private_Clean", 0) + out.get("Private_Dirty", 0)


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_http(url, timeout=20):
    end = time.time() + timeout
    while time.time() < end:
        try:
            return get(url)
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("no answer from " + url)


def metric(text, name):
    m = re.search(r"^%s(?:\{[^}]*\})? ([0-9.e+]+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def polls(text):
    m = re.search(r'^rocewatch_polls_total\{loop="fast"\} (\d+)$', text, re.M)
    return int(m.group(1)) if m else 0


class Proc:
    def __init__(self, argv, url):
        self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.url = url
        try:
            wait_http(url)
        except RuntimeError:
            self.p.kill()
            raise RuntimeError("%s did not start: %s" % (argv[0], self.p.stderr.read().decode()[-500:]))

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()


def start_rocewatch(binary, tree, interval="1s"):
    port = free_port()
    argv = [binary, "serve", "--web.listen-address", "127.0.0.1:%d" % port,
            "--sysfs-root", tree, "--interval", interval, "--config-interval", "60s",
            "--netdev-exclude", ".*", "--log-level", "error"]
    return Proc(argv, "http://127.0.0.1:%d/metrics" % port)


def start_node_exporter(tree):
    port = free_port()
    argv = ["prometheus-node-exporter", "--path.sysfs", tree, "--collector.disable-defaults",
            "--collector.infiniband", "--web.listen-address", "127.0.0.1:%d" % port,
            "--log.level", "error"]
    return Proc(argv, "http://127.0.0.1:%d/metrics" % port)


def rocewatch_cpu_per_poll(binary, tree, seconds):
    """CPU per fast poll: run at 10 Hz, CPU delta / polls delta."""
    rw = start_rocewatch(binary, tree, "100ms")
    try:
        time.sleep(1.0)  # warm-up: first slow poll opens files
        t0, c0, p0 = time.time(), cpu_ns(rw.p.pid), polls(get(rw.url))
        time.sleep(seconds)
        c1, p1 = cpu_ns(rw.p.pid), polls(get(rw.url))
        rss = rss_kib(rw.p.pid)
    finally:
        rw.stop()
    n = max(p1 - p0, 1)
    return (c1 - c0) / n, rss, n


def node_exporter_cpu_per_scrape(tree, scrapes):
    ne = start_node_exporter(tree)
    try:
        for _ in range(5):
            get(ne.url)  # warm-up
        # idle baseline over the same time as the scrapes take
        c0 = cpu_ns(ne.p.pid)
        t0 = time.time()
        for _ in range(scrapes):
            get(ne.url)
        dt = time.time() - t0
        c1 = cpu_ns(ne.p.pid)
        time.sleep(dt)
        c2 = cpu_ns(ne.p.pid)
        rss = rss_kib(ne.p.pid)
    finally:
        ne.stop()
    busy = (c1 - c0) - (c2 - c1)
    return max(busy, 0) / scrapes, rss


def latency(url, seconds):
    """Median and p99 of /metrics latency under a steady load (wrk if present)."""
    if shutil.which("wrk"):
        out = subprocess.run(["wrk", "-t1", "-c2", "-d%ds" % seconds, "--latency", url],
                             capture_output=True, text=True).stdout
        def pct(p):
            m = re.search(r"^\s+%s%%\s+([0-9.]+)(us|ms|s)" % p, out, re.M)
            if not m:
                return None
            v = float(m.group(1))
            return v / 1000.0 if m.group(2) == "us" else v * 1000.0 if m.group(2) == "s" else v
        return pct("50"), pct("99")
    samples = []
    end = time.time() + seconds
    while time.time() < end:
        t = time.perf_counter()
        get(url)
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def poll_share(binary, tree, interval, seconds):
    rw = start_rocewatch(binary, tree, interval)
    try:
        time.sleep(1.0)
        c0, t0 = cpu_ns(rw.p.pid), time.time()
        time.sleep(seconds)
        c1, t1 = cpu_ns(rw.p.pid), time.time()
    finally:
        rw.stop()
    return (c1 - c0) / ((t1 - t0) * 1e9) * 100.0


def check_wall(binary, tree, runs):
    if subprocess.run([binary, "check", "--help"], capture_output=True).returncode != 0:
        return None
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([binary, "check", "--sysfs-root", tree, "--netdev-exclude", ".*",
                        "--format", "json"], capture_output=True)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()

    if not shutil.which("prometheus-node-exporter"):
        print("SKIP: prometheus-node-exporter not installed")
        return 77
    sizes = [8] if a.quick else [1, 8, 32]
    secs = 2 if a.quick else 10
    results = {"sizes": {}}
    work = tempfile.mkdtemp(prefix="rocewatch-bench-")
    try:
        print("%-8s %22s %26s %8s" % ("devices", "rocewatch CPU/poll", "node_exporter CPU/scrape", "ratio"))
        for n in sizes:
            tree = os.path.join(work, "t%d" % n)
            subprocess.run([sys.executable, os.path.join(HERE, "gen-sysfs.py"), tree, "-n", str(n)], check=True)
            rw_ns, rw_rss, npolls = rocewatch_cpu_per_poll(a.binary, tree, secs)
            ne_ns, ne_rss = node_exporter_cpu_per_scrape(tree, 20 if a.quick else 100)
            ratio = ne_ns / rw_ns if rw_ns else float("inf")
            results["sizes"][n] = {"rocewatch_cpu_us_per_poll": rw_ns / 1e3, "node_exporter_cpu_us_per_scrape": ne_ns / 1e3,
                                   "ratio": ratio, "rocewatch_rss_kib": rw_rss, "node_exporter_rss_kib": ne_rss, "polls": npolls}
            print("%-8d %19.1f us %23.1f us %7.1fx" % (n, rw_ns / 1e3, ne_ns / 1e3, ratio))
        tree = os.path.join(work, "t8")
        rw = start_rocewatch(a.binary, tree, "1s")
        ne = start_node_exporter(tree)
        try:
            time.sleep(1.5)
            rw_med, rw_p99 = latency(rw.url, secs)
            ne_med, ne_p99 = latency(ne.url, secs)
            rw_mem, ne_mem = mem_kib(rw.p.pid), mem_kib(ne.p.pid)
            rw_rss, ne_rss = rw_mem[0], ne_mem[0]
        finally:
            rw.stop()
            ne.stop()
        results.update({"latency_ms": {"rocewatch": [rw_med, rw_p99], "node_exporter": [ne_med, ne_p99]},
                        "rss_kib": {"rocewatch": rw_rss, "node_exporter": ne_rss},
                        "pss_private_kib": {"rocewatch": rw_mem[1:], "node_exporter": ne_mem[1:]}})
        print()
        print("/metrics latency, 8 devices (median / p99): rocewatch %.3f / %.3f ms, node_exporter %.3f / %.3f ms, ratio %.1fx (median)"
              % (rw_med, rw_p99, ne_med, ne_p99, ne_med / rw_med if rw_med else 0))
        print("resident memory after warm-up: rocewatch %.1f MiB (PSS %.1f, private %.1f), node_exporter %.1f MiB (PSS %.1f, private %.1f)"
              % (rw_rss / 1024, rw_mem[1] / 1024, rw_mem[2] / 1024, ne_rss / 1024, ne_mem[1] / 1024, ne_mem[2] / 1024))
        cw = check_wall(a.binary, tree, 3 if a.quick else 20)
        results["check_ms"] = cw
        print("rocewatch check wall time, 8 devices: %s" % ("%.1f ms" % cw if cw is not None else "n/a (no check command)"))
        s1 = poll_share(a.binary, tree, "1s", secs if a.quick else 20)
        s10 = poll_share(a.binary, tree, "100ms", secs)
        results["poll_share_percent"] = {"1Hz": s1, "10Hz": s10}
        print("fast-poll CPU share, 8 devices: %.3f %% of a core at 1 Hz, %.3f %% at 10 Hz" % (s1, s10))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
