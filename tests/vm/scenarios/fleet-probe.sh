#!/bin/bash
# SPDX-License-Identifier: MIT
#
# rocewatch fleet probe over real verbs (issue 37): two or three guests (three: guest 0's br0
# switches between the others), two soft-RoCE ports each, each port on a rail of its own (two
# macvlan devices on the guest's link, each with its own MAC and subnet, rails from the GIDs'
# subnets 10.10.0.0/24 and 10.20.0.0/24: rxe refuses 802.1Q VLAN devices),
# `serve --probe --web.enable-probe-api` on each; guest 0 runs the plan (rate 100 probes/s a port, 3 s lead: a TCG guest posts slowly;
# --paths 0: rxe takes the UDP source port from the QP, not the flow label), the pairs inside
# each host included.  In turn:
#  1. clean: every rail pair and every pair inside the hosts answers, no finding, exit 0;
#  2. guest 1's rail-20 port drops everything it sends (netem loss 100% on eth0.20): node_rail
#     on rail 10.20.0.0/24, exit 2: with three nodes guest 1 alone (its peers answer each
#     other), with two both (either end);
#  3. guest 1 drops frames over 1600 bytes on eth0.10: 64 and 1024 pass, 4096 does not:
#     path_mtu on rail 10.10.0.0/24, exit 2, guest 1 alone with three nodes;
#  4. the rails are not joined: every guest drops what one rail sends to the other's subnet
#     (a filter on each macvlan): every cross-rail pair inside the hosts is lost, the rail
#     pairs pass: rail_only on both rails, every node, critical under --cross-nic, exit 2.
# A pair inside a host: soft-RoCE sends a packet for a local address of another of its devices
# on lo, where no rxe listens (and the kernel resolves its address handle's MAC through lo).
# Here each guest routes rail 10's address to rail 20's and back out of the sending macvlan
# (policy rules ahead of the local table, for what this host sends only: iif lo), to a static
# neighbour with the other macvlan's MAC; macvlan's bridge mode hands the frame to that macvlan,
# which takes a frame from its own host's address (accept_local=1, rp_filter=0), and rxe finds
# its device by the receiving netdev.  A fault drops cross-rail frames with a classifier of a
# prio qdisc (dropped as sent: a clsact drop reports NET_XMIT_DROP, which rxe retries for ever).
#
# Run alone: tests/vm/run-scenario --guests 3 --timeout 420 tests/vm/scenarios/fleet-probe.sh
# (meson's vm-fleet-probe; --guests 2 runs the two-node shape)

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

((${GUEST_COUNT:-1} >= 2)) || vm_fail "needs two or three guests (run-scenario --guests 2|3)"

if=$GUEST_IFACE port=9479 guests=$GUEST_COUNT
me=$((GUEST_ID + 1))
nodes=("$GUEST_IP:$port")
for p in $PEER_IPS; do nodes+=("$p:$port"); done
cleanup() {
	rw_serve_kill
	for v in 10 20; do
		tc qdisc del dev "$if.$v" root 2>/dev/null || true
		rdma link delete "rxe_r$v" 2>/dev/null || true
		ip link delete "$if.$v" 2>/dev/null || true
	done
	ip link set "$if" mtu 1500 2>/dev/null || true
	ip rule del pref 10 2>/dev/null || true
	ip rule del pref 11 2>/dev/null || true
	ip rule add pref 0 lookup local 2>/dev/null && ip rule del pref 100 lookup local 2>/dev/null
	ip route flush table 110 2>/dev/null || true
	ip route flush table 120 2>/dev/null || true
}
trap cleanup EXIT

vm_run modprobe rdma_rxe
modprobe macvlan 2>/dev/null || true
# two interfaces on one L2: each answers ARP for its own address only (no ARP flux, else a
# rail's probes reach the other rail's port)
vm_run sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
vm_run ip link set "$if" mtu 9000
for v in 10 20; do
	vm_run ip link add link "$if" name "$if.$v" address "52:54:00:$v:00:0$me" type macvlan mode bridge
	vm_run ip link set "$if.$v" mtu 9000 up
	vm_run ip addr add "10.$v.0.$me/24" dev "$if.$v"
	vm_run rdma link add "rxe_r$v" type rxe netdev "$if.$v"
