#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier: the HTTP server under abuse.  In a private namespace (so the
# loopback addresses are ours), 200 slowloris connections trickle a request
# from 127.0.0.2 and 127.0.0.3 and `wrk -c64` hammers /metrics from
# 127.0.0.4 while a normal client scrapes from 127.0.0.1 and from wrk's own
# address: every scrape must be answered within 1 s.  The trickling
# connections must be cut off by --web.read-timeout (not only when idle);
# one address alone cannot take more than its share of connections; a
# garbage request line gets 400 and an oversized body 413.  Bounded in count
# and time: fixed numbers of connections and scrapes, every wait has a limit.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd curl
need_cmd wrk "apt-get install wrk"
need_cmd python3

ns=$(make_netns bounds)
# /32s on lo: a connection *to* 127.0.0.4 then comes *from* 127.0.0.4 (its own local route)
for a in $(seq 2 14); do ip -n "$ns" addr add "127.0.0.$a/32" dev lo; done
port=$(free_port)
read_timeout=3
ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address ":$port" --interval 500ms \
	--from "$SOURCE_DIR/tests/fixtures/snapshots/rules/good.json" \
	--web.read-timeout "${read_timeout}s" --web.max-connections 512 >"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill $pid"
in_ns() { ip netns exec "$ns" "$@"; }
wait_until 20 in_ns curl -sf "http://127.0.0.1:$port/metrics" ||
	die "serve did not come up: $(tail -5 "$TMPD/serve.log")"

# ---- the attack ----
duration=14
cat >"$TMPD/slowloris.py" <<'PY'
# Keep N connections per source address trickling one header byte a second,
# reconnecting whenever the server cuts one; report how often it did.
import socket, sys, time, selectors
port, dur, n = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
srcs = sys.argv[4:]
sel = selectors.DefaultSelector()
conns, cut, opened, peak = {}, 0, 0, 0
def open_one(src):
    global opened
    s = socket.socket()
    s.setblocking(True)
    s.bind((src, 0))
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    except OSError:
        s.close()
        return
    s.setblocking(False)
    conns[s] = src
    sel.register(s, selectors.EVENT_READ)
    opened += 1
end = time.time() + dur
for src in srcs:
    for _ in range(n):
        open_one(src)
print("connected", len(conns), flush=True)
while time.time() < end:
    t = time.time()
    for key, _ in sel.select(timeout=0):
        s = key.fileobj
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:  # the server hung up on us
            cut += 1
            src = conns.pop(s)
            sel.unregister(s)
            s.close()
            open_one(src)
    for s in list(conns):
        try:
            s.send(b"X")  # one more byte of a header that never ends
        except OSError:
            pass
    peak = max(peak, len(conns))
    time.sleep(max(0, 1 - (time.time() - t)))
print("cut", cut, "opened", opened, "peak", peak, flush=True)
PY
in_ns python3 "$TMPD/slowloris.py" "$port" "$duration" 100 127.0.0.2 127.0.0.3 >"$TMPD/slowloris.out" 2>&1 &
slow=$!
on_exit "kill $slow"
wait_until 10 grep -q '^connected' "$TMPD/slowloris.out" || die "slowloris did not start: $(cat "$TMPD/slowloris.out")"
in_ns wrk -t2 -c64 -d"$((duration - 2))s" "http://127.0.0.4:$port/metrics" >"$TMPD/wrk.out" 2>&1 &
wrkpid=$!
on_exit "kill $wrkpid"
established() { in_ns ss -Htn state established "( sport = :$port )" | wc -l; }
wait_until 10 bash -c "[ \$(ip netns exec $ns ss -Htn state established '( sport = :$port )' | wc -l) -ge 250 ]" ||
	echo "  (fewer than 250 connections after 10 s)"
echo "  server-side connections during the attack: $(established)"
echo "  slowloris: $(cat "$TMPD/slowloris.out")"

# ---- a normal client, during the attack ----
scrape() { # SOURCE: one /metrics, answered within 1 s; prints the time taken
	in_ns curl -s --max-time 1 --interface "$1" -o "$TMPD/m.txt" -w '%{time_total}' \
		"http://127.0.0.1:$port/metrics" && grep -q '^rocewatch_build_info' "$TMPD/m.txt"
}
ok1=0 ok4=0 times=""
for i in $(seq 1 10); do
	if t=$(scrape 127.0.0.1); then ok1=$((ok1 + 1)); times="$times $t"; fi
	if t=$(scrape 127.0.0.4); then ok4=$((ok4 + 1)); times="$times $t"; fi
	sleep 0.3
done
echo "  scrape times under attack (s):$times"
check "10/10 scrapes from 127.0.0.1 answered within 1 s during slowloris + wrk" [ "$ok1" = 10 ]
check "10/10 scrapes from wrk's own address answered within 1 s" [ "$ok4" = 10 ]

