#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`rocewatch fleet check --prometheus URL --job ID` of a big job on two real engines, the
fleet rules counted on the engine against fetched and compared client-side.

One fleet, generated once: NODES nodes of 8 RoCE NICs (tests/fixtures/snapshots/rules/
good-8nic.json as `rocewatch serve --from` exports it, the metrics fleet check reads: the
same stub bench_fleet_prom.py learns them with), all running job "bench"
(roce_job_info{job_id="bench"}), written by tests/e2e/fleet-series.py.  Prometheus gets it
backfilled (promtool tsdb create-blocks-from openmetrics, lookback widened), VictoriaMetrics
imported (/api/v1/import/prometheus).  For each engine and each way to compare
(--prometheus.compare engine, and client, the default): wall time, rocewatch's
CPU and peak RSS (wait4 on that process alone), the verdict, and the engine's own time for
the queries (Prometheus: prometheus_http_request_duration_seconds{handler="/api/v1/query"};
VictoriaMetrics: vm_request_duration_seconds{path="/api/v1/query"}; queries that run side
by side each count in full) and the CPU its process spent over the run.  The two ways must
give the same verdict, rule by rule.

    bench_fleet_engines.py BINARY [--nodes 8000] [--vm-nodes 32000] [--runs 2] [--quick]

--vm-nodes 0 leaves the larger VictoriaMetrics fleet out; --quick: 200 nodes, one run.
Budget (issue 38): 8 000 nodes compared on the engine in 1 s wall and 64 MB peak RSS for
rocewatch; 32 000 on VictoriaMetrics in 3 s and 128 MB.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_fleet_prom as bfp  # noqa: E402

SNAP = os.path.join(HERE, "..", "fixtures", "snapshots", "rules", "good-8nic.json")
SERIES = os.path.join(HERE, "..", "e2e", "fleet-series.py")
# each node's digest of the facts fleet rules compare (src/core/fleet_digest.h): the engine
# path asks for it first
FLEET_DIGEST = "roce_fleet_digest_info"


def keep_metrics(expo_path, metrics, out):
    """The exposition with only the families fleet check reads (and roce_job_info)."""
    with open(expo_path) as f, open(out, "w") as o:
        for line in f:
            name = line.split("{", 1)[0].split(" ", 1)[0]
            if not line.startswith("#") and name in metrics:
                o.write(line)


def engine_seconds(base, kind):
    text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
    s = 0.0
    for line in text.splitlines():
        if kind == "prom" and 'handler="/api/v1/query"' in line and \
                line.startswith("prometheus_http_request_duration_seconds_sum"):
            s += float(line.split()[-1])
        # under /prometheus too (VictoriaMetrics names the path as asked)
        if kind == "vm" and line.startswith("vm_request_duration_seconds_sum") and \
                re.search(r'path="(/prometheus)?/api/v1/query"', line):
            s += float(line.split()[-1])
    return s


def run(binary, url, mode, base, kind, pid):
    time.sleep(1.5)  # VictoriaMetrics renders /metrics at most once a second
    s0, c0 = engine_seconds(base, kind), bfp.proc_cpu(pid)
    out = tempfile.TemporaryFile()
    t0 = time.monotonic()
    p = subprocess.Popen([binary, "fleet", "check", "-j", "--timeout", "300s", "--max-body", "4GiB",
                          "--prometheus", url, "--job", "bench", "--prometheus.compare", mode],
                         stdout=out, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode()
    time.sleep(1.5)
    s1, c1 = engine_seconds(base, kind), bfp.proc_cpu(pid)
    out.seek(0)
    try:
        d = json.loads(out.read())
    except ValueError:
        raise SystemExit("%s %s printed no JSON (exit %d): %s" % (kind, mode,
                         os.waitstatus_to_exitcode(status), err[-500:]))
    for line in err.splitlines():
        if "compared here instead" in line:
            print("  (%s %s) %s" % (kind, mode, line[:300]))
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss // 1024,
            "json": d, "exit": os.waitstatus_to_exitcode(status), "eng_s": s1 - s0,
            "eng_cpu": c1 - c0}


def verdict(d):
    return (d["status"], json.dumps(d["counts"], sort_keys=True),
            json.dumps([(r["rule"], r["group"], r["outcome"], r["units"], r["nodes"], r["majority"],
                         r["outliers"], r["unknown"]) for r in d["results"]]),
            json.dumps([(n["name"], n["state"]) for n in d["nodes"]]))


