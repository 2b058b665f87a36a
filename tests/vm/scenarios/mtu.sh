#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One guest, soft-RoCE on a veth. At netdev MTU 1500 the kernel gives the RoCE port an
# active_mtu of 1024 (IB MTUs are 256..4096 and the RoCE headers must fit); at 9000 it is 4096.
# rocewatch's snapshot must say what ibv_devinfo says, and the lossless profile's MTU rule must
# fail at 1500 and pass at 9000: the rule is only worth something if it follows the kernel.
#
# Run alone: tests/vm/run-scenario tests/vm/scenarios/mtu.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

dev=rxe_mtu va=vmtu0 vb=vmtu1
cleanup() {
	rdma link delete "$dev" 2>/dev/null || true
	ip link del "$va" 2>/dev/null || true
}
trap cleanup EXIT

vm_run modprobe rdma_rxe
vm_run modprobe veth
vm_run ip link add "$va" mtu 1500 type veth peer name "$vb" mtu 1500
vm_run ip addr add 10.98.1.1/24 dev "$va"
vm_run ip link set "$vb" up
vm_run ip link set "$va" up
vm_run rdma link add "$dev" type rxe netdev "$va"
vm_wait_port_active "$dev" 1 30

# step MTU EXPECTED_ACTIVE_MTU EXPECTED_OUTCOME
step() {
	local mtu=$1 want=$2 outcome=$3 snap=$VM_OUT/snapshot-$1.json chk=$VM_OUT/check-$1.json
	local ibv=$VM_OUT/ibv_devinfo-$1.txt ref got res

	rw_ibv_port "$dev" 1 "$ibv"
	ref=$(rw_ibv_attr "$ibv" active_mtu)
	vm_expect_eq "$ref" "$want" "ibv_devinfo active_mtu at netdev MTU $mtu"

	rw_snapshot "$snap"
	got=$(rw_jq "$snap" --arg d "$dev" --arg n "$va" \
		'[field(port($d; "1"); "active_mtu"), field(port($d; "1"); "max_mtu"),
		  field(port($d; "1"); "netdev_name"), field(netdev($n); "mtu")] | map(tostring) | join(" ")')
	vm_expect_eq "$got" "$ref $(rw_ibv_attr "$ibv" max_mtu) $va $mtu" \
		"snapshot $dev/1 active_mtu, max_mtu, netdev_name and $va mtu (= ibv_devinfo, ip link)"

	# The lossless profile judges the MTU twice: the netdev's (netdev_mtu, >= 4200) and the
	# port's (active_mtu_4096); active_mtu_consistent recomputes the kernel's iboe_get_mtu()
	# from the netdev MTU, so its pass at both MTUs says rocewatch's formula is the kernel's.
	rw_check "$chk"
	rw_expect_rule "$chk" netdev_mtu "$outcome" "check at netdev MTU $mtu" "$va"
	rw_expect_rule "$chk" active_mtu_4096 "$outcome" "check at netdev MTU $mtu" "$dev"
	[[ $RW_RULE_SUMMARY == *"active_mtu $want "* ]] ||
		vm_fail "active_mtu_4096 summary does not tell the active_mtu $want: $RW_RULE_SUMMARY"
	rw_expect_rule "$chk" active_mtu_consistent pass "check at netdev MTU $mtu" "$dev"
	# The exit code is the report's; a failing critical rule makes it CRITICAL.
	vm_expect_eq "$(rw_jq "$chk" '.exit_code')" "$RW_CHECK_RC" "check exit code = its JSON exit_code"
	if [[ $outcome == fail ]]; then
		vm_expect_eq "$RW_CHECK_RC" 2 "check exit code with netdev_mtu (critical) failing"
	fi
}

step 1500 1024 fail

vm_run ip link set "$vb" mtu 9000
vm_run ip link set "$va" mtu 9000
# rxe follows NETDEV_CHANGEMTU from a notifier; give it a moment rather than racing it.
vm_wait_until 10 "$dev active_mtu 4096" vm_active_mtu_is "$dev" 4096
step 9000 4096 pass

vm_pass
