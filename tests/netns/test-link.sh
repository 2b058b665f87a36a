#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier: a veth pair in a private namespace; MTU 9000 and link down must
# show on /metrics within one fast interval (the slow loop is set far away, so
# only the RTNLGRP_LINK notification can explain it).
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd ip iproute2
need_cmd curl

ns=$(make_netns link)
ip -n "$ns" link add va type veth peer name vb
ip -n "$ns" link set va up
ip -n "$ns" link set vb up
port=$(free_port)
interval_ms=500

ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" \
	--interval ${interval_ms}ms --config-interval 1h --netdev-exclude 'lo' \
	>"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill $pid"

metrics() { ip netns exec "$ns" curl -sf "http://127.0.0.1:$port/metrics"; }
has() { metrics | grep -qF "$1"; }

wait_until 10 has 'roce_netdev_mtu_bytes{device="va"} 1500' || die "serve never showed va: $(cat "$TMPD/serve.log")"
check "veth pair visible with its MTU" has 'roce_netdev_mtu_bytes{device="vb"} 1500'
check "lo is not a netdev of interest" bash -c "! ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q 'device=\"lo\"'"

# Change MTU and operstate, then give it one fast interval (plus scheduling slack).
t0=$(date +%s%N)
ip -n "$ns" link set va mtu 9000
ip -n "$ns" link set vb down
wait_until 2 has 'roce_netdev_mtu_bytes{device="va"} 9000'
t1=$(date +%s%N)
check "MTU 9000 shown" has 'roce_netdev_mtu_bytes{device="va"} 9000'
seen_ms=$(( (t1 - t0) / 1000000 ))
echo "MTU change visible after ${seen_ms} ms (fast interval ${interval_ms} ms)"
# The notification makes it near-immediate; the slack absorbs scheduling on a loaded machine.
check "MTU change visible within one fast interval (+250 ms slack)" [ "$seen_ms" -le $((interval_ms + 250)) ]
check "link down shown" wait_until 2 has 'roce_netdev_operstate_info{device="vb",operstate="down"} 1'
check "peer of a downed veth loses carrier" wait_until 2 has 'roce_netdev_carrier{device="va"} 0'

# Flaps: the kernel's carrier counts (rtnetlink IFLA_CARRIER_*) and the transitions
# rocewatch saw itself, each flap waited for so that both must count it.
val() { metrics | awk -v k="$1" 'index($0, k" ") == 1 { print $2 }'; }
c0=$(val 'roce_netdev_carrier_changes_total{device="va"}')
d0=$(val 'roce_netdev_carrier_transitions_total{device="va",to="down"}')
s0=$(val 'roce_netdev_carrier_transitions_seen_total{device="va"}')
check "carrier counts exported" [ -n "$c0" -a -n "$d0" -a -n "$s0" ]
for i in 1 2 3; do
	ip -n "$ns" link set vb up
	wait_until 2 has 'roce_netdev_carrier{device="va"} 1' || die "va never got carrier back"
	ip -n "$ns" link set vb down
	wait_until 2 has 'roce_netdev_carrier{device="va"} 0' || die "va never lost carrier"
done
check "3 flaps: 6 more kernel carrier changes" wait_until 2 has "roce_netdev_carrier_changes_total{device=\"va\"} $((c0 + 6))"
check "3 flaps: 3 more carrier downs" has "roce_netdev_carrier_transitions_total{device=\"va\",to=\"down\"} $((d0 + 3))"
check "3 flaps: 6 more transitions seen by rocewatch" has "roce_netdev_carrier_transitions_seen_total{device=\"va\"} $((s0 + 6))"
last=$(val 'roce_netdev_carrier_last_change_timestamp_seconds{device="va"}')
now=$(date +%s)
check "time of the last transition seen is now" [ -n "$last" -a "${last:-0}" -le "$now" -a "${last:-0}" -ge $((now - 30)) ]

# A new device appears and a deleted one disappears.
ip -n "$ns" link add vc type veth peer name vd
check "new device picked up" wait_until 2 has 'roce_netdev_mtu_bytes{device="vc"}'
ip -n "$ns" link del vc
check "deleted device dropped" wait_until 2 bash -c "! ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q 'device=\"vc\"'"

# HTTP semantics on the real server
code() { ip netns exec "$ns" curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "/healthz 200" [ "$(code "http://127.0.0.1:$port/healthz")" = 200 ]
check "unknown path 404" [ "$(code "http://127.0.0.1:$port/nope")" = 404 ]
check "POST /metrics 405" [ "$(code -X POST "http://127.0.0.1:$port/metrics")" = 405 ]
check "content type 0.0.4" bash -c "ip netns exec $ns curl -sI http://127.0.0.1:$port/metrics | grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8'"
check "gzip when accepted" bash -c "ip netns exec $ns curl -s -H 'Accept-Encoding: gzip' http://127.0.0.1:$port/metrics | gunzip | grep -q roce_netdev_mtu_bytes"
check "landing page links /metrics" bash -c "ip netns exec $ns curl -sf http://127.0.0.1:$port/ | grep -q 'href=\"/metrics\"'"
check "/api/v1/state is the snapshot" bash -c "ip netns exec $ns curl -sf http://127.0.0.1:$port/api/v1/state | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"schema\"]==\"rocewatch-snapshot\"; assert any(n[\"name\"]==\"va\" and n[\"fields\"][\"mtu\"]==9000 for n in d[\"netdevs\"])'"

# Stop cleanly on SIGTERM
kill -TERM "$pid"
rc=0
wait_until 5 bash -c "! kill -0 $pid" || rc=1
check "SIGTERM stops serve" [ "$rc" -eq 0 ]
wait "$pid"; src=$?
check "exit status 0 after SIGTERM" [ "$src" -eq 0 ]
check "no sanitizer reports" bash -c "! grep -E 'ERROR: AddressSanitizer|runtime error' '$TMPD/serve.log'"
finish
