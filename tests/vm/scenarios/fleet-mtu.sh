#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Two guests ("two nodes") whose netdevs disagree on the MTU: guest 0's eth0 at 9000, guest 1's
# at 1500, soft-RoCE on both. The classic "slow only between some nodes" misconfiguration:
#  - each node's `check` must tell its own active_mtu (4096 on guest 0, 1024 on guest 1, as
#    ibv_devinfo says) and judge it (pass / fail);
#  - the two snapshots, side by side as a fleet comparison would put them, must differ in
#    exactly the netdev MTU and the RoCE active_mtu, and nowhere else that is not naturally
#    per-node (addresses, GUIDs, GIDs); the two check reports must differ in exactly the two MTU
#    rules. Guest 0 compares, through the shared results directory;
#  - with min_mtu=1500 each node's own check passes netdev_mtu: alone, neither is wrong;
#  - `rocewatch fleet check` over both guests' serve (and an address nobody answers at) fails on
#    netdev_mtu and active_mtu. One node against one is a tie, and a tie has no majority
#    (docs/rules.md, "Fleet rules"): both guests are named with their values, the 1500 guest
#    with 1500, and the verdict is CRITICAL (exit 2); the silent address is UNKNOWN by name.
#
# Run alone: tests/vm/run-scenario --guests 2 tests/vm/scenarios/fleet-mtu.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

[[ ${GUEST_COUNT:-1} -eq 2 ]] || vm_fail "needs two guests (run-scenario --guests 2)"

dev=rxe0 if=$GUEST_IFACE
cleanup() {
	rw_serve_kill
	rdma link delete "$dev" 2>/dev/null || true
	ip link set "$if" mtu 1500 2>/dev/null || true
}
trap cleanup EXIT

if ((GUEST_ID == 0)); then
	mtu=9000 active=4096 outcome=pass
else
	mtu=1500 active=1024 outcome=fail
fi

vm_run modprobe rdma_rxe
vm_run ip link set "$if" mtu "$mtu"
vm_run rdma link add "$dev" type rxe netdev "$if"
vm_wait_port_active "$dev" 1 30
vm_wait_until 10 "$dev active_mtu $active" vm_active_mtu_is "$dev" "$active"

snap=$VM_OUT/snapshot.json chk=$VM_OUT/check.json
rw_snapshot "$snap"
vm_expect_eq "$(rw_port_field "$snap" "$dev" 1 active_mtu) $(rw_netdev_field "$snap" "$if" mtu)" \
	"$(vm_active_mtu "$dev") $mtu" "snapshot $dev/1 active_mtu and $if mtu (= ibv_devinfo, ip link)"
rw_check "$chk"
rw_expect_rule "$chk" active_mtu_4096 "$outcome" "this node's check" "$dev"
[[ $RW_RULE_SUMMARY == *"active_mtu $active "* ]] ||
	vm_fail "this node's check does not tell its active_mtu $active: $RW_RULE_SUMMARY"
rw_expect_rule "$chk" netdev_mtu "$outcome" "this node's check" "$if"

vm_barrier reports-written 90

