#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Detection latency, measured: from a fault to the alert arriving at a real
Alertmanager's webhook receiver, for rocewatch serve (default --interval 1s,
and --interval 100ms) and for node_exporter + Prometheus (15 s scrape and
rule evaluation, a rule with the same condition), side by side in one run.

  carrier: a veth carrier going down in a private network namespace (root)
  counter: link_downed jumping in a copy of the mlx5 fixture sysfs tree

usage: bench_detect.py ROCEWATCH [--trials N]
A benchmark, not a test: it prints figures and asserts nothing.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Stack:
    """Processes started in one network namespace (or none), stopped in reverse."""

    def __init__(self, tmp, ns=None):
        self.tmp, self.ns, self.procs = tmp, ns, []

    def run(self, name, argv):
        pre = ["ip", "netns", "exec", self.ns] if self.ns else []
        log = open(os.path.join(self.tmp, name + ".log"), "ab")
        p = subprocess.Popen(pre + argv, stdout=log, stderr=log, start_new_session=True)
        self.procs.append(p)
        return p

    def stop(self):
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        self.procs = []


def curl_ok(ns, url):
    pre = ["ip", "netns", "exec", ns] if ns else []
    return subprocess.run(pre + ["curl", "-sf", "-o", "/dev/null", url]).returncode == 0


