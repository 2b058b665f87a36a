#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`rocewatch fleet check --prometheus` of 8 000 nodes against a real Prometheus on loopback.

A 64 000-GPU job is 8 000 nodes; its PrologSlurmctld runs next to slurmctld, so the
fleet check must stay small (budget: 256 MiB peak RSS, 3 s wall).

The series are real: one `rocewatch serve --from` an 8-NIC snapshot
(tests/fixtures/snapshots/rules/good-8nic.json) is scraped once, and the bench keeps
the metrics fleet check actually queries (learnt by pointing fleet check at a stub
that records its queries), plus `up`.  They are written for N nodes
(instance="nodeNNNNN:9479", job="rocewatch") as OpenMetrics, backfilled with
`promtool tsdb create-blocks-from openmetrics`, and served by `prometheus` on
127.0.0.1 (lookback widened so the backfilled samples stay current for the run).

Reported per binary: wall time, peak RSS (wait4 on that process alone), the verdict,
and Prometheus's own time for the queries (the sum of
prometheus_http_request_duration_seconds{handler="/api/v1/query"} over the run: queries
that run side by side each count in full) and the CPU its process spent over the run, so
what is rocewatch's cost and what is the query's can be told apart.  --before BINARY
runs an older build on the same Prometheus and checks both give the same verdicts.

--quick: 200 nodes.
"""
import argparse
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SNAP = os.path.join(HERE, "..", "fixtures", "snapshots", "rules", "good-8nic.json")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_ok(url, what, proc, timeout=300):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise SystemExit("%s exited (%d) before it answered" % (what, proc.returncode))
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return r.read()
        except OSError:
            time.sleep(0.2)
    raise SystemExit("%s did not answer %s" % (what, url))


def scrape_one(binary):
    """The exposition of one 8-NIC node, as its serve renders it."""
    port = free_port()
    p = subprocess.Popen([binary, "serve", "--web.listen-address", "127.0.0.1:%d" % port,
                          "--interval", "1s", "--from", SNAP],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ok("http://127.0.0.1:%d/healthz" % port, "rocewatch serve", p)
        return wait_ok("http://127.0.0.1:%d/metrics" % port, "rocewatch serve", p).decode()
    finally:
        p.terminate()
        p.wait()


def queried_metrics(binary):
    """The metrics fleet check asks Prometheus for, from a stub that records its queries.

    The stub answers a plain selector of a metric that is not an info metric with one
    series of node1, and everything else with nothing: node1 then has series but no
    compact DSCP map or PFC set (roce_dscp_map_info, roce_pfc_enabled_info), so fleet
    check also asks for the per-element metrics, as it does of a node running an older
    rocewatch.  Both forms are kept: a real Prometheus holds both, and --before asks for
    the older one.
    """
    seen, plain = [], []

    class Stub(http.server.BaseHTTPRequestHandler):
        def answer(self, data):
            d = json.dumps({"status": "success", "data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(d)))
            self.end_headers()
            self.wfile.write(d)

        def do_GET(self):
            # /api/v1/label/instance/values
            self.answer(["node1:9479"])

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            q = urllib.parse.parse_qs(body)["query"][0]
            # the metric is the query's one selector, also inside an encoded DSCP map or PFC set
            name = re.search(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", q).group(1)
            seen.append(name)
            result = []
            if re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\}", q):
                plain.append(name)
            if re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\}", q) and not name.endswith("_info") and name != "up":
                result = [{"metric": {"__name__": name, "instance": "node1:9479"},
                           "value": [1, "1"]}]
            self.answer({"resultType": "vector", "result": result})

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        subprocess.run([binary, "fleet", "check", "--prometheus",
                        "http://127.0.0.1:%d" % srv.server_address[1], "node1"],
                       capture_output=True, timeout=60)
    finally:
        srv.shutdown()
    if "up" not in seen or len(seen) < 2:
        raise SystemExit("fleet check did not query the stub as expected: %s" % seen)
    return sorted(set(seen)), sorted(set(plain))


def floor(base, metrics, nodes, prom_pid):
    """The series fleet check reads of nodes that export the compact forms, fetched by a bare
    client: the same rounds of 250 literal instances, every metric's query at once, each body
    read and dropped.  What Prometheus must spend however well its answers are read."""
    import concurrent.futures

    def get(q):
        data = urllib.parse.urlencode({"query": q}).encode()
        with urllib.request.urlopen(base + "/api/v1/query", data, timeout=120) as r:
            return len(r.read())

    p0 = proc_cpu(prom_pid)
    t0 = time.monotonic()
    size = n = 0
    with concurrent.futures.ThreadPoolExecutor(len(metrics)) as ex:
        for first in range(1, nodes + 1, 250):
            lit = "|".join("node%05d:9479" % i for i in range(first, min(first + 250, nodes + 1)))
            qs = ['%s{instance=~"%s"}' % (m, lit) for m in metrics]
            size += sum(ex.map(get, qs))
            n += len(qs)
    return time.monotonic() - t0, proc_cpu(prom_pid) - p0, n, size


def write_openmetrics(path, exposition, metrics, nodes, ts):
    """Every node's series for the queried metrics, one sample each at ts (seconds)."""
    keep = []
    for line in exposition.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)", line)
        if not m or m.group(1) not in metrics:
            continue
        labels = m.group(2)[1:-1] if m.group(2) else ""
        keep.append((m.group(1), labels, m.group(3)))
    keep.append(("up", "", "1"))
    with open(path, "w") as f:
        # OpenMetrics wants a metric family's samples together: family-major order
        fams = {}
        for name, labels, val in keep:
            fams.setdefault(name, []).append('%s{%s%sinstance="@INST@",job="rocewatch"} %s %d\n'
                                            % (name, labels, "," if labels else "", val, ts))
        for name, lines in fams.items():
            tmpl = "".join(lines)
            for i in range(1, nodes + 1):
                f.write(tmpl.replace("@INST@", "node%05d:9479" % i))
        f.write("# EOF\n")
    return len(keep)