wait "$wrkpid" || true
wait "$slow" || true
echo "  wrk: $(grep -E 'Requests/sec|requests in' "$TMPD/wrk.out" | tr -s ' ' | tr '\n' ';')"
check "wrk was answered (the load was real)" bash -c \
	"awk '/requests in/ { exit !(\$1 > 1000) }' '$TMPD/wrk.out'"
read -r _ cut _ opened _ peak < <(grep '^cut' "$TMPD/slowloris.out")
echo "  slowloris: $cut cut off, $opened opened, at most $peak at once"
check "trickling connections are cut off by --web.read-timeout (each at least once)" \
	[ "${cut:-0}" -ge 200 ]

# ---- one address cannot take everything: a sixth of 512 each ----
cat >"$TMPD/hog.py" <<'PY'
# Open N silent connections from one address; count those the server closes at once.
import socket, sys, time
port, n, src = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = []
for _ in range(n):
    s = socket.socket(); s.bind((src, 0)); s.connect(("127.0.0.1", port)); socks.append(s)
time.sleep(1)
closed = 0
for s in socks:
    s.setblocking(False)
    try:
        closed += s.recv(1) == b""
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print(closed)
PY
closed=$(in_ns python3 "$TMPD/hog.py" "$port" 150 127.0.0.5)
echo "  150 silent connections from 127.0.0.5: $closed closed at once"
check "per-address limit: 85 of 150 kept, the rest closed" [ "$closed" = 65 ]
check "another address is still served meanwhile" bash -c "ip netns exec $ns curl -sf --max-time 1 -o /dev/null http://127.0.0.1:$port/metrics"

# ---- idle keep-alive connections fill the server: an idle one makes room (issue 42 item 10) ----
# 8 addresses x 70 connections that each asked once and then sit idle, reconnecting
# whenever the server closes one: every connection taken.  A scrape from a ninth
# address must still be answered within 1 s, 60 of 60.
cat >"$TMPD/idle.py" <<'PY'
import socket, sys, time, selectors
port, dur, n = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
sel, conns, closed = selectors.DefaultSelector(), {}, 0
def open_one(src):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        got = b""
        while b"\r\n\r\n" not in got:
            b = s.recv(4096)
            if not b:
                raise OSError
            got += b
    except OSError:
        s.close()
        return
    s.setblocking(False)  # answered once: now idle, kept alive
    conns[s] = src
    sel.register(s, selectors.EVENT_READ)
srcs = sys.argv[4:]
for src in srcs:
    for _ in range(n):
        open_one(src)
print("idle", len(conns), flush=True)
end = time.time() + dur
while time.time() < end:
    for key, _ in sel.select(timeout=0.2):
        s = key.fileobj
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:
            closed += 1
            src = conns.pop(s)
            sel.unregister(s)
            s.close()
            open_one(src)
print("closed", closed, "open", len(conns), flush=True)
PY
in_ns python3 "$TMPD/idle.py" "$port" 20 70 127.0.0.{5..12} >"$TMPD/idle.out" 2>&1 &
idlep=$!
on_exit "kill $idlep"
wait_until 20 grep -q '^idle' "$TMPD/idle.out" || die "idle clients did not start: $(cat "$TMPD/idle.out")"
echo "  $(head -1 "$TMPD/idle.out") connections; server-side: $(established)"
okf=0 times=""
for i in $(seq 1 60); do
	if t=$(scrape 127.0.0.13); then okf=$((okf + 1)); times="$times $t"; fi
done
echo "  scrape times from a ninth address (s):$times"
check "60/60 scrapes from a ninth address answered within 1 s while 8 x 70 idle connections fill the server" [ "$okf" = 60 ]
kill "$idlep" 2>/dev/null; wait "$idlep" 2>/dev/null || true

# ---- bad requests get answers, not resets ----
cat >"$TMPD/raw.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(5)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
out = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except OSError:
    pass
print(out.split(b"\r\n")[0].decode("latin-1"))
PY
check "a garbage request line: 400" bash -c "[ \"\$(ip netns exec $ns python3 '$TMPD/raw.py' $port 'GARBAGE\\r\\n\\r\\n')\" = 'HTTP/1.1 400 Bad Request' ]"
check "binary noise: 400" bash -c "[ \"\$(ip netns exec $ns python3 '$TMPD/raw.py' $port '\\x00\\x01\\x02\\r\\n\\r\\n')\" = 'HTTP/1.1 400 Bad Request' ]"
check "a body over 4 KiB: 413" bash -c "[ \"\$(ip netns exec $ns python3 '$TMPD/raw.py' $port 'POST /api/v1/capture HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100000\\r\\n\\r\\n')\" = 'HTTP/1.1 413 Content Too Large' ]"
check "serve survived all of it" in_ns curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$port/healthz"
kill "$pid"
rc=0
wait "$pid" || rc=$?
check "serve exits 0 on SIGTERM" [ "$rc" -eq 0 ]
finish