def wait(cond, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


HOOK = r'''
import http.server, json, sys, time
out = open(sys.argv[2], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        t = time.time()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        for a in body.get("alerts", []):
            if a.get("status") == "firing":
                out.write(json.dumps({"t": t, "alertname": a["labels"].get("alertname")}) + "\n")
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
'''


def alertmanager(st, tmp, hookport):
    amport = free_port()
    cfg = os.path.join(tmp, "am.yml")
    with open(cfg, "w") as f:
        f.write("route:\n  receiver: hook\n  group_by: ['alertname', 'instance', 'device']\n"
                "  group_wait: 0s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                "receivers:\n  - name: hook\n    webhook_configs:\n"
                "      - url: http://127.0.0.1:%d/\n        send_resolved: false\n" % hookport)
    am = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    st.run("am", [am, "--config.file", cfg, "--storage.path", os.path.join(tmp, "am-data"),
                  "--web.listen-address", "127.0.0.1:%d" % amport, "--cluster.listen-address", ""])
    st.run("hook", [sys.executable, "-c", HOOK, str(hookport), os.path.join(tmp, "hook.jsonl")])
    if not wait(lambda: curl_ok(st.ns, "http://127.0.0.1:%d/-/ready" % amport), 30):
        raise RuntimeError("alertmanager did not start")
    return amport


def first_alert(tmp, name, after, timeout):
    path = os.path.join(tmp, "hook.jsonl")
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            for line in open(path):
                a = json.loads(line)
                if a["alertname"] == name and a["t"] >= after:
                    return a["t"]
        time.sleep(0.02)
    return None


def prometheus(st, tmp, target, amport, rule):
    pport = free_port()
    with open(os.path.join(tmp, "rules.yml"), "w") as f:
        f.write("groups:\n  - name: bench\n    rules:\n      - alert: BenchFault\n"
                "        expr: %s\n" % rule)
    with open(os.path.join(tmp, "prom.yml"), "w") as f:
        f.write("global: { scrape_interval: 15s, evaluation_interval: 15s }\n"
                "rule_files: [%s]\n"
                "alerting: { alertmanagers: [{ static_configs: [{ targets: ['127.0.0.1:%d'] }] }] }\n"
                "scrape_configs:\n  - job_name: node\n    static_configs: [{ targets: ['%s'] }]\n"
                % (os.path.join(tmp, "rules.yml"), amport, target))
    st.run("prom", ["prometheus", "--config.file", os.path.join(tmp, "prom.yml"),
                    "--storage.tsdb.path", os.path.join(tmp, "tsdb"),
                    "--web.listen-address", "127.0.0.1:%d" % pport])
    if not wait(lambda: curl_ok(st.ns, "http://127.0.0.1:%d/-/ready" % pport), 30):
        raise RuntimeError("prometheus did not start")


def summary(xs):
    if not xs:
        return "no alert"
    return "median %6.2f s  (min %.2f, max %.2f, n=%d)" % (statistics.median(xs), min(xs),
                                                         max(xs), len(xs))


def carrier(rw, trials):
    """veth carrier down in a netns: rocewatch's RTNLGRP_LINK vs node_exporter's netclass."""
    res = {}
    ns = "rwbench-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        ip = lambda *a: subprocess.run(["ip", "-n", ns] + list(a), check=True)
        ip("link", "set", "lo", "up")
        ip("link", "add", "va", "type", "veth", "peer", "name", "vb")
        ip("link", "set", "va", "up")
        ip("link", "set", "vb", "up")
        cases = [("rocewatch serve (default, --interval 1s)", []),
                 ("rocewatch serve --interval 100ms", ["--interval", "100ms"]),
                 ("node_exporter + Prometheus (15 s scrape)", None)]
        for label, extra in cases:
            tmp = tempfile.mkdtemp(prefix="rwbench-")
            st = Stack(tmp, ns)
            lat = []
            try:
                amport = alertmanager(st, tmp, free_port())
                if extra is not None:
                    prof = os.path.join(tmp, "carrier.yaml")
                    with open(prof, "w") as f:
                        f.write("profile: bench\nrules:\n  - name: bench_fault\n    scope: netdev\n"
                                "    expr: carrier\n    severity: critical\n    doc: carrier lost\n")
                    port = free_port()
                    st.run("rw", [rw, "serve", "--web.listen-address", "127.0.0.1:%d" % port,
                                  "--netdev-exclude", "lo", "--profile", prof,
                                  "--alertmanager.url", "http://127.0.0.1:%d" % amport] + extra)
                    ready = "http://127.0.0.1:%d/healthz" % port
                else:
                    port = free_port()
                    st.run("ne", ["prometheus-node-exporter", "--collector.disable-defaults",
                                  "--collector.netclass",
                                  "--web.listen-address", "127.0.0.1:%d" % port])
                    prometheus(st, tmp, "127.0.0.1:%d" % port, amport,
                               'node_network_carrier{device="va"} == 0')
                    ready = "http://127.0.0.1:%d/metrics" % port
                if not wait(lambda: curl_ok(ns, ready), 30):
                    raise RuntimeError("%s did not start" % label)
                time.sleep(3 if extra is not None else 20)  # a history, and Prometheus' first scrapes
                for _ in range(trials):
                    t0 = time.time()
                    ip("link", "set", "vb", "down")
                    t1 = first_alert(tmp, "bench_fault" if extra is not None else "BenchFault", t0, 60)
                    if t1:
                        lat.append(t1 - t0)
                    ip("link", "set", "vb", "up")
                    # resolved (rocewatch: next poll; Prometheus: next evaluation) before the next
                    time.sleep(2 if extra is not None else 35)
                    os.truncate(os.path.join(tmp, "hook.jsonl"), 0)
            finally:
                st.stop()
                shutil.rmtree(tmp, ignore_errors=True)
            res[label] = lat
    finally:
        subprocess.run(["ip", "netns", "del", ns])
    return res


def counter(rw, trials):
    """link_downed jumps in a fixture sysfs tree: rocewatch's rule vs node_exporter's infiniband."""
    res = {}
    cases = [("rocewatch serve (default, --interval 1s)", []),
             ("rocewatch serve --interval 100ms", ["--interval", "100ms"]),
             ("node_exporter + Prometheus (15 s scrape)", None)]
    for label, extra in cases:
        tmp = tempfile.mkdtemp(prefix="rwbench-")
        tree = os.path.join(tmp, "sys")
        shutil.copytree(os.path.join(SRC, "tests", "fixtures", "sysfs", "mlx5-roce"), tree,
                        symlinks=True)
        cfile = os.path.join(tree, "class", "infiniband", "mlx5_0", "ports", "1", "counters",
                             "link_downed")
        st = Stack(tmp)
        lat = []
        try:
            amport = alertmanager(st, tmp, free_port())
            if extra is not None:
                prof = os.path.join(tmp, "downed.yaml")
                with open(prof, "w") as f:
                    f.write("profile: bench\nrules:\n  - name: bench_fault\n    scope: rdma_port\n"
                            "    expr: increase(port[\"link_downed\"], 5m) == 0\n"
                            "    severity: critical\n    doc: link down\n")
                port = free_port()
                st.run("rw", [rw, "serve", "--web.listen-address", "127.0.0.1:%d" % port,
                              "--sysfs-root", tree, "--netdev-exclude", ".*",
                              "--no-collector.verbs", "--profile", prof,
                              "--alertmanager.url", "http://127.0.0.1:%d" % amport] + extra)
                ready = "http://127.0.0.1:%d/healthz" % port
            else:
                port = free_port()
                st.run("ne", ["prometheus-node-exporter", "--collector.disable-defaults",
                              "--collector.infiniband", "--path.sysfs", tree,
                              "--web.listen-address", "127.0.0.1:%d" % port])
                prometheus(st, tmp, "127.0.0.1:%d" % port, amport,
                           'increase(node_infiniband_link_downed_total{device="mlx5_0"}[1m]) > 0')
                ready = "http://127.0.0.1:%d/metrics" % port
            if not wait(lambda: curl_ok(None, ready), 30):
                raise RuntimeError("%s did not start" % label)
            time.sleep(3 if extra is not None else 35)
            for k in range(trials):
                before = int(open(cfile).read())
                t0 = time.time()
                with open(cfile, "w") as f:
                    f.write("%d\n" % (before + 1))
                t1 = first_alert(tmp, "bench_fault" if extra is not None else "BenchFault", t0, 90)
                if t1:
                    lat.append(t1 - t0)
                # the increase leaves the window before the next trial (5 m for rocewatch's
                # rule: restart instead of waiting)
                break
        finally:
            st.stop()
            shutil.rmtree(tmp, ignore_errors=True)
        res[label] = lat
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rocewatch")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--scenario", choices=["all", "carrier", "counter"], default="all")
    a = ap.parse_args()
    for need in ("prometheus", "prometheus-node-exporter", "curl"):
        if not shutil.which(need):
            print("detection latency: skipped (needs %s)" % need)
            return 0
    if not (shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")):
        print("detection latency: skipped (needs prometheus-alertmanager)")
        return 0
    print("detection latency, fault -> alert at Alertmanager's webhook receiver:")
    if a.scenario == "counter":
        pass
    elif os.geteuid() == 0 and shutil.which("ip"):
        r = carrier(a.rocewatch, a.trials)
        print("  veth carrier down (netns):")
        for k, v in r.items():
            print("    %-44s %s" % (k, summary(v)))
    else:
        print("  veth carrier down: skipped (needs root for a network namespace)")
    if a.scenario == "carrier":
        return 0
    r = counter(a.rocewatch, a.trials)
    print("  link_downed counter jump (fixture sysfs tree):")
    for k, v in r.items():
        print("    %-44s %s" % (k, summary(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
