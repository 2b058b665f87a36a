#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A node that misbehaves, for the fleet tests.  Listens on 127.0.0.1:PORT.

  fake-node.py PORT silent          accepts, reads the request, never answers
  fake-node.py PORT garbage         200 with a body that is not JSON
  fake-node.py PORT bighead         200 with a 10 MB header line
  fake-node.py PORT auth USER PASS FILE    FILE, only with that basic auth (else 401)
  fake-node.py PORT tls CERT KEY FILE      FILE over TLS
  fake-node.py PORT many FILE       FILE for every request, whatever the Host (bench)
  fake-node.py PORT prom [cut|badenc|badcompact|nolist]
                                    a Prometheus whose answers for nodes n1 and n2 spell
                                    labels with JSON escapes (\u0031, a surrogate pair, \")
                                    and keys in either order; cut: the MTU answer ends early.
                                    n1 exports the compact DSCP map and PFC set
                                    (roce_dscp_map_info, roce_pfc_enabled_info); n2 is an
                                    older rocewatch without them, whose DSCP map and PFC set
                                    are answered as fleet check asks for them then, encoded
                                    (n2: DSCP 48 -> 5, DSCP 63 unmapped, PFC on 4).  Series
                                    come back only for the instances the query's
                                    instance=~"..." matches; each query is written to stderr.
                                    badenc: n2's DSCP map does not decode; badcompact: n1's
                                    compact map is not one; nolist: no
                                    /api/v1/label/instance/values (404); cutlist: that answer
                                    ends before its Content-Length
                                    huge [BYTES [METRIC]]: every answer but up's (or METRIC's) is
                                    BYTES long (default 80 MiB: past the default --max-body),
                                    series of other:9479;
                                    hugelabel [BYTES]: n1's MTU series has a label x of BYTES
                                    (default 20 MB); hugelabelall: every answer but up's has it;
                                    hex: n1's MTU is "0x2328"; dupsame / dupdiff: n1's MTU
                                    twice (the second from another job), 9000 both times or
                                    9000 then 1500; endlesslist: the instance list never ends;
                                    stalllist: it stops half-way and the connection stays open

