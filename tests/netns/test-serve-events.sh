#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier: a burst of link notifications must not starve the fast loop.
# Each notification triggers an early poll; if an early poll also moved the
# fast tick, twenty new veths would push the next counter poll out by twenty
# intervals and /healthz would report serve stalled (seen first in the vm
# tier, where creating an rxe device and its netdev sends such a burst).
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
finish
