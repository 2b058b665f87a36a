#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rocewatch vs its floor and prometheus-node-exporter on the same generated RDMA sysfs tree.

For 1, 8 and 32 mlx5-shaped devices, CPU time per collection of:
  - the floor (tests/bench/floor.c): the same counter files opened once, then pread
    and parsed each iteration, paced like serve (100 ms) -- nothing else;
  - rocewatch's fast poll at 10 Hz, default profile with alerts, recorder off and on
    (`--record`), and a fast poll followed by a scrape of /metrics (rendered once per
    poll when someone scrapes: the cost a Prometheus scraping every poll would add);
  - node_exporter per scrape (`--collector.infiniband`).
Two comparisons: each exporter's default on the same tree (rocewatch reads 21 classic
+ 39 hw counters per port, node_exporter 1.5 only the 21 classic ones), and the same
work (a tree with classic counters only); plus CPU per counter file.  Then /metrics
latency, resident and private memory, `rocewatch check` wall time and rocewatch's
CPU share at 1 Hz and 10 Hz.  CPU comes from /proc/PID/task/*/schedstat
(nanoseconds), so it is exact per process, not sampled.  Each rocewatch/floor figure
is the median of 5 consecutive windows with their range ([min-max]); the floor runs in
the same windows as rocewatch's poll (both paced at 100 ms, each its own process), and
"x floor" is the median and range of the per-window ratios, so both sides of a ratio
saw the same load ("x paced": against the floor's CPU with its own pacing in, the
sleep and wake-up every poll pays, which "floor" leaves out).  Absolute times vary between machines; compare the ratios.

--quick measures 8 devices once, briefly, so `make test` keeps this working.
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
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
# windows (trials) per figure: the median and the spread of this many
WINDOWS = 5


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


def load_floor_kib(floor, binary, trials=5):
    """Peak RSS of `rocewatch version`, KiB, median of trials (run by the floor program: a
    child forked from this Python would start at Python's RSS): the binary and every library
    it links loaded, relocated and initialised, and nothing else done -- the part of serve's
    RSS no change to rocewatch's own code moves."""
    peaks = []
    for _ in range(trials):
        out = subprocess.run([floor, "--peak-rss", binary, "version"], capture_output=True,
                             text=True, check=True).stdout
        peaks.append(json.loads(out)["peak_rss_kib"])
    return sorted(peaks)[len(peaks) // 2]


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


def start_rocewatch(binary, tree, interval="1s", record=None):
    port = free_port()
    argv = [binary, "serve", "--web.listen-address", "127.0.0.1:%d" % port,
            "--sysfs-root", tree, "--interval", interval, "--config-interval", "60s",
            "--netdev-exclude", ".*", "--log-level", "error"]
    if record:
        argv += ["--record", record]
    return Proc(argv, "http://127.0.0.1:%d/metrics" % port)


def start_node_exporter(tree):
    port = free_port()
    argv = ["prometheus-node-exporter", "--path.sysfs", tree, "--collector.disable-defaults",
            "--collector.infiniband", "--web.listen-address", "127.0.0.1:%d" % port,
            "--log.level", "error"]
    return Proc(argv, "http://127.0.0.1:%d/metrics" % port)


def spread(xs):
    """(median, min, max) of a list of figures."""
    return statistics.median(xs), min(xs), max(xs)


def fmt(t, unit=1e3):
    med, lo, hi = t
    return "%.0f [%.0f-%.0f]" % (med / unit, lo / unit, hi / unit)


def rocewatch_cpu_per_poll(binary, tree, seconds, record=None, scrape=False, windows=WINDOWS,
                           during=None):
    """CPU per fast poll at 10 Hz: CPU delta / polls delta over `windows` windows.

    scrape: fetch /metrics once after every poll (a new poll is seen in the page's own
    rocewatch_polls_total), so each poll also pays one render.
    during: run during each window instead of sleeping through it (the floor, measured
    at the same time under the same load); its results come back as a list.
    """
    rw = start_rocewatch(binary, tree, "100ms", record)
    per, side = [], []
    try:
        time.sleep(1.0)  # warm-up: first slow poll opens files
        c0, p0 = cpu_ns(rw.p.pid), polls(get(rw.url))
        for _ in range(windows):
            end = time.time() + seconds / windows
            if scrape:
                last = p0
                while time.time() < end:
                    p = polls(get(rw.url))
                    time.sleep(0.1 if p != last else 0.02)
                    last = p
            elif during:
                side.append(during(seconds / windows))
            else:
                time.sleep(seconds / windows)
            c1, p1 = cpu_ns(rw.p.pid), polls(get(rw.url))
            per.append((c1 - c0) / max(p1 - p0, 1))
            c0, p0 = cpu_ns(rw.p.pid), p1
        rss = rss_kib(rw.p.pid)
    finally:
        rw.stop()
    return (spread(per), rss, per, side) if during else (spread(per), rss)


def floor_once(floor, tree, seconds, classic_only=False):
    """One run of the floor program, paced at 100 ms: (CPU ns per iteration around the reads,
    the same with its pacing in -- the sleep and wake-up a poll pays too --, files)."""
    argv = [floor, tree, "--interval-ms", "100", "--iterations", str(max(int(seconds * 10), 3))]
    if classic_only:
        argv.append("--classic-only")
    out = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    return (out["cpu_ns_per_iteration"], out.get("paced_cpu_ns_per_iteration", 0),
            out["files"])


def floor_and_rocewatch(a, tree, seconds, classic_only=False):
    """The floor and rocewatch's fast poll in the same windows, side by side (the floor runs
    while rocewatch polls, so both see the same load): their spreads, the spread of the
    per-window ratios, files and rocewatch's RSS."""
    rw, rss, rw_per, side = rocewatch_cpu_per_poll(
        a.binary, tree, seconds, during=lambda t: floor_once(a.floor, tree, t, classic_only))
    fl_per = [x for x, _, _ in side]
    paced = [p for _, p, _ in side]
    ratios = [r / f for r, f in zip(rw_per, fl_per) if f]
    paced_ratios = [r / f for r, f in zip(rw_per, paced) if f] or [0]
    return spread(fl_per), rw, spread(ratios), spread(paced_ratios), side[0][2], rss


def node_exporter_cpu_per_scrape(tree, scrapes, windows=WINDOWS):
    ne = start_node_exporter(tree)
    per = []
    try:
        for _ in range(5):
            get(ne.url)  # warm-up
        for _ in range(windows):
            # idle baseline over the same time as the scrapes take
            c0 = cpu_ns(ne.p.pid)
            t0 = time.time()
            for _ in range(scrapes):
                get(ne.url)
            dt = time.time() - t0
            c1 = cpu_ns(ne.p.pid)
            time.sleep(dt)
            c2 = cpu_ns(ne.p.pid)
            per.append(max((c1 - c0) - (c2 - c1), 0) / scrapes)
        rss = rss_kib(ne.p.pid)
    finally:
        ne.stop()
    return spread(per), rss


def ratio(a, b):
    return a[0] / b[0] if b[0] else float("inf")


def compare(a, sizes, work, secs, quick):
    """Both comparisons for each size; returns the results and prints the tables."""
    out = {}
    head = ("%-4s %-7s %18s %20s %17s %17s %20s %6s %20s %22s %7s %7s"
            % ("devs", "tree", "floor us/iter", "rocewatch us/poll", "xfloor [spread]",
               "xpaced [spread]", "+recorder us/poll", "xfloor", "poll+scrape us",
               "node_exporter us/scr", "ne/poll", "ne/p+s"))
    print(head)
    for n in sizes:
        for classic in (False, True):
            kind = "classic" if classic else "full"
            tree = os.path.join(work, "%s%d" % (kind, n))
            argv = [sys.executable, os.path.join(HERE, "gen-sysfs.py"), tree, "-n", str(n)]
            subprocess.run(argv + (["--classic-only"] if classic else []), check=True)
            fl, rw, xf, xp, files, rw_rss = floor_and_rocewatch(a, tree, secs, classic)
            rec = None
            if not classic:
                rec_dir = os.path.join(work, "rec%d" % n)
                rec, _ = rocewatch_cpu_per_poll(a.binary, tree, secs, record=rec_dir)
                shutil.rmtree(rec_dir, ignore_errors=True)
            ps, _ = rocewatch_cpu_per_poll(a.binary, tree, secs, scrape=True)
            ne, ne_rss = node_exporter_cpu_per_scrape(tree, 10 if quick else 30)
            ne_files = 21 * n
            r = {"devices": n, "tree": kind, "files": files, "node_exporter_files": ne_files,
                 "floor_us": [x / 1e3 for x in fl], "rocewatch_us": [x / 1e3 for x in rw],
                 "rocewatch_recorder_us": [x / 1e3 for x in rec] if rec else None,
                 "rocewatch_poll_scrape_us": [x / 1e3 for x in ps],
                 "node_exporter_us": [x / 1e3 for x in ne],
                 "rocewatch_x_floor": list(xf), "rocewatch_x_paced_floor": list(xp),
                 "node_exporter_x_rocewatch": ratio(ne, rw),
                 "node_exporter_x_rocewatch_poll_scrape": ratio(ne, ps),
                 "ns_per_counter": {"floor": fl[0] / files, "rocewatch": rw[0] / files,
                                    "rocewatch_poll_scrape": ps[0] / files,
                                    "node_exporter": ne[0] / ne_files},
                 "rocewatch_rss_kib": rw_rss, "node_exporter_rss_kib": ne_rss}
            out["%s%d" % (kind, n)] = r
            print("%-4d %-7s %18s %20s %17s %17s %20s %6s %20s %22s %6.1fx %6.1fx"
                  % (n, kind, fmt(fl), fmt(rw), "%.2fx [%.2f-%.2f]" % xf,
                     "%.2fx [%.2f-%.2f]" % xp, fmt(rec) if rec else "-",
                     "%.2fx" % ratio(rec, fl) if rec else "-", fmt(ps), fmt(ne),
                     ratio(ne, rw), ratio(ne, ps)))
            sys.stdout.flush()
    print()
    print("CPU per counter file read (ns), median:")
    print("%-4s %-7s %8s %10s %14s %14s" % ("devs", "tree", "floor", "rocewatch", "poll+scrape", "node_exporter"))
    for key, r in out.items():
        c = r["ns_per_counter"]
        print("%-4d %-7s %8.0f %10.0f %14.0f %14.0f" % (r["devices"], r["tree"], c["floor"], c["rocewatch"],
                                                   c["rocewatch_poll_scrape"], c["node_exporter"]))
    print("(full: rocewatch and the floor read 60 files a port, node_exporter 21; classic: all read 21)")
    return out


def abuse(url, requests_total, threads=32):
    """What a scanner and broken clients send, on many connections at once: scrapes of
    every page, unknown paths, garbage and over-long request lines, oversized headers,
    chunked POSTs, requests cut off half-way.  Returns how many got an answer."""
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    port = int(port)
    shapes = [
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /api/v1/state HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /nope/%00/../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"\x16\x03\x01\x02\x00garbage that is not HTTP\r\n\r\n",
        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20000 + b"\r\n\r\n",
        b"POST /api/v1/state HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"ffffff\r\n" + b"c" * 4096,
        b"GET /metrics HTTP/1.1\r\nHo",  # cut off: the server's read timeout ends it
    ]
    answered = [0]
    lock = threading.Lock()

    def worker(k):
        for i in range(k, requests_total, threads):
            try:
                with socket.create_connection((host, port), timeout=5) as c:
                    c.sendall(shapes[i % len(shapes)])
                    c.shutdown(socket.SHUT_WR)
                    if c.recv(64):
                        with lock:
                            answered[0] += 1
            except OSError:
                pass

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return answered[0]


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
    ap.add_argument("--floor", help="the floor program (default: BINARY's build dir/tests/bench_floor)")
    a = ap.parse_args()

    if not shutil.which("prometheus-node-exporter"):
        print("SKIP: prometheus-node-exporter not installed")
        return 77
    if not a.floor:
        a.floor = os.path.join(os.path.dirname(os.path.abspath(a.binary)), "tests", "bench_floor")
    if not os.access(a.floor, os.X_OK):
        print("SKIP: no floor program at %s (build tests/bench_floor)" % a.floor)
        return 77
    sizes = [8] if a.quick else [1, 8, 32]
    secs = 1.5 if a.quick else 10
    results = {"sizes": {}}
    work = tempfile.mkdtemp(prefix="rocewatch-bench-")
    try:
        results["sizes"] = compare(a, sizes, work, secs, a.quick)
        print()
        tree = os.path.join(work, "full8")
        rw = start_rocewatch(a.binary, tree, "1s")
        ne = start_node_exporter(tree)
        try:
            time.sleep(1.5)
            rw_med, rw_p99 = latency(rw.url, secs)
            ne_med, ne_p99 = latency(ne.url, secs)
            rw_mem, ne_mem = mem_kib(rw.p.pid), mem_kib(ne.p.pid)
            rw_rss, ne_rss = rw_mem[0], ne_mem[0]
            n_abuse = 800 if a.quick else 4000
            t0 = time.monotonic()
            answered = abuse(rw.url, n_abuse)
            abuse_s = time.monotonic() - t0
            time.sleep(2)
            get(rw.url)  # still serving
            rw_after = mem_kib(rw.p.pid)
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
        floor_kib = load_floor_kib(a.floor, a.binary)
        results["rss_load_floor_kib"] = floor_kib
        print("  of it, loading rocewatch and its libraries (peak RSS of `rocewatch version`, "
              "median of 5): %.1f MiB; above that, serve's own: %.1f MiB"
              % (floor_kib / 1024, (rw_rss - floor_kib) / 1024))
        results["rss_after_abuse_kib"] = rw_after[0]
        print("resident memory after an abuse run (%d connections from 32 threads in %.1f s, %d "
              "answered: scrapes, unknown paths, garbage, 9 KB request lines, 20 KB headers, "
              "chunked POSTs, requests cut off): rocewatch %.1f MiB (PSS %.1f, private %.1f), "
              "%+.1f MiB" % (n_abuse, abuse_s, answered, rw_after[0] / 1024, rw_after[1] / 1024,
                             rw_after[2] / 1024, (rw_after[0] - rw_rss) / 1024))
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
