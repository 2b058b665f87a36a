#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Prometheus-API engine on loopback that misbehaves the way distributed ones do, for
tests/fleet/test-fleet-engine.sh.

    fake-engine.py PORT EXPOSITION NODES [--prefix P] [--job ID:N] [--drop-from K]
                   [--warning TEXT | --is-partial] [--replica LABEL] [--replica-diff NODE]
                   [--max-query BYTES] [--require 'Name: value']... [--log FILE]

The series are one node's /metrics (EXPOSITION, as `rocewatch serve` renders it), for NODES
nodes whose instance is "gpu-node-NNNN.rack07.cluster.example.org:9479", plus up = 1.
It answers what fleet check asks, under the path prefix P (Mimir's /prometheus,
VictoriaMetrics cluster's /select/0/prometheus):

  GET  P/api/v1/label/instance/values
  POST P/api/v1/query   METRIC{instance=~"a|b"}           the instances named
                        (METRIC) and on (instance) group by (instance)
                            (roce_job_info{job_id="ID"})  the nodes of job ID
                        group by (instance) (roce_job_info{job_id="ID"})
                        group by (instance, digest) (roce_fleet_digest_info{schema="S"}
                            and on (instance) group by (instance) (roce_job_info{job_id="ID"})
                            unless on (instance) (up == 0))   with --digests: each job
                                                  node's digest (the exposition's, on all)
  anything else: an empty vector.

--job ID:N        the first N nodes run job ID (roce_job_info{job_id="ID"} = 1)
--drop-from K     nodes K.. are behind a store that is down: their series are missing
                  from every answer, which says so: "warnings": [TEXT] (Prometheus,
                  Thanos, Mimir), or with --is-partial "isPartial": true (VictoriaMetrics)
--replica LABEL   every series twice, LABEL="a" and LABEL="b" (an HA pair nothing
                  deduplicates); --replica-diff NODE: that node's MTU is 1500 in replica b
--digests         answer the fleet digest query (else: no node has a digest, as with an
                  older serve); --digest-lie NODE: that node's RDMA netdevs are at MTU 1500
                  but its digest is the others' (a relabelled series, a forged digest)
--max-query B     a query longer than B bytes is refused as VictoriaMetrics refuses it
                  (-search.maxQueryLen: HTTP 422, "too long query")
--require H       every request must carry header H, else 401 (a tenant, a bearer token)
--log FILE        each query's length and text, one a line

