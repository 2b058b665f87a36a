#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Detection latency, measured: from a fault to the alert at a real Alertmanager,
for rocewatch serve (default --interval 1s, and --interval 100ms) and for
node_exporter + Prometheus (15 s scrape and rule evaluation, a rule with the same
condition), all three watching the same faults in one run.

  carrier: a veth carrier going down in a private network namespace (root)
  counter: link_downed jumping in a copy of the mlx5 fixture sysfs tree

Each watcher has its own Alertmanager (group_wait 0s, group_interval 1s) and
webhook receiver.  Two arrivals are timed per trial, from just before the fault
(the `ip link set` is spawned, the counter file written):

  at Alertmanager's API   GET /api/v2/alerts polled every 2 ms while a trial
                          waits: when Alertmanager holds the alert (the POST was
                          accepted).  The budget is measured here.
  at the webhook          when Alertmanager's dispatcher notified the receiver:
                          adds Alertmanager's own grouping (group_wait for a new
                          group; for a group that notified before, the next
                          group_interval tick, up to 1 s here).

and rocewatch's own stages (rocewatch_alert_latency_seconds{stage}: each trial's
one observation, read as the change of _sum between two scrapes), from the
notification's arrival (carrier) or the start of the poll that read the counter.
Trials start after a random pause of 0-15 s, so a fault falls anywhere in
Prometheus' scrape cycle, rocewatch's poll and Alertmanager's group_interval.

usage: bench_detect.py ROCEWATCH [--trials N] [--scenario all|carrier|counter]
                                 [--json FILE] [--pause S] [--without-prometheus]
