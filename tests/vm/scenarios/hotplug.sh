#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One guest, `rocewatch serve` running while an RDMA device goes away and comes back: first
# with `rdma link delete` / `rdma link add`, then quickly twice in a row (a poll may be in
# flight), then by deleting the netdev under it (rxe unregisters itself on NETDEV_UNREGISTER).
# serve must not crash, the port must leave /api/v1/state and /metrics and return with its
# state, and /healthz must answer 200 every time it is asked, throughout.
#
# Run alone: tests/vm/run-scenario tests/vm/scenarios/hotplug.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

dev=rxe_hp va=vhp0 vb=vhp1
port=9480
prober=""
cleanup() {
	[[ -z $prober ]] || kill "$prober" 2>/dev/null || true
	rw_serve_kill
	rdma link delete "$dev" 2>/dev/null || true
	ip link del "$va" 2>/dev/null || true
}
trap cleanup EXIT

vm_run modprobe rdma_rxe
vm_run modprobe veth
add_netdev() {
	vm_run ip link add "$va" type veth peer name "$vb"
	vm_run ip link set "$vb" up
	vm_run ip link set "$va" up
}
add_netdev
vm_run rdma link add "$dev" type rxe netdev "$va"
vm_wait_port_active "$dev" 1 30

# Configuration (the RDMA device list) every 3 s instead of every 15: a device that goes or
# comes is seen within a slow poll or two. /healthz calls serve stalled after three fast
# intervals without a poll. On this guest's one TCG vCPU with ASan a poll costs 1-2 s of CPU and
# shares the CPU with the kernel re-creating devices, the prober and the curl/jq of the waits
# below: polls of 6 s wall time were seen. A 3 s fast interval puts the stall threshold at 9 s,
# so a 503 here means serve stopped polling, not that the vCPU was busy; the waits poll once a
# second to leave serve the CPU.
VM_WAIT_PERIOD=1
rw_serve_start "$port" --interval 3s --config-interval 3s

# /healthz, asked every 0.2 s from the side while the device comes and goes.
probe_log=$VM_OUT/healthz.log
: >"$probe_log"
(
	while :; do
		if rw_http "$port" /healthz; then
			printf '%s %s\n' "$SECONDS" "$RW_HTTP_STATUS" >>"$probe_log"
		else
			printf '%s no-answer\n' "$SECONDS" >>"$probe_log"
		fi
		sleep 0.2
	done
) &
prober=$!

state=$VM_OUT/state.json metrics=$VM_OUT/metrics.txt

# The waits watch /metrics (one curl and a grep); once it has changed, /api/v1/state, rendered
# from the same model, must agree: it is read once per step, with jq.
metrics_have_dev() {
	rw_fetch /metrics "$metrics"
	grep -q "device=\"$dev\"" "$metrics"
}
metrics_lack_dev() { ! metrics_have_dev; }
# state_says: "ACTIVE" (or another state) when /api/v1/state has $dev/1, "gone" when not.
state_says() {
	rw_fetch /api/v1/state "$state"
	rw_jq "$state" --arg d "$dev" 'port($d; "1") as $p | if $p == null then "gone" else field($p; "state") end'
}

expect_present() {
	local t0=$SECONDS
	vm_wait_until 30 "$dev series on /metrics ($1)" metrics_have_dev
	[[ $(rw_metric "$metrics" roce_rdma_port_state_info device="$dev" port=1 state=ACTIVE) == 1 ]] ||
		vm_wait_until 10 "roce_rdma_port_state_info{device=\"$dev\",port=\"1\",state=\"ACTIVE\"} 1 ($1)" \
			eval '[[ $(metrics_have_dev; rw_metric "$metrics" roce_rdma_port_state_info device="$dev" port=1 state=ACTIVE) == 1 ]]'
	vm_expect_eq "$(state_says)" ACTIVE "$dev/1 in /api/v1/state ($1)"
	rw_serve_alive
	vm_log "ok: $dev/1 present and ACTIVE on /metrics and /api/v1/state ($1, $((SECONDS - t0)) s)"
}
expect_gone() {
	local t0=$SECONDS
	vm_wait_until 30 "no $dev series on /metrics ($1)" metrics_lack_dev
	vm_expect_eq "$(state_says)" gone "$dev/1 in /api/v1/state ($1)"
	rw_serve_alive
	vm_log "ok: $dev gone from /metrics and /api/v1/state ($1, $((SECONDS - t0)) s)"
}

expect_present "at start"

vm_run rdma link delete "$dev"
expect_gone "after rdma link delete"
vm_run rdma link add "$dev" type rxe netdev "$va"
vm_wait_port_active "$dev" 1 30
expect_present "after rdma link add"
# Issue 42: the same device (rxe's node GUID is its netdev's MAC) back after a config poll that
# did not find it is a reappearance, counted once.
reappeared() { rw_metric "$metrics" roce_rdma_port_reappeared_total device="$dev" port=1; }
vm_expect_eq "$(reappeared)" 1 "roce_rdma_port_reappeared_total after one delete/add"

# Twice without waiting: whatever a poll is doing, it may find the device half gone.
for i in 1 2; do
	vm_run rdma link delete "$dev"
	vm_run rdma link add "$dev" type rxe netdev "$va"
done
vm_wait_port_active "$dev" 1 30
expect_present "after two quick delete/add cycles"

# The netdev goes, and the rxe device with it.
vm_run ip link del "$va"
vm_wait_until 10 "$dev to unregister with $va" test ! -e "/sys/class/infiniband/$dev"
expect_gone "after ip link del $va"
add_netdev
vm_run rdma link add "$dev" type rxe netdev "$va"
vm_wait_port_active "$dev" 1 30
expect_present "after the netdev and the device came back"
# a new veth, a new MAC, a new node GUID: another device under the old name, not a return
vm_expect_eq "$(reappeared)" 0 "roce_rdma_port_reappeared_total of the new device"

kill "$prober"
wait "$prober" 2>/dev/null || true
prober=""
total=$(wc -l <"$probe_log")
bad=$(grep -vc ' 200$' "$probe_log" || true)
((total >= 10)) || vm_fail "only $total /healthz probes were made"
((bad == 0)) || vm_fail "/healthz was not 200 in $bad of $total probes: $(grep -v ' 200$' "$probe_log" | head -n 5 | tr '\n' ' ')"
vm_log "ok: /healthz 200 in all $total probes"

rw_serve_stop
vm_pass
