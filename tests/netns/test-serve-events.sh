#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier: a burst of link notifications must not starve the fast loop.
# Each notification triggers an early poll; if an early poll also moved the
# fast tick, twenty new veths would push the next counter poll out by twenty
# intervals and /healthz would report serve stalled (seen first in the vm
# tier, where creating an rxe device and its netdev sends such a burst).
# Then a carrier loss must reach an Alertmanager with no poll at all: serve
# polls once an hour, so an alert that waited for a tick would never come,
# and the poll counters (not a clock) say that none ran -- the notification's
# event pass re-read the link, ran the carrier rule (for: 0) and sent it.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd ip iproute2
need_cmd curl

ns=$(make_netns events)
port=$(free_port)
interval_s=1

ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" \
	--interval ${interval_s}s --config-interval 1h >"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill $pid"

get() { ip netns exec "$ns" curl -sf "http://127.0.0.1:$port$1"; }
fast_polls() { get /metrics | awk '$1 == "rocewatch_polls_total{loop=\"fast\"}" { print $2 }'; }
wait_until 10 get /healthz >/dev/null || die "serve did not come up: $(cat "$TMPD/serve.log")"

# Twenty pairs: forty RTM_NEWLINK notifications, and more as they come up.
for i in $(seq 1 20); do
	ip -n "$ns" link add "ea$i" type veth peer name "eb$i"
	ip -n "$ns" link set "ea$i" up
	ip -n "$ns" link set "eb$i" up
done
check "the burst was seen (new devices on /metrics)" \
	wait_until 5 bash -c "ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q 'device=\"eb20\"'"

# After the burst, the fast loop must keep its 1 s tick: over 5 s at least 4 more polls,
# and /healthz (stalled after three intervals without a poll) must stay 200 throughout.
before=$(fast_polls)
bad=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
	sleep 0.5
	[ "$(ip netns exec "$ns" curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ] ||
		bad=$((bad + 1))
done
after=$(fast_polls)
echo "fast polls in 5 s after the burst: $((after - before)) (interval ${interval_s} s)"
check "fast loop keeps its tick after a notification burst" [ $((after - before)) -ge 4 ]
check "/healthz stayed 200 after the burst" [ "$bad" -eq 0 ]

kill "$pid"
rc=0
wait "$pid" || rc=$?
check "serve exits 0 on SIGTERM" [ "$rc" -eq 0 ]

# ---- a carrier loss reaches Alertmanager without a poll ----
need_cmd python3
ip -n "$ns" link add ca type veth peer name cb
ip -n "$ns" link set ca up
ip -n "$ns" link set cb up
cat >"$TMPD/carrier.yaml" <<'EOF'
profile: carrier
rules:
  - name: carrier_present
    scope: netdev
    expr: carrier
    severity: critical
    doc: the link is down
EOF
# an Alertmanager stand-in: 200 to every POST, the bodies one per line
cat >"$TMPD/am.py" <<'EOF'
import http.server, sys
out = open(sys.argv[2], "ab", buffering=0)
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        out.write(self.rfile.read(int(self.headers["Content-Length"])) + b"\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
am_port=$(free_port "$ns")
ip netns exec "$ns" python3 "$TMPD/am.py" "$am_port" "$TMPD/posts" &
am_pid=$!
on_exit "kill $am_pid"
wait_until 10 ip netns exec "$ns" curl -sf -o /dev/null -d x "http://127.0.0.1:$am_port/" ||
	die "the Alertmanager stand-in did not come up"
: >"$TMPD/posts"
# one poll at start, then none for an hour: an alert that waited for a tick would not come
port=$(free_port "$ns")
ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" \
	--netdev-include 'c[ab]' --profile "$TMPD/carrier.yaml" --interval 1h \
	--config-interval 1h --alertmanager.url "http://127.0.0.1:$am_port" \
	>"$TMPD/serve2.log" 2>&1 &
pid=$!
on_exit "kill $pid"
metric() { get /metrics | awk -v k="$1" '$1 == k { print $2 }'; }
wait_until 10 get /healthz >/dev/null || die "serve did not come up: $(cat "$TMPD/serve2.log")"
fast0=$(metric 'rocewatch_polls_total{loop="fast"}')
slow0=$(metric 'rocewatch_polls_total{loop="slow"}')
ev0=$(metric rocewatch_event_passes_total)
at_start() { [ "$fast0" = 1 ] && [ "$slow0" = 1 ] && [ ! -s "$TMPD/posts" ]; }
check "one poll so far (fast $fast0, slow $slow0), no alert sent" at_start

sent() { grep -q "\"alertname\":\"carrier_present\".*\"device\":\"$1\"" "$TMPD/posts"; }
both_sent() { sent ca && sent cb; }
ip -n "$ns" link set cb down
check "the carrier loss reached Alertmanager, for both ends of the veth" wait_until 10 both_sent
fast1=$(metric 'rocewatch_polls_total{loop="fast"}')
slow1=$(metric 'rocewatch_polls_total{loop="slow"}')
ev1=$(metric rocewatch_event_passes_total)
echo "polls: fast $fast0 -> $fast1, slow $slow0 -> $slow1; event passes $ev0 -> $ev1"
no_poll() { [ "$fast1" = "$fast0" ] && [ "$slow1" = "$slow0" ] && [ "$ev1" -gt "$ev0" ]; }
check "no poll ran for it: the notification's event pass sent it" no_poll
check "its stages are in rocewatch_alert_latency_seconds, up to alertmanager_accepted" \
	[ "$(metric 'rocewatch_alert_latency_seconds_count{stage="alertmanager_accepted"}')" -ge 1 ]

# and back: the resolution goes out the same way, still without a poll
: >"$TMPD/posts"
ip -n "$ns" link set cb up
check "the carrier's return resolved the alert at Alertmanager" wait_until 10 both_sent
check "serve said so" wait_until 5 grep -q "alert resolved: carrier_present" "$TMPD/serve2.log"
check "no poll ran for that either" [ "$(metric 'rocewatch_polls_total{loop="fast"}')" = "$fast0" ]
finish