Writes "ready" on stdout once it listens.
"""
import argparse
import http.server
import json
import re
import socketserver
import sys
import threading
import urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("exposition")
ap.add_argument("nodes", type=int)
ap.add_argument("--prefix", default="")
ap.add_argument("--job", default=None)
ap.add_argument("--drop-from", type=int, default=None)
ap.add_argument("--warning", default="store 10.0.0.7:10901 is unavailable")
ap.add_argument("--is-partial", action="store_true")
ap.add_argument("--replica", default=None)
ap.add_argument("--replica-diff", type=int, default=None)
ap.add_argument("--max-query", type=int, default=None)
ap.add_argument("--digests", action="store_true")
ap.add_argument("--digest-lie", type=int, default=None)
ap.add_argument("--require", action="append", default=[])
ap.add_argument("--log", default=None)
a = ap.parse_args()


def inst(i):
    return "gpu-node-%04d.rack07.cluster.example.org:9479" % i


LINE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
one = []  # (name, labels, value) of the node
for line in open(a.exposition):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    m = LINE.match(line)
    if not m:
        continue
    labels = {k: bytes(v, "utf-8").decode("unicode_escape") for k, v in LABEL.findall(m.group(2) or "")}
    one.append((m.group(1), labels, m.group(3)))
by_name = {}
for i in range(1, a.nodes + 1):
    extra = [("up", {"job": "rocewatch"}, "1")]
    if a.job:
        jid, n = a.job.split(":")
        if i <= int(n):
            extra.append(("roce_job_info", {"job_id": jid}, "1"))
    for name, labels, value in one + extra:
        copies = [{}] if not a.replica else [{a.replica: "a"}, {a.replica: "b"}]
        for c in copies:
            lab = dict(labels, instance=inst(i), **c)
            lab.setdefault("job", "rocewatch")
            v = value
            if (a.replica_diff == i and c.get(a.replica) == "b" and name == "roce_netdev_mtu_bytes"
                    and v == "9000"):
                v = "1500"
            if (a.digest_lie == i and name == "roce_netdev_mtu_bytes" and lab.get("rdma_device")
                    and v == "9000"):
                v = "1500"
            by_name.setdefault(name, []).append((i, lab, v))
log_lock = threading.Lock()


def visible(i):
    return a.drop_from is None or i < a.drop_from


def alternatives(s):
    """instance=~"..." of literal alternatives, RE2-quoted as fleet check writes them."""
    out, cur, esc = [], "", False
    for ch in s:
        if esc:
            cur += ch
            esc = False
        elif ch == "\\":
            esc = True
        elif ch == "|":
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return set(out)


def job_nodes(jid):
    return {i for i, lab, v in by_name.get("roce_job_info", []) if lab["job_id"] == jid}


def evaluate(q):
    m = re.fullmatch(r'group by \(instance\) \(roce_job_info\{job_id="(.*)"\}\)', q)
    if m:
        return [{"metric": {"instance": inst(i)}, "value": [1, "1"]}
                for i in sorted(job_nodes(m.group(1))) if visible(i)]
    m = re.fullmatch(r'\(([a-zA-Z_:][a-zA-Z0-9_:]*)\) and on \(instance\) '
                     r'group by \(instance\) \(roce_job_info\{job_id="(.*)"\}\)', q)
    if m:
        want = job_nodes(m.group(2))
        return [{"metric": {k: v for k, v in lab.items()}, "value": [1, v]}
                for i, lab, v in by_name.get(m.group(1), []) if i in want and visible(i)]
    m = re.fullmatch(r'group by \(instance, digest\) \(roce_fleet_digest_info\{schema="(\w+)"\} '
                     r'and on \(instance\) group by \(instance\) \(roce_job_info\{job_id="(.*)"\}\) '
                     r'unless on \(instance\) \(up == 0\)\)', q)
    if m:
        if not a.digests:
            return []
        want = job_nodes(m.group(2))
        return [{"metric": {"instance": lab["instance"], "digest": lab["digest"]}, "value": [1, "1"]}
                for i, lab, v in by_name.get("roce_fleet_digest_info", [])
                if i in want and visible(i) and lab["schema"] == m.group(1)]
    m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\{instance=~"(.*)"\}', q, re.S)
    if m:
        want = alternatives(m.group(2).encode().decode("unicode_escape"))
        return [{"metric": dict(lab, __name__=m.group(1)), "value": [1, v]}
                for i, lab, v in by_name.get(m.group(1), []) if lab["instance"] in want and visible(i)]
    return []


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def allowed(self):
        for h in a.require:
            k, v = h.split(":", 1)
            if self.headers.get(k.strip()) != v.strip():
                self.send(401, {"status": "error", "error": "no tenant or token: %s" % k})
                return False
        return True

    def answer(self, data):
        out = {"status": "success"}
        if a.is_partial and a.drop_from is not None:
            out["isPartial"] = True
        out["data"] = data
        if a.drop_from is not None and not a.is_partial:
            out["warnings"] = [a.warning]
        self.send(200, out)

    def do_GET(self):
        if not self.allowed():
            return
        if urllib.parse.urlsplit(self.path).path != a.prefix + "/api/v1/label/instance/values":
            self.send(404, {"status": "error", "error": "not found"})
            return
        self.answer(sorted({lab["instance"] for i, lab, v in by_name["up"] if visible(i)}))

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        if not self.allowed():
            return
        if self.path != a.prefix + "/api/v1/query":
            self.send(404, {"status": "error", "error": "not found"})
            return
        q = urllib.parse.parse_qs(body)["query"][0]
        if a.log:
            with log_lock, open(a.log, "a") as f:
                f.write("%d %s\n" % (len(q), q[:200].replace("\n", " ")))
        if a.max_query is not None and len(q) > a.max_query:
            self.send(422, {"status": "error", "errorType": "422",
                            "error": "too long query; got %d bytes; mustn't exceed "
                                     "`-search.maxQueryLen=%d` bytes" % (len(q), a.max_query)})
            return
        self.answer({"resultType": "vector", "result": evaluate(q)})


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 128


srv = Server(("127.0.0.1", a.port), Handler)
print("ready", flush=True)
srv.serve_forever()