A benchmark, not a test: it prints figures and asserts nothing.  ~45 s a trial
(Prometheus' scrape and evaluation dominate): 20 trials of both scenarios take
about half an hour.
"""
import argparse
import ctypes
import http.client
import json
import math
import os
import platform
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
CLONE_NEWNET = 0x40000000
STAGES = ["model_updated", "rule_evaluated", "alert_state_changed", "batch_enqueued",
          "post_sent", "alertmanager_accepted"]
RW_DEFAULT, RW_FAST, NE = ("rocewatch serve (default, --interval 1s)",
                           "rocewatch serve --interval 100ms",
                           "node_exporter + Prometheus (15 s scrape)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def enter_netns(ns):
    """Move the calling thread (only it) into network namespace ns."""
    if not ns:
        return
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    fd = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), "setns " + ns)
    finally:
        os.close(fd)


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


def curl(ns, url):
    pre = ["ip", "netns", "exec", ns] if ns else []
    r = subprocess.run(pre + ["curl", "-sf", url], capture_output=True)
    return r.stdout.decode() if r.returncode == 0 else None


def wait(cond, timeout, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(step)
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


class Watcher:
    """One watching system with its own Alertmanager and webhook receiver."""

    def __init__(self, label, ns, alertname):
        self.label, self.ns, self.alertname = label, ns, alertname
        self.tmp = tempfile.mkdtemp(prefix="rwbench-")
        self.st = Stack(self.tmp, ns)
        self.hook = os.path.join(self.tmp, "hook.jsonl")
        self.rw_port = None  # rocewatch's /metrics, when it is rocewatch
        self.trials = []

    def start_alertmanager(self):
        hookport, self.amport = free_port(), free_port()
        cfg = os.path.join(self.tmp, "am.yml")
        with open(cfg, "w") as f:
            f.write("route:\n  receiver: hook\n  group_by: ['alertname', 'instance', 'device']\n"
                    "  group_wait: 0s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                    "receivers:\n  - name: hook\n    webhook_configs:\n"
                    "      - url: http://127.0.0.1:%d/\n        send_resolved: false\n" % hookport)
        am = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
        self.st.run("am", [am, "--config.file", cfg, "--storage.path",
                           os.path.join(self.tmp, "am-data"), "--web.listen-address",
                           "127.0.0.1:%d" % self.amport, "--cluster.listen-address", ""])
        self.st.run("hook", [sys.executable, "-c", HOOK, str(hookport), self.hook])
        if not wait(lambda: curl(self.ns, "http://127.0.0.1:%d/-/ready" % self.amport), 30):
            raise RuntimeError("%s: alertmanager did not start" % self.label)

    def start_rocewatch(self, rw, profile_text, extra):
        prof = os.path.join(self.tmp, "bench.yaml")
        with open(prof, "w") as f:
            f.write(profile_text)
        self.rw_port = free_port()
        self.st.run("rw", [rw, "serve", "--web.listen-address", "127.0.0.1:%d" % self.rw_port,
                           "--profile", prof, "--alertmanager.url",
                           "http://127.0.0.1:%d" % self.amport] + extra)
        if not wait(lambda: curl(self.ns, "http://127.0.0.1:%d/healthz" % self.rw_port), 30):
            raise RuntimeError("%s did not start" % self.label)

    def start_prometheus(self, ne_args, rule):
        neport, pport = free_port(), free_port()
        self.st.run("ne", ["prometheus-node-exporter", "--collector.disable-defaults",
                           "--web.listen-address", "127.0.0.1:%d" % neport] + ne_args)
        with open(os.path.join(self.tmp, "rules.yml"), "w") as f:
            f.write("groups:\n  - name: bench\n    rules:\n      - alert: %s\n"
                    "        expr: %s\n" % (self.alertname, rule))
        with open(os.path.join(self.tmp, "prom.yml"), "w") as f:
            f.write("global: { scrape_interval: 15s, evaluation_interval: 15s }\n"
                    "rule_files: [%s]\n"
                    "alerting: { alertmanagers: [{ static_configs: [{ targets: ['127.0.0.1:%d'] "
                    "}] }] }\n"
                    "scrape_configs:\n  - job_name: node\n    static_configs: [{ targets: "
                    "['127.0.0.1:%d'] }]\n" % (os.path.join(self.tmp, "rules.yml"), self.amport,
                                                neport))
        self.st.run("prom", ["prometheus", "--config.file", os.path.join(self.tmp, "prom.yml"),
                             "--storage.tsdb.path", os.path.join(self.tmp, "tsdb"),
                             "--web.listen-address", "127.0.0.1:%d" % pport])
        self.prom_port = pport
        if not wait(lambda: curl(self.ns, "http://127.0.0.1:%d/-/ready" % pport), 30):
            raise RuntimeError("prometheus did not start")

    def stop(self):
        self.st.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ---- Alertmanager's API, from a thread inside the namespace ----

    def _active(self, conn):
        q = "/api/v2/alerts?active=true&silenced=false&inhibited=false&filter=" + \
            "alertname%3D%22" + self.alertname + "%22"
        conn.request("GET", q)
        r = conn.getresponse()
        body = r.read()
        return r.status == 200 and json.loads(body) != []

    def arm(self, deadline):
        """From now until deadline: note when the alert first shows at the API."""
        self.api_t = None
        self.api_ready = threading.Event()

        def run():
            enter_netns(self.ns)
            conn = http.client.HTTPConnection("127.0.0.1", self.amport, timeout=5)
            self.api_ready.set()
            while time.time() < deadline:
                try:
                    if self._active(conn):
                        self.api_t = time.time()
                        return
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", self.amport, timeout=5)
                time.sleep(0.002)

        self.thr = threading.Thread(target=run, daemon=True)
        self.thr.start()
        self.api_ready.wait(10)

    def hook_t(self, after):
        if not os.path.exists(self.hook):
            return None
        for line in open(self.hook):
            a = json.loads(line)
            if a["alertname"] == self.alertname and a["t"] >= after:
                return a["t"]
        return None

    def resolved(self):
        """True when Alertmanager holds no active alert of ours (checked from the namespace)."""
        out = {}

        def run():
            enter_netns(self.ns)
            conn = http.client.HTTPConnection("127.0.0.1", self.amport, timeout=5)
            try:
                out["v"] = not self._active(conn)
            except (OSError, http.client.HTTPException):
                out["v"] = False

        t = threading.Thread(target=run)
        t.start()
        t.join()
        return out["v"]

    def stages(self):
        """rocewatch_alert_latency_seconds: stage -> (sum, count); {} if not rocewatch."""
        if not self.rw_port:
            return {}
        text = curl(self.ns, "http://127.0.0.1:%d/metrics" % self.rw_port) or ""
        res = {}
        for line in text.splitlines():
            for kind in ("sum", "count"):
                pre = "rocewatch_alert_latency_seconds_%s{stage=\"" % kind
                if line.startswith(pre):
                    stage = line[len(pre):line.index('"', len(pre))]
                    v = float(line.rsplit(" ", 1)[1])
                    s, c = res.get(stage, (0.0, 0))
                    res[stage] = (v, c) if kind == "sum" else (s, int(v))
        return res


SHORT = {RW_DEFAULT: "rw-1s", RW_FAST: "rw-100ms", NE: "ne+prom"}


def sec(x):
    return "%.3f" % x if x is not None else "-"


def trials_of(watchers, fault, restore, trials, warmup, pause):
    """Run the trials: each watcher's arrivals and stages, per trial."""
    time.sleep(warmup)
    for k in range(trials):
        time.sleep(random.uniform(0, 15) if pause is None else pause)
        before = {w.label: w.stages() for w in watchers}
        t0 = time.time()
        for w in watchers:
            w.arm(t0 + 60)
        t0 = time.time()
        fault()
        for w in watchers:
            w.thr.join()
        wait(lambda: all(w.hook_t(t0) or not w.api_t for w in watchers), 10)
        for w in watchers:
            rec = {"api": w.api_t - t0 if w.api_t else None,
                   "hook": (w.hook_t(t0) - t0) if w.hook_t(t0) else None}
            after = w.stages()
            for s in STAGES:
                b, a = before[w.label].get(s, (0, 0)), after.get(s, (0, 0))
                if a[1] > b[1]:
                    rec[s] = (a[0] - b[0]) / (a[1] - b[1])
            w.trials.append(rec)
        restore()
        if not wait(lambda: all(w.resolved() for w in watchers), 120, 0.5):
            print("    trial %d: not every watcher resolved in 120 s" % (k + 1))
        print("    trial %2d/%d (API/webhook s): %s" % (k + 1, trials, "  ".join(
            "%s %s/%s" % (SHORT[w.label], sec(w.trials[-1]["api"]), sec(w.trials[-1]["hook"]))
            for w in watchers)), flush=True)


def carrier(rw, trials, pause, prometheus):
    """veth carrier down in a netns: rocewatch's RTNLGRP_LINK vs node_exporter's netclass."""
    ns = "rwbench-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    watchers = []
    try:
        ip = lambda *a: subprocess.run(["ip", "-n", ns] + list(a), check=True)
        ip("link", "set", "lo", "up")
        ip("link", "add", "va", "type", "veth", "peer", "name", "vb")
        ip("link", "set", "va", "up")
        ip("link", "set", "vb", "up")
        prof = ("profile: bench\nrules:\n  - name: bench_fault\n    scope: netdev\n"
                "    expr: carrier\n    severity: critical\n    doc: carrier lost\n")
        for label, extra in ((RW_DEFAULT, []), (RW_FAST, ["--interval", "100ms"])):
            w = Watcher(label, ns, "bench_fault")
            watchers.append(w)
            w.start_alertmanager()
            w.start_rocewatch(rw, prof, ["--netdev-exclude", "lo"] + extra)
        if prometheus:
            w = Watcher(NE, ns, "BenchFault")
            watchers.append(w)
            w.start_alertmanager()
            w.start_prometheus(["--collector.netclass"], 'node_network_carrier{device="va"} == 0')
        trials_of(watchers, lambda: ip("link", "set", "vb", "down"),
                  lambda: ip("link", "set", "vb", "up"), trials, 35 if prometheus else 3, pause)
        return {w.label: w.trials for w in watchers}
    finally:
        for w in watchers:
            w.stop()
        subprocess.run(["ip", "netns", "del", ns])


def counter(rw, trials, pause, prometheus):
    """link_downed jumps in a fixture sysfs tree: rocewatch's rule vs node_exporter's infiniband."""
    tmp = tempfile.mkdtemp(prefix="rwbench-tree-")
    tree = os.path.join(tmp, "sys")
    shutil.copytree(os.path.join(SRC, "tests", "fixtures", "sysfs", "mlx5-roce"), tree,
                    symlinks=True)
    cfile = os.path.join(tree, "class", "infiniband", "mlx5_0", "ports", "1", "counters",
                         "link_downed")
    # a 10 s window: the alert resolves before the next trial (what the window is does
    # not change when the jump is first seen)
    prof = ("profile: bench\nrules:\n  - name: bench_fault\n    scope: rdma_port\n"
            "    expr: increase(port[\"link_downed\"], 10s) == 0\n"
            "    severity: critical\n    doc: link down\n")
    watchers = []
    try:
        for label, extra in ((RW_DEFAULT, []), (RW_FAST, ["--interval", "100ms"])):
            w = Watcher(label, None, "bench_fault")
            watchers.append(w)
            w.start_alertmanager()
            w.start_rocewatch(rw, prof, ["--sysfs-root", tree, "--netdev-exclude", ".*",
                                         "--no-collector.verbs"] + extra)
        if prometheus:
            w = Watcher(NE, None, "BenchFault")
            watchers.append(w)
            w.start_alertmanager()
            # [30s]: two 15 s scrapes in the window, so it resolves between trials; a longer
            # window fires at the same evaluation
            w.start_prometheus(
                ["--collector.infiniband", "--path.sysfs", tree],
                'increase(node_infiniband_link_downed_total{device="mlx5_0"}[30s]) > 0')

        def bump():
            # in place, in one write: rocewatch preads a kept descriptor, and a file
            # truncated then written is empty in between (a read of it is an error, and
            # the counter is left alone until the next configuration poll: seen once
            # in 20 trials as a 5 s detection)
            v = int(open(cfile).read())
            fd = os.open(cfile, os.O_WRONLY)
            try:
                os.pwrite(fd, b"%d\n" % (v + 1), 0)
            finally:
                os.close(fd)

        trials_of(watchers, bump, lambda: None, trials, 35 if prometheus else 12, pause)
        return {w.label: w.trials for w in watchers}
    finally:
        for w in watchers:
            w.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def pct(xs, p):
    """Nearest rank: the smallest value with at least p of the trials at or below it."""
    s = sorted(xs)
    return s[max(0, math.ceil(p * len(s)) - 1)]


def fmt(xs):
    if not xs:
        return "no alert"
    return "p50 %7.3f  p99 %7.3f  max %7.3f s  (n=%d)" % (pct(xs, .5), pct(xs, .99), max(xs),
                                                          len(xs))


def report(title, res, trials):
    print("  %s:" % title)
    out = {}
    for label, recs in res.items():
        api = [r["api"] for r in recs if r["api"] is not None]
        hook = [r["hook"] for r in recs if r["hook"] is not None]
        print("    %s" % label)
        print("      at Alertmanager's API  %s" % fmt(api))
        print("      at the webhook         %s" % fmt(hook))
        out[label] = {"api": api, "hook": hook, "trials": recs,
                      "missed": trials - len(api)}
        for s in STAGES:
            xs = [r[s] for r in recs if s in r]
            if xs:
                print("      stage %-22s p50 %7.4f  p99 %7.4f  max %7.4f s" %
                      (s, pct(xs, .5), pct(xs, .99), max(xs)))
                out[label][s] = xs
    ne = out.get(NE, {}).get("api")
    for label in (RW_DEFAULT, RW_FAST):
        rwx = out.get(label, {}).get("api")
        if ne and rwx:
            print("    node_exporter + Prometheus / %s, at the API: p50 %.0fx, p99 %.0fx" %
                  (label, pct(ne, .5) / pct(rwx, .5), pct(ne, .99) / pct(rwx, .99)))
    return out


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rocewatch")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--scenario", choices=["all", "carrier", "counter"], default="all")
    ap.add_argument("--json", help="write every trial's figures here")
    ap.add_argument("--pause", type=float,
                    help="a fixed pause before each trial instead of a random 0-15 s one "
                    "(--pause 2 is the old benchmark's rhythm, which locked each trial to "
                    "Alertmanager's group_interval tick)")
    ap.add_argument("--without-prometheus", action="store_true",
                    help="rocewatch alone (minutes, not half an hour)")
    a = ap.parse_args()
    for need in ("prometheus", "prometheus-node-exporter", "curl"):
        if not shutil.which(need):
            print("detection latency: skipped (needs %s)" % need)
            return 0
    if not (shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")):
        print("detection latency: skipped (needs prometheus-alertmanager)")
        return 0
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(), "cpu": cpu,
            "kernel": platform.release(), "binary": os.path.abspath(a.rocewatch),
            "trials": a.trials, "load_start": loadavg()}
    print("detection latency, fault -> alert at Alertmanager (API and webhook), %d trials, "
          "%s, %d CPUs (%s), kernel %s, load average %s" %
          (a.trials, meta["date"], meta["cpus"], cpu, meta["kernel"], " ".join(meta["load_start"])))
    result = {"meta": meta}
    if a.scenario in ("all", "carrier"):
        if os.geteuid() == 0 and shutil.which("ip"):
            print("  veth carrier down (netns): running", flush=True)
            result["carrier"] = report("veth carrier down (netns)", carrier(a.rocewatch, a.trials, a.pause,
                                                                   not a.without_prometheus),
                                       a.trials)
            meta["load_after_carrier"] = loadavg()
            print("  load average %s" % " ".join(meta["load_after_carrier"]))
        else:
            print("  veth carrier down: skipped (needs root for a network namespace)")
    if a.scenario in ("all", "counter"):
        print("  link_downed counter jump (fixture sysfs tree): running", flush=True)
        result["counter"] = report("link_downed counter jump (fixture sysfs tree)",
                                   counter(a.rocewatch, a.trials, a.pause,
                                           not a.without_prometheus), a.trials)
        meta["load_after_counter"] = loadavg()
        print("  load average %s" % " ".join(meta["load_after_counter"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