Writes "ready" on stdout once it listens.
"""
import base64
import re
import http.server
import urllib.parse
import socketserver
import ssl
import sys
import threading

port, mode, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
body = b""
if mode in ("auth", "tls", "many"):
    with open(args[-1], "rb") as f:
        body = f.read()
forever = threading.Event()
log_lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def send(self, code, data, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if mode == "prom":
            if args[:1] == ["nolist"] or not self.path.startswith("/api/v1/label/instance/values"):
                self.send(404, b"404 page not found\n", "text/plain")
            elif args[:1] in (["endlesslist"], ["stalllist"]):
                # no Content-Length: the answer ends when the connection does
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                self.wfile.write(b'{"status":"success","data":["n1:9479","n2:9479"')
                chunk = b"".join(b',"other%d:9479"' % i for i in range(20000))
                try:
                    while args[0] == "endlesslist":
                        self.wfile.write(chunk)
                    self.wfile.flush()
                    forever.wait()
                except OSError:
                    pass  # the client gave up, as it should
            elif args[:1] == ["cutlist"]:
                # a status, then the connection gone half-way through the body
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000")
                self.end_headers()
                self.wfile.write(b'{"status":"success","data":["n1:9479"')
                self.wfile.flush()
                self.close_connection = True
            else:
                # another exporter on n1's host too: it is n1's instance as well, by pattern
                self.send(200, b'{"status":"success","data":["n1:9100","n1:9479","n2:9479",'
                          b'"other:9479"]}')
            return
        if mode == "silent":
            forever.wait()  # until the test kills us
            return
        if mode == "bighead":
            self.send_response(200)
            self.send_header("X-Big", "a" * (10 << 20))
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
            return
        if mode == "garbage":
            self.send(200, b"<html><body>502 Bad Gateway</body></html>\n", "text/html")
            return
        if mode == "auth":
            want = "Basic " + base64.b64encode(("%s:%s" % (args[0], args[1])).encode()).decode()
            if self.headers.get("Authorization") != want:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="rocewatch"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        self.send(200, body)


    # Prometheus's /api/v1/query, as its JSON encoder may spell it
    def do_POST(self):
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        query = form["query"][0]
        with log_lock:  # one line a query, whatever the threads
            sys.stderr.write(query + "\n")
            sys.stderr.flush()
        # the metric is the one selector in the query, plain or inside the encoding
        metric = re.search(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", query).group(1)
        good = {d: d // 8 for d in range(64)}
        if metric == "up":
            result = ('{"metric":{"__name__":"up","instance":"n1:9479"},"value":[1,"1"]},'
                      '{"value":[1,"1"],"metric":{"instance":"n2:9479","__name__":"up"}}')
        elif metric == "roce_netdev_mtu_bytes":
            result = ('{"metric":{"device":"eth\\u0030","instance":"n\\u0031:9479",'
                      '"x":"\\ud83d\\ude00 \\"q\\" \\\\"},"value":[1,"9000"]},'
                      '{"value":[1.5,"9000"],"metric":{"instance":"n2:9479","device":"eth0"}}')
            if args[:1] == ["hex"]:
                result = result.replace('"value":[1,"9000"]', '"value":[1,"0x2328"]', 1)
            elif args[:1] in (["dupsame"], ["dupdiff"]):
                # one node scraped by two jobs (or two HA replicas behind one query URL)
                result += (',{"metric":{"device":"eth0","instance":"n1:9479","job":"rocewatch-b"},'
                           '"value":[1,"%s"]}' % ("9000" if args[0] == "dupsame" else "1500"))
        elif metric == "roce_dscp_priority" and "rocewatch_dscp_group" in query:
            # one query per group of 16 DSCPs, named by the group label its weights carry
            groups = [int(g) for g in re.findall(r'"rocewatch_dscp_group", "([0-9])"', query)]
            result = ",".join(x for x in (dscp_encoded(n, "eth0", m, groups)
                                          for n, m in dscp_maps()) if x)
        elif metric == "roce_rdma_port_info":
            # the RDMA port that makes eth0 a RoCE netdev (the fleet rules' guard)
            result = ",".join('{"metric":{"instance":"%s:9479","device":"mlx5_0","port":"1",'
                              '"netdev":"eth0","link_layer":"Ethernet"},"value":[1,"1"]}'
                              % n for n in ("n1", "n2"))
        elif metric == "roce_pfc_enabled" and "sum without (priority)" in query:
            result = ",".join('{"metric":{"instance":"%s:9479","device":"eth0"},"value":[1,"%d"]}'
                              % (n, 1 << p) for n, p in (("n1", 3), ("n2", 4)))
        elif metric == "roce_dscp_map_info":
            m = "".join(str(good[d]) for d in range(64))
            if args[:1] == ["badcompact"]:
                m = m[:20] + "\\u001b[2J" + m[21:]
            result = ('{"metric":{"__name__":"roce_dscp_map_info","instance":"n1:9479",'
                      '"device":"eth0","map":"%s"},"value":[1,"1"]}' % m)
        elif metric == "roce_pfc_enabled_info":
            result = ('{"value":[1,"1"],"metric":{"priorities":"00010000","instance":"n1:9479",'
                      '"device":"eth0"}}')
        else:
            result = ""
        result = ",".join(x for x in split_series(result) if matches(query, x))
        if args[:1] == ["badenc"] and "rocewatch_dscp_group\", \"0\"" in query:
            # not an integer: no sum of (priority + 1) * 9^k gives it
            result = result.replace('"value":[1,"', '"value":[1,"0.5', 1)
        if metric != "up" and (args[:1] == ["hugelabelall"] or
                               (args[:1] == ["hugelabel"] and metric == "roce_netdev_mtu_bytes")):
            n = int(args[1]) if len(args) > 1 else 20_000_000
            big = '{"metric":{"device":"eth0","instance":"n1:9479","x":"%s"},"value":[1,"1"]}' % (
                "a" * n)
            result = big + ("," + result if result else "")
        if metric != "up" and args[:1] == ["huge"] and args[2:3] in ([], [metric]):
            self.send_huge(int(args[1]) if len(args) > 1 else 80 << 20)
            return
        data = '{"status":"success","data":{"resultType":"vector","result":[%s]}}' % result
        if metric == "roce_netdev_mtu_bytes" and args[:1] == ["cut"]:
            data = data[:len(data) // 2]
        self.send(200, data.encode())


    def send_huge(self, n):
        """A result vector n bytes long, series after series (none of them a node's)."""
        head = b'{"status":"success","data":{"resultType":"vector","result":['
        one = b'{"metric":{"device":"eth0","instance":"other:9479"},"value":[1,"1"]},'
        chunk = one * ((1 << 20) // len(one))
        tail = b'{"metric":{"instance":"other:9479"},"value":[1,"1"]}]}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        try:
            self.wfile.write(head)
            left = n - len(head) - len(tail)
            while left >= len(chunk):
                self.wfile.write(chunk)
                left -= len(chunk)
            self.wfile.write(b" " * max(left, 0))  # whitespace: still one JSON document
            self.wfile.write(tail)
        except OSError:
            self.close_connection = True  # refused at the cap, as it should be


def split_series(result):
    """The series of a result array's text, each on its own."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(result):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if not depth:
                out.append(result[start:i + 1])
        elif c == "," and not depth:
            start = i + 1
    return out


def matches(query, series):
    """Does the query's instance=~"..." match the series' instance, as Prometheus would?"""
    pattern = re.search(r'instance=~"((?:[^"\\]|\\.)*)"', query).group(1)
    inst = re.search(r'"instance":"((?:[^"\\]|\\.)*)"', series).group(1)
    inst = inst.encode().decode("unicode_escape")
    # a PromQL string's backslashes are doubled; RE2 and Python agree on what is left here
    return re.fullmatch(pattern.replace("\\\\", "\\"), inst) is not None


def dscp_maps():
    """n1: DSCP 8p..8p+7 on priority p; n2 the same but DSCP 48 on 5 and 63 unmapped."""
    good = {d: d // 8 for d in range(64)}
    odd = dict(good)
    odd[48] = 5
    del odd[63]
    return (("n1", good), ("n2", odd))


def dscp_encoded(node, dev, m, groups):
    """The series an encoded DSCP query gives: per group of 16, sum (prio+1) * 9^(d%16)."""
    out = []
    for g in groups:
        v = sum((p + 1) * 9 ** (d % 16) for d, p in m.items() if d // 16 == g)
        if v:
            out.append('{"metric":{"instance":"%s:9479","device":"%s","rocewatch_dscp_group":"%d"},'
                       '"value":[1,"%d"]}' % (node, dev, g, v))
    return ",".join(out)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


srv = Server(("127.0.0.1", port), Handler)
if mode == "tls":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args[0], args[1])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("ready", flush=True)
srv.serve_forever()
