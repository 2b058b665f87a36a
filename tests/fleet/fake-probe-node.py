#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A node's serve --probe --web.enable-probe-api as `rocewatch fleet probe` sees it, for the
fleet probe tests, on 127.0.0.1:PORT.  It sends no probes: it answers as if its probes had
gone out, each lost when its own port or the peer's GID is in --dead, else answered.

  fake-probe-node.py PORT ID MODE [--dead GID,GID...]
    ID      the node's number: its ports' GIDs are ::ffff:127.0.ID.1 and ::ffff:127.0.ID.2,
            rails r0 and r1
    MODE    ok       as above
            dies     takes the plan (202), then exits: its results never come
            hostile  /api/v1/probe holds a rail with a newline in it
            qkey     its ports use another Q_Key than rocewatch's
            late     every other entry's small probes did not leave (late on both
                     passes): its path-MTU size alone went, and was lost

Writes "ready" on stdout once it listens.
"""
import base64
import json
import os
import struct
import sys
import threading
import time
import http.server
import urllib.parse

port, ident, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
dead = set()
if len(sys.argv) > 5 and sys.argv[4] == "--dead":
    dead = set(g for g in sys.argv[5].split(",") if g)
QKEY = 0x52574B31
plan = {}


def gid(k):
    return "::ffff:127.0.%d.%d" % (ident, k + 1)


def gid_text(raw):
    if raw[:12] == b"\0" * 10 + b"\xff\xff":
        return "::ffff:%d.%d.%d.%d" % tuple(raw[12:])
    return raw.hex()


def doc():
    ports = []
    for k in range(2):
        p = {"device": "fake%d" % k, "port": 1, "netdev": "veth%d" % k, "qpn": 100 + k,
             "qkey": QKEY if mode != "qkey" else 7, "gid": gid(k), "gid_index": 1,
             "active_mtu": 4096, "state": "ACTIVE", "role": "compute", "rail": "r%d" % k,
             "counters": {"link_downed": 0, "carrier_changes": 1}}
        if mode == "hostile" and k == 1:
            p["rail"] = "r1\nX-Injected: yes"
        ports.append(p)
    return {"version": 1, "qkey": QKEY, "ports": ports}


def sizes(mtu):
    s = [64, min(mtu, 1024)] if mtu > 64 else [64]
    if mtu > 1024:
        s.append(mtu)
    return s


def results(hdr, data):
    raw = base64.b64decode(data)
    out = b""
    for i in range(hdr["entries"]):
        e = raw[28 * i:28 * i + 28]
        mtu = struct.unpack(">H", e[4:6])[0]
        lport, labels = e[6], e[7]
        target = gid_text(e[12:28])
        lost = gid(lport) in dead or target in dead
        n = len(sizes(mtu))
        rep = hdr["repeats"]
        sent = [rep if c < n else 0 for c in range(3)]
        recv = [0 if lost else s for s in sent]
        lmask = ((1 << labels) - 1) if lost else 0
        if mode == "late" and i % 2 == 0:
            sent = [0, 0, rep if n == 3 else 0]
            recv, labels, lmask, lost = [0, 0, 0], 0, 0, True
        out += bytes(sent + recv + [0, labels]) + struct.pack(">II", lmask,
                                                             0xFFFFFFFF if lost else 5000)
    return base64.b64encode(out).decode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def reply(self, code, body, ctype="application/json"):
        b = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
        self.wfile.flush()

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        if u.path == "/api/v1/probe":
            return self.reply(200, json.dumps(doc()))
        if u.path == "/api/v1/probe/plan":
            q = urllib.parse.parse_qs(u.query)
            p = plan.get(q.get("id", [""])[0])
            if not p:
                return self.reply(404, '{"error":"plan: not this node\'s last plan"}')
            hdr, data = p
            head = {"version": 1, "plan": hdr["plan"], "node": hdr["node"]}
            end = hdr["start_ns"] + hdr["slots"] * hdr["slot_ns"] + hdr["wait_ns"]
            if time.time_ns() < end:
                head.update(state="running", entries=0)
                return self.reply(200, json.dumps(head) + "\n\n", "text/plain")
            head.update(state="done", entries=hdr["entries"])
            return self.reply(200, json.dumps(head) + "\n" + results(hdr, data) + "\n",
                              "text/plain")
        self.reply(404, "not found\n", "text/plain")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode()
        if urllib.parse.urlparse(self.path).path != "/api/v1/probe/plan":
            return self.reply(404, "not found\n", "text/plain")
        line, data = body.split("\n", 1)
        hdr = json.loads(line)
        plan[hdr["plan"]] = (hdr, data.strip())
        self.reply(202, json.dumps({"status": "accepted", "plan": hdr["plan"],
                                    "entries": hdr["entries"]}))
        if mode == "dies":
            os._exit(0)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
print("ready", flush=True)
srv.serve_forever()