done
# the pairs inside this host over the macvlans' bridge, not lo (see the top)
vm_run ip rule add pref 100 lookup local
vm_run ip rule del pref 0 lookup local
vm_run ip rule add pref 10 from "10.10.0.$me" to "10.20.0.$me" iif lo lookup 110
vm_run ip rule add pref 11 from "10.20.0.$me" to "10.10.0.$me" iif lo lookup 120
vm_run ip route add "10.20.0.$me" dev "$if.10" table 110
vm_run ip route add "10.10.0.$me" dev "$if.20" table 120
vm_run ip neigh replace "10.20.0.$me" lladdr "52:54:00:20:00:0$me" nud permanent dev "$if.10"
vm_run ip neigh replace "10.10.0.$me" lladdr "52:54:00:10:00:0$me" nud permanent dev "$if.20"
# (sysctl takes a dot as a path separator: eth0.10 is written to /proc)
for c in all "$if.10" "$if.20"; do
	echo 1 >"/proc/sys/net/ipv4/conf/$c/accept_local"
	echo 0 >"/proc/sys/net/ipv4/conf/$c/rp_filter"
done
vm_log "inside the host: $(ip route get "10.20.0.$me" from "10.10.0.$me" | head -1)"
# rails_apart add|del: drop what each rail sends to the other rail's subnet
rails_apart() {
	local v w
	for v in 10 20; do
		w=$((30 - v))
		if [[ $1 == add ]]; then
			vm_run tc qdisc add dev "$if.$v" root handle 1: prio
			vm_run tc filter add dev "$if.$v" parent 1: protocol ip flower dst_ip "10.$w.0.0/24" action drop
		else
			vm_run tc qdisc del dev "$if.$v" root
		fi
	done
}

for v in 10 20; do
	vm_wait_port_active "rxe_r$v" 1 30
	vm_wait_until 10 "rxe_r$v active_mtu 4096" vm_active_mtu_is "rxe_r$v" 4096
done

# one clock for the plan's common start: the host's, read as the mtime of a file just touched
# on the results share (TCG guests boot up to a second apart)
touch "$VM_OUT/clock"
vm_run date -s "@$(stat -c %.9Y "$VM_OUT/clock")"
RW_SERVE_HOST="" rw_serve_start "$port" --interval 10s --probe --web.enable-probe-api
info=$VM_OUT/probe-info.json
got_ports() { rw_fetch /api/v1/probe "$info" && [[ $(rw_jq "$info" '[.ports[] | select(.rail)] | length') == 2 ]]; }
vm_wait_until 30 "/api/v1/probe lists both ports with their rails" got_ports
vm_log "probe ports: $(rw_jq "$info" -c '[.ports[] | {device, rail, role, state, active_mtu}]')"
vm_barrier serving 120