if ((GUEST_ID == 0)); then
	peer=$(vm_guest_dir 1)
	# Per-node by nature: addresses and what derives from them.
	identity='["ipv4", "node_guid", "gids"]'
	# "KIND NAME FIELD: A | B" for every field whose value or absence differs; counters and
	# collector timings are samples, not configuration, and are left out, and so are the link
	# health facts that count or rate what happened (carrier.*, fec.*, ber.*, phy.*, pcie.*:
	# a guest whose link came up twice has counted more carrier changes).
	diff=$(jq -rn --slurpfile a "$snap" --slurpfile b "$peer/snapshot.json" --argjson skip "$identity" '
		def view(o): (o.fields // {}) + ((o.absent // {}) | map_values("absent: \(.reason)"));
		def objs(s): [(s.netdevs[] | {k: "netdev \(.name)", v: view(.)}),
			      (s.rdma_ports[] | {k: "rdma_port \(.device)/\(.port)", v: view(.)}),
			      {k: "node", v: view(s.node)}];
		(objs($a[0]) | map({(.k): .v}) | add) as $x |
		(objs($b[0]) | map({(.k): .v}) | add) as $y |
		[($x | keys) + ($y | keys) | unique[] as $o |
		 (($x[$o] // {}) | keys) + (($y[$o] // {}) | keys) | unique[] as $f |
		 select(($skip | index($f)) == null) |
		 select($f | test("^(carrier|fec|ber|phy|pcie)\\.") | not) |
		 select($x[$o][$f] != $y[$o][$f]) |
		 "\($o) \($f): \($x[$o][$f] | tojson) | \($y[$o][$f] | tojson)"] | .[]')
	printf '%s\n' "$diff" >"$VM_OUT/snapshot-diff.txt"
	want="netdev $if mtu: 9000 | 1500
rdma_port $dev/1 active_mtu: 4096 | 1024"
	[[ $diff == "$want" ]] ||
		vm_fail "the two snapshots differ in [${diff//$'\n'/; }], expected exactly [${want//$'\n'/; }]"
	vm_log "ok: snapshots differ exactly in: ${diff//$'\n'/; }"

	# The check reports: which (rule, object) outcomes differ between the two nodes.
	cdiff=$(jq -rn --slurpfile a "$chk" --slurpfile b "$peer/check.json" '
		def res(s): s.results | map({("\(.rule) \(.object.device)"): .outcome}) | add;
		res($a[0]) as $x | res($b[0]) as $y |
		[($x | keys) + ($y | keys) | unique[] | select($x[.] != $y[.]) |
		 "\(.): \($x[.]) | \($y[.])"] | .[]')
	want="active_mtu_4096 $dev: pass | fail
netdev_mtu $if: pass | fail"
	[[ $cdiff == "$want" ]] ||
		vm_fail "the two check reports differ in [${cdiff//$'\n'/; }], expected exactly [${want//$'\n'/; }]"
	vm_log "ok: check reports differ exactly in: ${cdiff//$'\n'/; }"
	vm_mark compared
else
	vm_wait_mark 0 compared 60
fi

# Alone, each node passes an MTU rule that only asks for 1500.
rw_check "$VM_OUT/check-1500.json" --param min_mtu=1500
rw_expect_rule "$VM_OUT/check-1500.json" netdev_mtu pass "this node's check with min_mtu=1500" "$if"

# Between them the mismatch shows: guest 0 asks both guests' serve.
port=9479
RW_SERVE_HOST="" rw_serve_start "$port" --interval 1s
vm_barrier serving 90
if ((GUEST_ID == 0)); then
	me=$GUEST_IP:$port peer=$PEER_IP:$port nobody=10.99.0.9:$port
	fl=$VM_OUT/fleet.json frc=0
	vm_log "+ rocewatch fleet check -j $me $peer $nobody"
	"$ROCEWATCH" fleet check -j --connect-timeout 3s --timeout 20s "$me" "$peer" "$nobody" \
		>"$fl" 2>"$fl.err" || frc=$?
	rw_no_sanitizer_report "$fl.err" "rocewatch fleet check"
	vm_expect_eq "$frc" 2 "fleet check exit code (CRITICAL)"
	# "RULE: VALUE@NODE ..." for every failing rule, values sorted; and the unknown nodes
	got=$(rw_jq "$fl" '[.results[] | select(.outcome == "fail") |
		"\(.rule): majority=\(.majority.value // "none") \([.outliers[] | "\(.value)@\(.node)"] | sort | join(" "))"] | join("; ")')
	want="netdev_mtu: majority=none 1500@$peer 9000@$me; active_mtu: majority=none 1024@$peer 4096@$me"
	vm_expect_eq "$got" "$want" "fleet check: failing rules, majority and named nodes"
	got=$(rw_jq "$fl" '[.nodes[] | select(.state == "unknown") | .name] | join(" ")')
	vm_expect_eq "$got" "$nobody" "fleet check: the address nobody answers at is UNKNOWN"
	got=$(rw_jq "$fl" '[.results[] | select(.rule == "netdev_mtu") | .detail] | .[0]')
	vm_expect_eq "$got" "no majority: $peer 1500, $me 9000" "fleet check: netdev_mtu line"
	vm_mark fleet-checked
else
	vm_wait_mark 0 fleet-checked 120
fi
rw_serve_stop
vm_pass
