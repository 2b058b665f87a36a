#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One guest, soft-RoCE on a veth, after real RDMA traffic (ib_write_bw over the port's own
# IPv4-mapped RoCE v2 GID). Every hw counter rocewatch reports for the port, in its snapshot
# and on /metrics, must equal `rdma -j statistic show` for that port, and rocewatch must report
# every counter the kernel has; the port state and the GID table (with types and netdevs) must
# equal sysfs and `ibv_devinfo -v`, and the RoCE v2 IPv4 GID index must be the slot that holds
# the IPv4-mapped GID of the netdev's address.
#
# Run alone: tests/vm/run-scenario tests/vm/scenarios/counters.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

dev=rxe_cnt va=vcnt0 vb=vcnt1 ip=10.98.2.1
cleanup() {
	rw_serve_kill
	rdma link delete "$dev" 2>/dev/null || true
	ip link del "$va" 2>/dev/null || true
}
trap cleanup EXIT

vm_run modprobe rdma_rxe
vm_run modprobe veth
vm_run ip link add "$va" type veth peer name "$vb"
vm_run ip addr add "$ip/24" dev "$va"
vm_run ip link set "$vb" up
vm_run ip link set "$va" up
vm_run rdma link add "$dev" type rxe netdev "$va"
vm_wait_port_active "$dev" 1 30
gid=$(vm_gid_ipv4 "$ip")
vm_wait_until 20 "$dev GID 1 = $gid" vm_gid_is "$dev" 1 1 "$gid"

# Traffic: server and client in this guest, both on $dev (perftest's -x 1: the IPv4 GID).
bw=(ib_write_bw -d "$dev" -x 1 -n 200)
vm_log "+ ${bw[*]} (server, then client to $ip)"
"${bw[@]}" >"$VM_OUT/ib_write_bw-server.txt" 2>&1 &
server=$!
vm_wait_listening 18515 30
rc=0 rcs=0
"${bw[@]}" "$ip" >"$VM_OUT/ib_write_bw-client.txt" 2>&1 || rc=$?
wait "$server" || rcs=$?
vm_perftest_ran "$rc" "$VM_OUT/ib_write_bw-client.txt" "$VM_OUT/ib_write_bw-server.txt" ||
	vm_fail "ib_write_bw exited $rc: $(tail -n 3 "$VM_OUT/ib_write_bw-client.txt" | tr '\n' ' ')"
vm_perftest_ran "$rcs" "$VM_OUT/ib_write_bw-server.txt" "$VM_OUT/ib_write_bw-client.txt" ||
	vm_fail "ib_write_bw (server) exited $rcs: $(tail -n 3 "$VM_OUT/ib_write_bw-server.txt" | tr '\n' ' ')"

# The port is quiet from here on: rocewatch and rdma read the same numbers.
snap=$VM_OUT/snapshot.json stat=$VM_OUT/rdma-statistic.json
rw_snapshot "$snap"
rdma -j statistic show link "$dev/1" >"$stat" || vm_fail "rdma statistic show link $dev/1 failed"