# fp NAME WANT_RC [ARG...]: fleet probe -j ARG... of both guests into $VM_OUT/fp-NAME.json, its
# exit code WANT_RC
fp() {
	local out=$VM_OUT/fp-$1.json rc=0 name=$1 want=$2
	shift 2
	vm_log "+ rocewatch fleet probe -j ${nodes[*]} ($name)"
	# slow enough for TCG guests: 100 probes a second a port (a probe not sent within a slot of
	# its time is late and not sent: a slot is 60 ms here; a TCG guest's thread wakes 30-100 ms
	# late now and then, which at 200 left whole pairs untested), 3 s to hand out the slices
	# rxe takes the UDP source port from the QP, not the flow label: --paths 0 (and one address
	# handle a pair, which a TCG guest creates slowly)
	local try
	for try in 1 2; do
		rc=0
		"$ROCEWATCH" fleet probe -j --connect-timeout 3s --timeout 20s --budget 60s --rate 100 \
			--lead 3s --paths 0 "$@" \
			"${nodes[@]}" >"$out" 2>"$out.err" || rc=$?
		rw_no_sanitizer_report "$out.err" "rocewatch fleet probe"
		# inconclusive, not wrong: a guest's probe thread held up past both passes leaves
		# pairs untested (UNKNOWN, each node saying so); such a run is run again, once
		((rc == 3)) && [[ $(rw_jq "$out" -r '[.unknown[] | select(.error | test("pairs untested") | not)] | length') == 0 ]] ||
			break
		vm_log "$name: inconclusive (try $try): $(rw_jq "$out" -c '.unknown')"
	done
	[[ -s $out.err ]] && vm_log "fleet probe stderr: $(head -c 400 "$out.err")"
	vm_log "$name: exit $rc, findings $(rw_jq "$out" -c '[.findings[] | {class, rails, nodes, action}]')"
	vm_log "$name: pairs $(rw_jq "$out" -c '.pairs | {tested, ok, lost, mtu, paths, inside_hosts: .inside_hosts.lost, loopback: .loopback.lost}')"
	for n in "$GUEST_IP" $PEER_IPS; do
		curl -sS --max-time 10 -o "$VM_OUT/after-$name-$n.json" "http://$n:$port/api/v1/probe" || true
		vm_log "$name: $n responder: $(rw_jq "$VM_OUT/after-$name-$n.json" -c '[.ports[] | {device, requests, replies, dropped, not_probes, errors}]')"
		vm_log "$name: $n address handles: $(rw_jq "$VM_OUT/after-$name-$n.json" -c '.plan.address_handles')"
	done
	vm_log "$name: address handles, all nodes: $(rw_jq "$out" -c '.address_handles')"
	# a host_path warning alone is WARNING (1): a TCG guest's loopback round trips differ
	# tenfold with its scheduling (see found() below), which says nothing of the fabric
	if ((want == 0 && rc == 1)) &&
		[[ $(rw_jq "$out" -r '[.findings[] | select(.class != "host_path" or .severity != "warning")] | length') == 0 ]]; then
		vm_log "$name: exit 1 for host_path warnings alone, taken as 0"
		rc=0
	fi
	vm_expect_eq "$rc" "$want" "fleet probe ($name): exit code"
}
# the classes and rails found, "class@rail,rail ...", but host_path warnings: a TCG guest's
# loopback round trips differ tenfold with its scheduling (slow-loopback is judged against the
# fleet's median), which says nothing of a rail
found() {
	rw_jq "$VM_OUT/fp-$1.json" -r '[.findings[] | select(.class != "host_path" or .severity != "warning")
		| "\(.class)@\(.rails | join(","))"] | join(" ")'
}

