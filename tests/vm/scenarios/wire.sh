#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Two guests, soft-RoCE on each eth0, `rocewatch serve --collector.wire` on both (the BPF wire
# view at tc), and real RoCE v2 traffic between them with the DSCP perftest sets:
# ib_write_bw --tclass=106 on both sides, i.e. DSCP 26 with ECN ECT(0) in every packet's IP
# header (rxe copies the GRH traffic class into the IPv4 ToS). On each node every RoCE packet the
# wire view counts must carry DSCP 26 and ECN 2, and its counts must equal rxe's own: packets
# leaving eth0 = sent_pkts, packets arriving = rcvd_pkts (the devices are new, the counts
# start together). /api/v1/state must list DSCP 26, and only 26, as the data DSCP seen.
#
# Skips when rocewatch was built without the wire collector (no clang/bpftool/libbpf).
#
# Run alone: tests/vm/run-scenario --guests 2 tests/vm/scenarios/wire.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

[[ ${GUEST_COUNT:-1} -eq 2 ]] || vm_fail "needs two guests (run-scenario --guests 2)"

dev=rxe0 if=$GUEST_IFACE port=9479
cleanup() {
	rw_serve_kill
	rdma link delete "$dev" 2>/dev/null || true
}
trap cleanup EXIT

# A build without BPF keeps the flag and refuses it with this reason (collectors/wire_none.c).
probe=$("$ROCEWATCH" snapshot --collector.wire -o /dev/null 2>&1) || true
if [[ $probe == *"built without BPF support"* ]]; then
	vm_barrier skip-known 60
	vm_skip "rocewatch has no wire collector: ${probe//$'\n'/ }"
fi

vm_run modprobe rdma_rxe
vm_run rdma link add "$dev" type rxe netdev "$if"
vm_wait_port_active "$dev" 1 30
vm_wait_until 20 "$dev GID 1 = IPv4 GID" vm_gid_is "$dev" 1 1 "$(vm_gid_ipv4 "$GUEST_IP")"

rw_serve_start "$port" --interval 1s --config-interval 5s --collector.wire
metrics=$VM_OUT/metrics.txt
wire_attached() {
	rw_fetch /metrics "$metrics"
	[[ $(rw_metric "$metrics" rocewatch_collector_success collector=wire) == 1 ]]
}
vm_wait_until 30 "the wire collector to attach (rocewatch_collector_success{collector=\"wire\"} 1)" wire_attached
vm_barrier wire-ready 90

bw=(ib_write_bw -d "$dev" -x 1 --tclass=106 -n 50)
rc=0
if ((GUEST_ID == 0)); then
	vm_log "+ ${bw[*]} (server)"
	"${bw[@]}" >"$VM_OUT/ib_write_bw.txt" 2>&1 &
	server=$!
	vm_wait_listening 18515 30
	vm_mark server-ready
	wait "$server" || rc=$?
else
	vm_wait_mark 0 server-ready 60
	vm_log "+ ${bw[*]} $PEER_IP (client)"
	"${bw[@]}" "$PEER_IP" >"$VM_OUT/ib_write_bw.txt" 2>&1 || rc=$?
fi
((rc == 0)) || vm_fail "ib_write_bw exited $rc: $(tail -n 3 "$VM_OUT/ib_write_bw.txt" | tr '\n' ' ')"
vm_barrier traffic-done 120

stat=$VM_OUT/rdma-statistic.json
rdma -j statistic show link "$dev/1" >"$stat" || vm_fail "rdma statistic show link $dev/1 failed"
read -r sent rcvd < <(jq -r '.[0] | "\(.sent_pkts) \(.rcvd_pkts)"' "$stat")
((sent > 0 && rcvd > 0)) || vm_fail "rdma statistic shows no traffic on $dev (sent $sent, rcvd $rcvd)"

# wire_sums: "EGRESS_ALL INGRESS_ALL EGRESS_26_ECT0 INGRESS_26_ECT0" from the last /metrics.
wire_sums() {
	awk -v dev="$if" '
		/^roce_wire_packets_total\{/ && index($0, "device=\"" dev "\"") {
			dir = ($0 ~ /direction="egress"/) ? "e" : "i"
			all[dir] += $NF
			if ($0 ~ /dscp="26"/ && $0 ~ /ecn="2"/) good[dir] += $NF
		}
		END { printf "%d %d %d %d\n", all["e"], all["i"], good["e"], good["i"] }' "$metrics"
}
# The fast poll after the traffic must show every packet; wait for it rather than race it.
want="$sent $rcvd $sent $rcvd"
wire_matches() {
	rw_fetch /metrics "$metrics"
	[[ $(wire_sums) == "$want" ]]
}
deadline=$((SECONDS + 15))
until wire_matches || ((SECONDS >= deadline)); do sleep 0.5; done
vm_expect_eq "$(wire_sums)" "$want" \
	"wire packets on $if: egress, ingress, egress DSCP 26 ECT(0), ingress DSCP 26 ECT(0) (= sent_pkts, rcvd_pkts)"

state=$VM_OUT/state.json
rw_fetch /api/v1/state "$state"
vm_expect_eq "$(rw_netdev_field "$state" "$if" wire.data_dscp)" "[26]" "/api/v1/state $if wire.data_dscp"

rw_serve_stop
vm_barrier finished 60
vm_pass