def prom_query_seconds(base):
    """Sum and count of Prometheus's own /api/v1/query request durations so far."""
    text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
    s = c = 0.0
    for line in text.splitlines():
        if 'handler="/api/v1/query"' not in line:
            continue
        if line.startswith("prometheus_http_request_duration_seconds_sum"):
            s += float(line.split()[-1])
        elif line.startswith("prometheus_http_request_duration_seconds_count"):
            c += float(line.split()[-1])
    return s, c


def proc_cpu(pid):
    """User + system CPU seconds of a process so far (/proc/PID/stat utime, stime)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Replay:
    """Between fleet check and Prometheus: records each answer, then serves it again at once.

    fleet check against the recorded answers is rocewatch's own time, with Prometheus's
    taken out (what a Prometheus with cores to spare would leave)."""

    def __init__(self, base):
        answers, self.replaying = {}, False
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes

            def answer(self, body):
                key = (self.path, body)
                if not outer.replaying:
                    req = urllib.request.Request(base + self.path, data=body or None)
                    with urllib.request.urlopen(req, timeout=300) as r:
                        answers[key] = r.read()
                data = answers.get(key)
                self.send_response(200 if data is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data or b"")))
                self.end_headers()
                self.wfile.write(data or b"")

            def do_GET(self):
                self.answer(b"")

            def do_POST(self):
                self.answer(self.rfile.read(int(self.headers["Content-Length"])))

            def log_message(self, *a):
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128  # all of a round's queries connect at once

        self.srv = Server(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()


def run_check(binary, base, hostlist, prom_pid, target=None):
    s0, c0 = prom_query_seconds(base)
    p0 = proc_cpu(prom_pid)
    out = tempfile.TemporaryFile()
    t0 = time.monotonic()
    # the older build holds whole answers: let it take them (600 MB for 8 000 nodes' DSCP maps)
    p = subprocess.Popen([binary, "fleet", "check", "-j", "--timeout", "120s", "--max-body", "4GiB",
                          "--prometheus", target or base, hostlist], stdout=out,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode()
    p.returncode = os.waitstatus_to_exitcode(status)
    s1, c1 = prom_query_seconds(base)
    p1 = proc_cpu(prom_pid)
    out.seek(0)
    try:
        d = json.loads(out.read())
    except ValueError:
        raise SystemExit("%s printed no JSON (exit %d): %s" % (binary, p.returncode, err[-500:]))
    return {"wall": wall, "rss_kib": ru.ru_maxrss, "cpu": ru.ru_utime + ru.ru_stime,
            "exit": p.returncode, "json": d, "prom_s": s1 - s0, "queries": int(c1 - c0),
            "prom_cpu": p1 - p0}


def verdicts(d):
    """What must not change: the verdict, the counts, every fleet result, each node's state."""
    return (d["status"], json.dumps(d["counts"], sort_keys=True),
            json.dumps(d["results"], sort_keys=True),
            json.dumps([(n.get("name"), n.get("state"), n.get("outcome")) for n in d["nodes"]]))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--before", help="an older build to compare on the same Prometheus")
    ap.add_argument("--nodes", type=int, default=8000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--tsdb", help="keep the backfilled TSDB here and reuse it when it is there "
                    "(backfilling 8 000 nodes takes minutes)")
    a = ap.parse_args()
    nodes = 200 if a.quick else a.nodes
    runs = 1 if a.quick else a.runs
    for tool in ("prometheus", "promtool"):
        if not shutil.which(tool):
            print("bench_fleet_prom: %s not installed (apt-get install prometheus): skipped" % tool)
            return 77 if a.quick else 0
    tmp = tempfile.mkdtemp(prefix="rw-fleet-prom-")
    prom = None
    try:
        metrics, plain = queried_metrics(a.binary)
        tsdb = a.tsdb or os.path.join(tmp, "tsdb")
        stamp = os.path.join(tsdb, "rocewatch-bench.json")
        try:
            with open(stamp) as f:
                made = json.load(f)
        except (OSError, ValueError):
            made = None
        if made and made["nodes"] == nodes and made["metrics"] == metrics:
            print("fleet check --prometheus: %d nodes, %d series a node, backfilled earlier in "
                  "%s, %d CPUs" % (nodes, made["per_node"], tsdb, os.cpu_count()))
        else:
            shutil.rmtree(tsdb, ignore_errors=True)
            expo = scrape_one(a.binary)
            om = os.path.join(tmp, "series.om")
            ts = int(time.time()) - 60
            t0 = time.monotonic()
            per_node = write_openmetrics(om, expo, metrics, nodes, ts)
            gen = time.monotonic() - t0
            t0 = time.monotonic()
            r = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om, tsdb],
                               capture_output=True, text=True)
            if r.returncode:
                raise SystemExit("promtool: %s" % (r.stderr or r.stdout)[-1000:])
            backfill = time.monotonic() - t0
            os.unlink(om)
            with open(stamp, "w") as f:
                json.dump({"nodes": nodes, "metrics": metrics, "per_node": per_node}, f)
            print("fleet check --prometheus: %d nodes, %d series a node (%d in all; the %d "
                  "metrics fleet check queries), generated in %.1f s, backfilled in %.1f s, "
                  "%d CPUs" % (nodes, per_node, nodes * per_node, len(metrics), gen, backfill,
                               os.cpu_count()))
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
        port = free_port()
        base = "http://127.0.0.1:%d" % port
        prom = subprocess.Popen(["prometheus", "--config.file", cfg,
                                 "--storage.tsdb.path", tsdb,
                                 "--web.listen-address", "127.0.0.1:%d" % port,
                                 "--query.lookback-delta", "30d",
                                 "--storage.tsdb.retention.time", "30d"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ok(base + "/-/ready", "prometheus", prom)
        hostlist = "node[00001-%05d]" % nodes
        print("%-8s %8s %8s %10s %12s %9s %8s  %s" % ("build", "wall", "CPU", "peak RSS",
                                                       "Prom. query", "Prom. CPU", "queries",
                                                       "verdict"))
        seen = {}
        bins = ([("before", a.before)] if a.before else []) + [("this", a.binary)]
        for _ in range(runs):
            w, c, n, size = floor(base, plain, nodes, prom.pid)
            print("%-8s %7.2fs %8s %10s %12s %8.2fs %8d  (a bare client fetching the %d MB of "
                  "series it reads, nothing decoded)" % ("floor", w, "-", "-", "-", c, n,
                                                         size // 1000000))
            for label, b in bins:
                x = run_check(b, base, hostlist, prom.pid)
                d = x["json"]
                if d["counts"]["answered"] != d["counts"]["nodes"] or d["counts"]["nodes"] != nodes:
                    bad = [n for n in d["nodes"] if n.get("state") != "ok"][:1]
                    raise SystemExit("%s: not every node answered: %s %s" % (label, d["counts"], bad))
                print("%-8s %7.2fs %7.2fs %6d MiB %11.2fs %8.2fs %8d  %s (exit %d)"
                      % (label, x["wall"], x["cpu"], x["rss_kib"] // 1024, x["prom_s"],
                         x["prom_cpu"], x["queries"], d["status"], x["exit"]))
                v = verdicts(d)
                if label in seen and seen[label] != v:
                    raise SystemExit("%s: verdicts differ between runs" % label)
                seen[label] = v
        rp = Replay(base)
        try:
            run_check(a.binary, base, hostlist, prom.pid, rp.url)
            rp.replaying = True
            x = run_check(a.binary, base, hostlist, prom.pid, rp.url)
        finally:
            rp.close()
        if verdicts(x["json"]) != seen["this"]:
            raise SystemExit("replayed answers gave other verdicts")
        print("%-8s %7.2fs %7.2fs %6d MiB %12s %9s %8s  %s (exit %d; Prometheus's answers "
              "recorded, then replayed at once: rocewatch's own time)"
              % ("replayed", x["wall"], x["cpu"], x["rss_kib"] // 1024, "-", "-", "-",
                 x["json"]["status"], x["exit"]))
        if a.before and seen["before"] != seen["this"]:
            raise SystemExit("the verdicts differ between the two builds")
        if a.before:
            print("same verdicts from both builds")
        print("budget: %d nodes in 256 MiB peak RSS and 3 s wall" % nodes)
    finally:
        if prom:
            prom.terminate()
            prom.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
