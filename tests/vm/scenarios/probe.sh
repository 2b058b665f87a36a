#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The RDMA probe between two nodes (issue 21): `serve --probe` on both guests answers UD
# probes on rxe0; guest 0's `rocewatch probe` proves the path to guest 1. One boot, in turn:
#  1. both eth0 at MTU 9000: /api/v1/probe (and the snapshot, /api/v1/state) names rxe0/1 with a QPN, the Q_Key and the port's
#     IPv4 RoCE v2 GID at the index sysfs has it; every size (64, 1024, 4096) comes back, loss
#     0, RTT min <= p50 <= p99 <= max reported, software timestamps; exit 0;
#  2. one probe run over four more nodes besides guest 1: a serve without --probe, a server
#     answering garbage, probe info naming a GID nobody has (10.99.0.9) and an address nobody
#     answers at: each has its own error (UNKNOWN, UNKNOWN, CRITICAL unreachable, UNKNOWN),
#     guest 1 is still probed and OK, the exit code is CRITICAL's;
#  3. guest 1 at MTU 1500 (active_mtu 1024): 64 and 1024 come back, 4096 does not, and
#     `probe` exits CRITICAL naming the MTU on the path and the peer's active_mtu 1024;
#     guest 1 probing guest 0 cannot send 4096 at all and says so (CRITICAL);
#  4. `tc netem loss 20%` on guest 1's egress: 200 probes, measured loss within 8-35 %;
#  5. `rdma link delete rxe0` on guest 0 completes with serve --probe running (the responder
#     lets go of the device), /api/v1/probe lists no port, and after `rdma link add` the
#     port is back; SIGTERM ends both serves with 0 and no sanitizer (leak) report.
#
# Run alone: tests/vm/run-scenario --guests 2 --timeout 420 tests/vm/scenarios/probe.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

[[ ${GUEST_COUNT:-1} -eq 2 ]] || vm_fail "needs two guests (run-scenario --guests 2)"

dev=rxe0 if=$GUEST_IFACE port=9479
declare -a side_pids=()
cleanup() {
	rw_serve_kill
	for p in "${side_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	tc qdisc del dev "$if" root 2>/dev/null || true
	rdma link delete "$dev" 2>/dev/null || true
	ip link set "$if" mtu 1500 2>/dev/null || true
}
trap cleanup EXIT

vm_run modprobe rdma_rxe
vm_run ip link set "$if" mtu 9000
vm_run rdma link add "$dev" type rxe netdev "$if"
vm_wait_port_active "$dev" 1 30
vm_wait_until 10 "$dev active_mtu 4096" vm_active_mtu_is "$dev" 4096

# guest 0 also probes guest 1 continuously (metrics); guest 1 only answers
cont=()
((GUEST_ID == 0)) && cont=(--probe.peers "$PEER_IP" --probe.interval 500ms)
RW_SERVE_HOST="" rw_serve_start "$port" --interval 1s --probe "${cont[@]}"
info=$VM_OUT/probe-info.json
rw_fetch /api/v1/probe "$info"
got=$(rw_jq "$info" '.ports | length as $n | .[0] | "\($n) \(.device)/\(.port) \(.netdev) \(.gid) \(.qkey) \(.qpn > 0) \(.active_mtu)"')
vm_expect_eq "$got" "1 $dev/1 $if ::ffff:$GUEST_IP $((0x52574b31)) true 4096" "/api/v1/probe: the port"
idx=$(rw_jq "$info" '.ports[0].gid_index')
vm_expect_eq "$(vm_gid_at "$dev" 1 "$idx") $(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$idx")" \
	"$(vm_gid_ipv4 "$GUEST_IP") RoCE v2" "the published GID index $idx is the sysfs slot of the IPv4 RoCE v2 GID"
state=$VM_OUT/state.json
rw_fetch /api/v1/state "$state"
vm_expect_eq "$(rw_jq "$state" '.probe.ports[0] | "\(.qpn) \(.qkey) \(.gid) \(.gid_index)"')" \
	"$(rw_jq "$info" '.ports[0] | "\(.qpn) \(.qkey) \(.gid) \(.gid_index)"')" \
	"/api/v1/state (the snapshot) carries the same probe QP as /api/v1/probe"
vm_barrier serving 90