# what N nodes of two rails have: rail pairs (the full mesh), loopbacks, pairs inside the hosts
rail_pairs=$((2 * guests * (guests - 1))) ports=$((2 * guests))
# node_name ID: guest ID as fleet probe names it
node_name() { printf '10.99.0.%d:%s\n' $(($1 + 1)) "$port"; }
# named NAME CLASS: the nodes of CLASS's findings in fp-NAME.json, one line
named() {
	rw_jq "$VM_OUT/fp-$1.json" -r "[.findings[] | select(.class == \"$2\") | .nodes[]] | unique | join(\" \")"
}
if ((GUEST_ID == 0)); then
	"$ROCEWATCH" probe -j --count 5 --timeout 20s "$PEER_IP:$port" >"$VM_OUT/probe-one.json" 2>&1 || true
	vm_log "probe (one path): $(rw_jq "$VM_OUT/probe-one.json" -c '[.nodes[] | .sizes[] | "\(.size):\(.sent)/\(.received)"]')"
	fp clean 0
	vm_expect_eq "$(found clean)" "" "clean: no finding"
	vm_expect_eq "$(rw_jq "$VM_OUT/fp-clean.json" '.pairs | "\(.tested) \(.ok) \(.loopback.tested) \(.loopback.ok)"')" \
		"$rail_pairs $rail_pairs $ports $ports" "clean: the $rail_pairs rail pairs and the $ports loopbacks answer"
	vm_expect_eq "$(rw_jq "$VM_OUT/fp-clean.json" '.pairs.inside_hosts | "\(.tested) \(.ok)"')" \
		"$ports $ports" "clean: the $ports cross-rail pairs inside the hosts answer"
	vm_mark clean
	vm_wait_mark 1 rail-dead 60
	fp rail-dead 2
	if ((guests == 2)); then
		vm_expect_eq "$(found rail-dead)" "node_rail@10.20.0.0/24 node_rail@10.20.0.0/24" \
			"rail 20 dead on guest 1: node_rail on that rail (either end of two)"
	else
		vm_expect_eq "$(found rail-dead)" "node_rail@10.20.0.0/24" \
			"rail 20 dead on guest 1: one node_rail on that rail"
		vm_expect_eq "$(named rail-dead node_rail)" "$(node_name 1)" \
			"rail 20 dead on guest 1: node_rail names guest 1 alone"
	fi
	vm_mark rail-dead-done
	vm_wait_mark 1 mtu 60
	fp mtu 2
	if ((guests == 2)); then
		vm_expect_eq "$(found mtu)" "path_mtu@10.10.0.0/24 path_mtu@10.10.0.0/24" \
			"frames over 1600 dropped on rail 10: path_mtu on that rail (either end of two)"
	else
		vm_expect_eq "$(found mtu)" "path_mtu@10.10.0.0/24" \
			"frames over 1600 dropped on rail 10: one path_mtu on that rail"
		vm_expect_eq "$(named mtu path_mtu)" "$(node_name 1)" \
			"frames over 1600 dropped on guest 1's rail 10: path_mtu names guest 1 alone"
	fi
	vm_mark mtu-done
	for ((j = 1; j < guests; j++)); do
		vm_wait_mark "$j" rails-apart 60
	done
	rails_apart add
	fp rails-apart 2 --cross-nic
	vm_expect_eq "$(found rails-apart)" "rail_only@10.10.0.0/24,10.20.0.0/24" \
		"rails not joined: rail_only on both rails"
	vm_expect_eq "$(rw_jq "$VM_OUT/fp-rails-apart.json" -r '[.findings[] | select(.class == "rail_only") | .severity, (.nodes | length)] | join(" ")')" \
		"critical $guests" "rails not joined: critical under --cross-nic, all $guests nodes named"
	vm_expect_eq "$(rw_jq "$VM_OUT/fp-rails-apart.json" '.pairs | "\(.tested) \(.ok) \(.inside_hosts.tested) \(.inside_hosts.lost)"')" \
		"$rail_pairs $rail_pairs $ports $ports" "rails not joined: the rail pairs pass, the $ports pairs inside the hosts are lost"
	rails_apart del
	vm_mark rails-apart-done
elif ((GUEST_ID == 1)); then
	vm_wait_mark 0 clean 240
	vm_run tc qdisc add dev "$if.20" root netem loss 100%
	vm_mark rail-dead
	vm_wait_mark 0 rail-dead-done 120
	vm_run tc qdisc del dev "$if.20" root
	vm_run tc qdisc add dev "$if.10" root handle 1: prio
	vm_run tc filter add dev "$if.10" parent 1: protocol all basic match "meta(pkt_len gt 1600)" action drop
	vm_mark mtu
	vm_wait_mark 0 mtu-done 120
	vm_run tc qdisc del dev "$if.10" root
	rails_apart add
	vm_mark rails-apart
	vm_wait_mark 0 rails-apart-done 120
	rails_apart del
else
	vm_wait_mark 0 mtu-done 360
	rails_apart add
	vm_mark rails-apart
	vm_wait_mark 0 rails-apart-done 120
	rails_apart del
fi
rw_serve_stop
vm_pass "fleet probe over soft-RoCE rails"