def start_prom(tmp, om, port):
    tsdb = os.path.join(tmp, "tsdb")
    t0 = time.monotonic()
    r = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om, tsdb],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("promtool: %s" % (r.stderr or r.stdout)[-800:])
    fill = time.monotonic() - t0
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    p = subprocess.Popen(["prometheus", "--config.file", cfg, "--storage.tsdb.path", tsdb,
                          "--web.listen-address", "127.0.0.1:%d" % port,
                          "--query.lookback-delta", "30d", "--storage.tsdb.retention.time", "30d"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bfp.wait_ok("http://127.0.0.1:%d/-/ready" % port, "prometheus", p)
    return p, fill


def start_vm(tmp, text, port):
    p = subprocess.Popen(["victoria-metrics", "-storageDataPath", os.path.join(tmp, "vm"),
                          "-httpListenAddr", "127.0.0.1:%d" % port, "-retentionPeriod", "1",
                          "-search.latencyOffset", "0s", "-search.maxStalenessInterval", "720h",
                          "-search.maxUniqueTimeseries", "100000000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    bfp.wait_ok(base + "/health", "victoria-metrics", p)
    t0 = time.monotonic()
    with open(text, "rb") as f:
        req = urllib.request.Request(base + "/api/v1/import/prometheus", data=f, method="POST")
        req.add_header("Content-Length", str(os.path.getsize(text)))
        urllib.request.urlopen(req, timeout=600).read()
    urllib.request.urlopen(base + "/internal/force_flush", timeout=60).read()
    return p, time.monotonic() - t0


def fleet(binary, tmp, nodes, metrics):
    expo = os.path.join(tmp, "node.prom")
    with open(expo, "w") as f:
        f.write(bfp.scrape_one(binary))
    kept = os.path.join(tmp, "kept.prom")
    keep_metrics(expo, set(metrics), kept)
    plan = os.path.join(tmp, "plan-%d.json" % nodes)
    with open(plan, "w") as f:
        json.dump({"expositions": {"good": kept}, "nodes": nodes, "instance": "node%05d:9479",
                   "jobs": {"bench": [1, nodes]}, "ts": int(time.time()) - 120}, f)
    om, pt = os.path.join(tmp, "f-%d.om" % nodes), os.path.join(tmp, "f-%d.prom" % nodes)
    t0 = time.monotonic()
    subprocess.run([sys.executable, SERIES, plan, om, pt], check=True)
    per_node = sum(1 for _ in open(kept)) + 2
    return om, pt, per_node, time.monotonic() - t0


def bench(binary, label, url, base, kind, pid, runs, nodes):
    seen = {}
    for _ in range(runs):
        for mode in ("engine", "client"):
            x = run(binary, url, mode, base, kind, pid)
            d = x["json"]
            if d["counts"]["nodes"] != nodes or d["counts"]["answered"] != nodes:
                raise SystemExit("%s %s: not every node answered: %s" % (label, mode, d["counts"]))
            c = d.get("compare", {})
            print("%-22s %-7s %7.2fs %7.2fs %6d MiB %10.2fs %9.2fs  %s (exit %d%s)"
                  % (label, mode, x["wall"], x["cpu"], x["rss"], x["eng_s"], x["eng_cpu"],
                     d["status"], x["exit"],
                     (", %d nodes alike in %d digest groups" % (c["digest_nodes"], c["digest_groups"])
                      if c.get("digest_groups") else
                      ", %d rules counted on the engine, %d here" % (c["engine"], c["client"]))
                     if c else ""), flush=True)
            v = verdict(d)
            if mode in seen and seen[mode] != v:
                raise SystemExit("%s %s: verdicts differ between runs" % (label, mode))
            seen[mode] = v
    if seen["engine"] != seen["client"]:
        raise SystemExit("%s: the engine's verdict is not the client's" % label)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--nodes", type=int, default=8000)
    ap.add_argument("--vm-nodes", type=int, default=32000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.nodes, a.vm_nodes, a.runs = 200, 0, 1
    for tool in ("prometheus", "promtool", "victoria-metrics"):
        if not shutil.which(tool):
            print("bench_fleet_engines: %s not installed (contrib/install-deps.sh test): skipped" % tool)
            return 77 if a.quick else 0
    tmp = tempfile.mkdtemp(prefix="rw-fleet-engines-")
    procs = []
    try:
        metrics, _ = bfp.queried_metrics(a.binary)
        # the per-element DSCP maps and PFC sets only an older rocewatch needs asked
        # (fleet check asks for them only of nodes without the compact series)
        metrics = (set(metrics) - {"roce_dscp_priority", "roce_pfc_enabled"}) | {"roce_job_info", FLEET_DIGEST}
        om, pt, per_node, gen = fleet(a.binary, tmp, a.nodes, metrics)
        print("fleet check --job on engines: %d nodes, %d series a node, generated in %.1f s, "
              "%d CPUs" % (a.nodes, per_node, gen, os.cpu_count()), flush=True)
        pport, vport = bfp.free_port(), bfp.free_port()
        prom, fill = start_prom(tmp, om, pport)
        procs.append(prom)
        vm, imp = start_vm(tmp, pt, vport)
        procs.append(vm)
        print("Prometheus backfilled in %.1f s, VictoriaMetrics imported in %.1f s" % (fill, imp))
        print("%-22s %-7s %8s %8s %10s %11s %10s  %s" % ("engine", "compare", "wall", "CPU",
                                                       "peak RSS", "eng. query", "eng. CPU", "verdict"))
        pb, vb = "http://127.0.0.1:%d" % pport, "http://127.0.0.1:%d" % vport
        bench(a.binary, "Prometheus %d" % a.nodes, pb, pb, "prom", prom.pid, a.runs, a.nodes)
        bench(a.binary, "VictoriaMetrics %d" % a.nodes, vb + "/prometheus", vb, "vm", vm.pid,
              a.runs, a.nodes)
        if a.vm_nodes:
            vm.terminate()
            vm.wait()
            shutil.rmtree(os.path.join(tmp, "vm"), ignore_errors=True)
            os.unlink(om)
            os.unlink(pt)
            om, pt, per_node, gen = fleet(a.binary, tmp, a.vm_nodes, metrics)
            os.unlink(om)
            vm, imp = start_vm(tmp, pt, vport)
            procs.append(vm)
            print("VictoriaMetrics: %d nodes imported in %.1f s" % (a.vm_nodes, imp))
            bench(a.binary, "VictoriaMetrics %d" % a.vm_nodes, vb + "/prometheus", vb, "vm",
                  vm.pid, a.runs, a.vm_nodes)
        print("budget: engine-side %d nodes in 1 s wall, 64 MB peak RSS; %d on VictoriaMetrics "
              "in 3 s, 128 MB" % (a.nodes, a.vm_nodes or 32000))
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