# rw_probe OUT EXPECTED_RC ARGS...: rocewatch probe -j ARGS > OUT, the exit code must be EXPECTED_RC.
rw_probe() {
	local out=$1 want=$2 rc=0
	shift 2
	vm_log "+ rocewatch probe -j $*"
	"$ROCEWATCH" probe -j --connect-timeout 3s --timeout 20s "$@" >"$out" 2>"$out.err" || rc=$?
	rw_no_sanitizer_report "$out.err" "rocewatch probe"
	[[ -s $out.err ]] && vm_log "probe stderr: $(head -c 400 "$out.err")"
	vm_expect_eq "$rc" "$want" "rocewatch probe $* exit code"
}
peer=$PEER_IP:$port
# "SIZE:SENT/RECEIVED" for every size probed towards node $1
sizes_of() { rw_jq "$1" --arg n "$2" '[.nodes[] | select(.node == $n) | .sizes[] | "\(.size):\(.sent)/\(.received)"] | join(" ")'; }

if ((GUEST_ID == 0)); then
	# 1. a healthy path
	out=$VM_OUT/probe-ok.json
	rw_probe "$out" 0 --count 20 --wait 5s "$peer"
	# the responder's own count: every request answered, nothing else arrived
	curl -sS --max-time 20 -o "$VM_OUT/peer-info-after.json" "http://$peer/api/v1/probe" ||
		vm_fail "GET http://$peer/api/v1/probe failed"
	# (guest 0's continuous probes arrive there too: at least our 60)
	got=$(rw_jq "$VM_OUT/peer-info-after.json" '.ports[0] | "\(.requests >= 60) \(.replies == .requests) \(.dropped) \(.not_probes) \(.errors)"')
	vm_expect_eq "$got" "true true 0 0 0" "the peer's responder: all requests answered, none dropped, nothing else, no errors"

	# continuous mode: every size reaches guest 1, none lost, RTTs in the histogram
	m=$VM_OUT/metrics-healthy.prom
	sent4k() { curl -sf "http://127.0.0.1:$port/metrics" >"$m" && (($(rw_metric "$m" roce_probe_sent_total peer="$peer" size=4096) >= 4)); }
	vm_wait_until 60 "4 continuous probes of 4096 bytes sent" sent4k
	for size in 64 1024 4096; do
		vm_expect_eq "$(rw_metric "$m" roce_probe_lost_total peer="$peer" size=$size)" 0 "continuous: $size-byte probes lost"
		got=$(rw_metric "$m" roce_probe_rtt_seconds_count peer="$peer" size=$size)
		((got >= 3)) || vm_fail "continuous: only $got RTTs of $size-byte probes in the histogram"
	done
	vm_expect_eq "$(rw_metric "$m" roce_probe_peer_up peer="$peer")" 1 "continuous: roce_probe_peer_up"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$m" >"$m.promtool" 2>&1 ||
			vm_fail "promtool check metrics: $(head -c 300 "$m.promtool")"
	fi
	vm_log "ok: continuous mode: $(grep -E '^roce_probe_(sent|lost)_total' "$m" | tr '\n' ' ')"
	vm_expect_eq "$(sizes_of "$out" "$peer")" "64:20/20 1024:20/20 4096:20/20" "healthy path: sent/received per size"
	got=$(rw_jq "$out" '"\(.status) \(.traffic_class) \(.timestamps) \(.local.device) \(.local.gid)"')
	vm_expect_eq "$got" "OK 106 software $dev ::ffff:$GUEST_IP" "healthy path: status, traffic class, timestamps, local port"
	got=$(rw_jq "$out" '[.nodes[0].sizes[] | .rtt | (.min_seconds > 0 and .min_seconds <= .p50_seconds and .p50_seconds <= .p99_seconds and .p99_seconds <= .max_seconds)] | all')
	vm_expect_eq "$got" true "healthy path: RTT min <= p50 <= p99 <= max, all > 0"
	got=$(rw_jq "$out" '.nodes[0].remote | "\(.gid) \(.active_mtu)"')
	vm_expect_eq "$got" "::ffff:$PEER_IP 4096" "healthy path: the peer's GID and active_mtu"
	vm_log "ok: healthy path: $(rw_jq "$out" '[.nodes[0].sizes[] | "\(.size): p50 \(.rtt.p50_seconds * 1e6 | floor) us"] | join(", ")')"

	# 2. bad peers next to a good one: a serve without --probe, garbage, a GID nobody has
	nop=9480 junk=9481 ghost=9482
	"$ROCEWATCH" serve --web.listen-address 127.0.0.1:$nop --interval 1s >"$VM_OUT/serve-noprobe.log" 2>&1 &
	side_pids+=($!)
	mkdir -p "$VM_OUT/junk/api/v1" "$VM_OUT/ghost/api/v1"
	printf 'this is not { JSON\n' >"$VM_OUT/junk/api/v1/probe"
	printf '{"version":1,"qkey":%d,"ports":[{"device":"rxe9","port":1,"gid":"::ffff:10.99.0.9","gid_index":1,"qpn":17,"qkey":%d,"active_mtu":4096}]}\n' \
		$((0x52574b31)) $((0x52574b31)) >"$VM_OUT/ghost/api/v1/probe"
	python3 -m http.server $junk --bind 127.0.0.1 -d "$VM_OUT/junk" >/dev/null 2>&1 &
	side_pids+=($!)
	python3 -m http.server $ghost --bind 127.0.0.1 -d "$VM_OUT/ghost" >/dev/null 2>&1 &
	side_pids+=($!)
	vm_wait_listening $nop 30
	vm_wait_listening $junk 30
	vm_wait_listening $ghost 30
	out=$VM_OUT/probe-mixed.json
	nobody=10.99.0.9:$port
	rw_probe "$out" 2 --count 5 --wait 2s "127.0.0.1:$nop" "127.0.0.1:$junk" "127.0.0.1:$ghost" "$nobody" "$peer"
	got=$(rw_jq "$out" '[.nodes[] | "\(.node)=\(.status)"] | join(" ")')
	vm_expect_eq "$got" "127.0.0.1:$nop=UNKNOWN 127.0.0.1:$junk=UNKNOWN 127.0.0.1:$ghost=CRITICAL $nobody=UNKNOWN $peer=OK" \
		"mixed peers: each one's status"
	e=$(rw_jq "$out" --arg n "127.0.0.1:$nop" '.nodes[] | select(.node == $n) | .error')
	[[ $e == *"without --probe"* ]] || vm_fail "serve without --probe: error does not say so: $e"
	e=$(rw_jq "$out" --arg n "127.0.0.1:$junk" '.nodes[] | select(.node == $n) | .error')
	[[ $e == *"not rocewatch probe info"* ]] || vm_fail "garbage probe info: error does not say so: $e"
	e=$(rw_jq "$out" --arg n "127.0.0.1:$ghost" '.nodes[] | select(.node == $n) | (.error // .diagnoses[0])')
	[[ $e == *unreachable* ]] || vm_fail "a GID nobody has: not called unreachable: $e"
	e=$(rw_jq "$out" --arg n "$nobody" '.nodes[] | select(.node == $n) | .error')
	[[ $e == *"cannot read"* ]] || vm_fail "an address nobody answers at: error does not say so: $e"
	vm_expect_eq "$(sizes_of "$out" "$peer")" "64:5/5 1024:5/5 4096:5/5" "mixed peers: the good one still probed"
	vm_log "ok: mixed peers: $(rw_jq "$out" '[.nodes[] | "\(.node): \(.error // .diagnoses[0])"] | join("; ")')"
	# (continuous mode keeps going meanwhile)
	for p in "${side_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	side_pids=()
	vm_mark mixed-done
else
	vm_wait_mark 0 mixed-done 180
fi

# 3. guest 1 at MTU 1500: the classic "fails only between nodes"
if ((GUEST_ID == 1)); then
	vm_run ip link set "$if" mtu 1500
	# e1000 resets on an MTU change: the link and the RoCE port go down for a moment
	vm_wait_port_active "$dev" 1 30
	vm_wait_until 10 "$dev active_mtu 1024" vm_active_mtu_is "$dev" 1024
	# the responder's published MTU follows within a rescan
	vm_wait_until 30 "/api/v1/probe to say active_mtu 1024" \
		bash -c "curl -sf http://127.0.0.1:$port/api/v1/probe | jq -en 'input | .ports[0].active_mtu == 1024'"
fi
vm_barrier mtu-1500 90
# both links up again (ping needs both ends) and this node's port back to ACTIVE
vm_wait_ping "$PEER_IP" 30
vm_wait_port_active "$dev" 1 30
out=$VM_OUT/probe-mtu.json
rw_probe "$out" 2 --count 10 --wait 3s "$peer"
e=$(rw_jq "$out" '.nodes[0].diagnoses | join(" / ")')
if ((GUEST_ID == 0)); then
	vm_expect_eq "$(sizes_of "$out" "$peer")" "64:10/10 1024:10/10 4096:10/0" "MTU 1500 on the peer: sent/received per size"
	[[ $e == *"MTU on the path"*"1024-byte probes come back, 4096-byte probes do not"*"active_mtu is 1024"* ]] ||
		vm_fail "MTU 1500 on the peer: the diagnosis does not name the MTU on the path: $e"
	# the text report says the same to a person
	txt=$VM_OUT/probe-mtu.txt rc=0
	"$ROCEWATCH" probe --count 10 --wait 3s "$peer" >"$txt" 2>"$txt.err" || rc=$?
	rw_no_sanitizer_report "$txt.err" "rocewatch probe (text)"
	vm_expect_eq "$rc $(tail -n 1 "$txt")" "2 1 node: 0 OK, 0 WARNING, 1 CRITICAL, 0 UNKNOWN: CRITICAL" "text report: exit code and summary line"
	grep -qE '^ +4096 +10 +0 +100\.0% ' "$txt" || vm_fail "text report: no 4096 row with 10 sent, 0 received: $(cat "$txt")"
	grep -qF "MTU on the path: 1024-byte probes come back, 4096-byte probes do not (the peer's RoCE active_mtu is 1024)" "$txt" ||
		vm_fail "text report: no MTU diagnosis: $(cat "$txt")"
	# continuous mode sees it too: 4096-byte probes are lost from now on, 64-byte ones not
	m=$VM_OUT/metrics-mtu.prom
	curl -sf "http://127.0.0.1:$port/metrics" >"$m" || vm_fail "GET /metrics failed"
	l4k=$(rw_metric "$m" roce_probe_lost_total peer="$peer" size=4096)
	l64=$(rw_metric "$m" roce_probe_lost_total peer="$peer" size=64)
	lost4k() { curl -sf "http://127.0.0.1:$port/metrics" >"$m" && (($(rw_metric "$m" roce_probe_lost_total peer="$peer" size=4096) >= l4k + 3)); }
	vm_wait_until 60 "3 more continuous 4096-byte probes lost" lost4k
	vm_expect_eq "$(rw_metric "$m" roce_probe_lost_total peer="$peer" size=64)" "$l64" "continuous: 64-byte probes lost meanwhile (none more)"
	vm_log "ok: continuous mode at MTU 1500 on the peer: $(grep -E '^roce_probe_lost_total' "$m" | tr '\n' ' ')"
else
	got=$(rw_jq "$out" '[.nodes[0].sizes[] | "\(.size):\(.sent_ok):\(.received)"] | join(" ")')
	vm_expect_eq "$got" "64:true:10 1024:true:10 4096:false:0" "MTU 1500 here: 4096 not sent"
	[[ $e == *"4096-byte probes cannot be sent, this port's RoCE active_mtu is 1024"* ]] ||
		vm_fail "MTU 1500 here: the diagnosis does not name this port's MTU: $e"
fi
vm_log "ok: MTU on the path: $e"
vm_barrier mtu-probed 120

# 4. loss: netem on guest 1's egress drops replies (and nothing else matters at 64 bytes)
if ((GUEST_ID == 1)); then
	vm_run ip link set "$if" mtu 9000
	vm_wait_port_active "$dev" 1 30
	vm_wait_ping "$PEER_IP" 30
	vm_run tc qdisc add dev "$if" root netem loss 20%
	vm_mark lossy
	vm_wait_mark 0 loss-probed 180
	vm_run tc qdisc del dev "$if" root
else
	vm_wait_mark 1 lossy 60
	out=$VM_OUT/probe-loss.json
	# netem drops 20 % of the peer's TCP too: its SYN-ACK may need the retransmits at
	# 1, 3 and 7 s before /api/v1/probe answers (a 3 s connect budget failed ~1 run in 8)
	rw_probe "$out" 2 --sizes 64 --count 200 --probe-interval 5ms --wait 5s \
		--connect-timeout 20s --timeout 40s "$peer"
	got=$(rw_jq "$out" '.nodes[0].sizes[0] | "\(.sent) \(.lost)"')
	read -r sent lost <<<"$got"
	vm_expect_eq "$sent" 200 "loss: probes sent"
	((lost >= 16 && lost <= 70)) || vm_fail "loss: $lost of 200 lost under netem loss 20%, expected 16-70 (8-35 %)"
	e=$(rw_jq "$out" '.nodes[0].diagnoses[0]')
	[[ $e == "loss "*"% at 64 bytes"* ]] || vm_fail "loss: the diagnosis does not say loss: $e"
	vm_log "ok: netem loss 20%: $lost of 200 lost ($e)"
	vm_mark loss-probed
fi

# 5. the device goes away under the responder and comes back
if ((GUEST_ID == 0)); then
	vm_run timeout 30 rdma link delete "$dev"
	vm_wait_until 15 "/api/v1/probe without ports" \
		bash -c "curl -sf http://127.0.0.1:$port/api/v1/probe | jq -en 'input | .ports == []'"
	rw_serve_alive
	vm_run rdma link add "$dev" type rxe netdev "$if"
	vm_wait_port_active "$dev" 1 30
	vm_wait_until 30 "/api/v1/probe with $dev again" \
		bash -c "curl -sf http://127.0.0.1:$port/api/v1/probe | jq -en 'input | .ports[0].device == \"$dev\"'"
	vm_log "ok: device removed and re-added under serve --probe"
fi
vm_barrier done 180
rw_serve_stop
vm_pass