# Both directions: names only one side has, and values that differ.
diff=$(rw_jq "$snap" --arg d "$dev" --slurpfile r "$stat" '
	(port($d; "1").counters.hw // {}) as $hw |
	($r[0][0] | del(.ifname, .port)) as $ref |
	([$ref | keys[] | select(. as $k | $hw | has($k) | not) | "missing \(.)"] +
	 [$hw | keys[] | select(. as $k | $ref | has($k) | not) | "extra \(.)"] +
	 [$ref | to_entries[] | select($hw[.key] != null and $hw[.key] != .value) |
	  "\(.key) rocewatch \($hw[.key]) rdma \(.value)"]) | join(", ")')
[[ -z $diff ]] || vm_fail "snapshot counters.hw of $dev/1 differ from rdma statistic: $diff"
summary=$(jq -r '.[0] | del(.ifname, .port) | "\(length) counters, sent_pkts \(.sent_pkts), rcvd_pkts \(.rcvd_pkts)"' "$stat")
vm_log "ok: snapshot counters.hw = rdma statistic ($summary)"
# 200 x 64 KiB at MTU 1024 is at least 12800 packets each way; a number that small means the
# traffic did not go through this port and the comparison above proved little.
sent=$(jq '.[0].sent_pkts' "$stat")
((sent >= 12800)) || vm_fail "rdma statistic sent_pkts is $sent after ib_write_bw (expected >= 12800)"

# Port state: sysfs "4: ACTIVE" / "5: LinkUp", ibv_devinfo "PORT_ACTIVE (4)" / "LINK_UP (5)".
read -r _ state </sys/class/infiniband/$dev/ports/1/state
read -r _ phys </sys/class/infiniband/$dev/ports/1/phys_state
ibv=$VM_OUT/ibv_devinfo.txt
rw_ibv_port "$dev" 1 "$ibv"
[[ $(rw_ibv_attr "$ibv" state) == PORT_${state} ]] ||
	vm_fail "sysfs state '$state' but ibv_devinfo '$(rw_ibv_attr "$ibv" state)'"
got=$(rw_jq "$snap" --arg d "$dev" '[field(port($d; "1"); "state"), field(port($d; "1"); "phys_state"),
	field(port($d; "1"); "link_layer")] | join(" ")')
vm_expect_eq "$got" "$state $phys $(rw_ibv_attr "$ibv" link_layer)" \
	"snapshot $dev/1 state, phys_state, link_layer (= sysfs, ibv_devinfo)"

# GID table: rocewatch = sysfs (index, gid, type, netdev) = ibv_devinfo -v (index, gid, type).
sysfs_gids=$(rw_sysfs_gids "$dev" 1)
[[ -n $sysfs_gids ]] || vm_fail "sysfs shows no GIDs for $dev/1"
rw_gids=$(rw_jq "$snap" --arg d "$dev" '
	field(port($d; "1"); "gids") | if type == "array" then
	  (sort_by(.index)[] | "\(.index) \(.gid) \(.type) \(.netdev)") else . end')
[[ $rw_gids == "$sysfs_gids" ]] ||
	vm_fail "snapshot gids of $dev/1 differ from sysfs: rocewatch [${rw_gids//$'\n'/; }] sysfs [${sysfs_gids//$'\n'/; }]"
ibv_gids=$(rw_ibv_gids "$ibv" | sort -n)
# sysfs lines are "INDEX GID RoCE v2 NETDEV"; ibv_devinfo has no netdev.
[[ $ibv_gids == "$(cut -d' ' -f1-4 <<<"$sysfs_gids")" ]] ||
	vm_fail "ibv_devinfo GIDs [${ibv_gids//$'\n'/; }] differ from sysfs [${sysfs_gids//$'\n'/; }]"
vm_log "ok: snapshot GID table = sysfs = ibv_devinfo: ${rw_gids//$'\n'/; }"

# The RoCE v2 IPv4 GID index is the sysfs slot holding the netdev address's mapped GID.
want=$(awk -v g="$gid" '$2 == g && $3 == "RoCE" && $4 == "v2" { print $1; exit }' <<<"$sysfs_gids")
[[ -n $want ]] || vm_fail "sysfs has no RoCE v2 GID $gid for $dev/1"
vm_expect_eq "$(rw_port_field "$snap" "$dev" 1 gid.rocev2_ipv4_index)" "$want" \
	"snapshot $dev/1 gid.rocev2_ipv4_index (sysfs slot of $gid, RoCE v2)"

# /metrics: the same counters through the exporter.
rw_serve_start 9479 --interval 1s
metrics=$VM_OUT/metrics.txt
rw_fetch /metrics "$metrics"
rw_hw_metrics_match "$stat" "$metrics" "$dev"
rw_serve_stop

vm_pass
