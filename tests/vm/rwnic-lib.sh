# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# A whole RoCE port in the guest's real kernel for the rwnic scenarios: the test-only rwnic
# module (tests/vm/rwnic/README.md) gives rwnic0 <-> rwnic1, soft-RoCE goes on rwnic0, and
# iproute2's `dcb`, `ethtool` and rdma_cm's configfs configure it the way the lossless-roce
# profile wants (its defaults: RoCE on priority 3 / DSCP 26, CNPs on 6 / 48, MTU >= 4200).
# Source after guest-lib.sh and rw-lib.sh; the scenario itself calls vm_rwnic_load first (that
# is what makes run-scenario build the module).

RWN_IF=rwnic0 RWN_PEER=rwnic1 RWN_DEV=rxe_rw RWN_IP=10.98.7.1
RWN_CM=/sys/kernel/config/rdma_cm/$RWN_DEV

# rwn_cleanup: for the scenario's EXIT trap; must not fail. Unloading rwnic resets every
# setting and counter, so the next scenario of a sequence starts from the module's defaults.
rwn_cleanup() {
	rw_serve_kill
	rmdir "$RWN_CM" 2>/dev/null || true
	rdma link delete "$RWN_DEV" 2>/dev/null || true
	rmmod rwnic 2>/dev/null || true
}

# rwn_port_up: rxe on rwnic0 at MTU 9000 (active_mtu 4096), ACTIVE, with its IPv4 GID.
rwn_port_up() {
	vm_run modprobe rdma_rxe
	vm_run modprobe rdma_cm
	ip -batch - <<EOF || vm_fail "configuring $RWN_IF/$RWN_PEER failed"
link set $RWN_IF mtu 9000
link set $RWN_PEER mtu 9000
addr add $RWN_IP/24 dev $RWN_IF
link set $RWN_PEER up
link set $RWN_IF up
EOF
	vm_run rdma link add "$RWN_DEV" type rxe netdev "$RWN_IF"
	vm_wait_port_active "$RWN_DEV" 1 30
	vm_wait_until 20 "$RWN_DEV GID 1 = IPv4 GID" vm_gid_is "$RWN_DEV" 1 1 "$(vm_gid_ipv4 "$RWN_IP")"
	vm_wait_until 20 "$RWN_DEV active_mtu 4096" vm_active_mtu_is "$RWN_DEV" 4096
}

# rwn_dcb ARGS...: `dcb ARGS`, a command that writes, as vm_run runs it. iproute2 6.1's dcb
# (Debian 12's; fixed in 6.2 by d0e02f35, "dcb: Do not leave ACKs in socket receive buffer")
# asks every request with NLM_F_ACK but stops at the answer, leaving the ACK unread: a command
# that reads before it writes (pfc, ets, buffer and maxrate set, app replace) then takes the
# read's ACK for the write's answer. Both requests carry time(NULL) as their sequence number:
# within one second the stale ACK passes as the answer (the write is done, its own answer is
# never read); when the second ticks in between, libmnl refuses it as another request's
# (EPROTO) and dcb says "Attribute write: Protocol error" although the kernel has applied the
# write. A slow guest (a loaded host) crosses the second more often; neither the kernel nor
# rwnic is involved. Such a failure runs the command again: each computes what it writes from
# a fresh read, so once more changes nothing that is already set. What the writes leave is
# read back with dcb show and compared (the scenarios), never taken on dcb's word.
rwn_dcb() {
	local out attempt
	vm_log "+ dcb $*"
	for attempt in 1 2 3; do
		if out=$(dcb "$@" 2>&1); then
			[[ -z $out ]] || printf '%s\n' "$out" >&2
			return 0
		fi
		[[ $out == *"Attribute write: Protocol error"* ]] ||
			vm_fail "'dcb $*' failed: ${out//$'\n'/ / }"
		vm_log "dcb $* (attempt $attempt): $out: iproute2 6.1's unread ACK across a second"
	done
	vm_fail "'dcb $*' failed 3 times: ${out//$'\n'/ / }"
}

# rwn_configure_lossless: what the lossless-roce profile asks of a node, through the tools an
# operator uses. (Not one `dcb -b` batch: there iproute2 6.1's unread ACK, see rwn_dcb, fails
# the second command with "Attribute not found".)
rwn_configure_lossless() {
	rwn_dcb pfc set dev "$RWN_IF" prio-pfc all:off 3:on delay 4096
	rwn_dcb ets set dev "$RWN_IF" tc-tsa all:strict 0:ets 1:ets tc-bw all:0 0:40 1:60 \
		prio-tc all:0 3:1 6:2
	rwn_dcb app add dev "$RWN_IF" dscp-prio 26:3 48:6
	rwn_dcb buffer set dev "$RWN_IF" prio-buffer all:0 3:1 6:2 \
		buffer-size all:0 0:256K 1:512K 2:64K
	rwn_dcb maxrate set dev "$RWN_IF" tc-maxrate all:0 2:25Gbit
	rwn_dcb dcbx set dev "$RWN_IF" host ieee
	vm_run ethtool --set-tunable "$RWN_IF" pfc-prevention-tout 500
	vm_run ethtool -A "$RWN_IF" autoneg off rx off tx off
	# rdma_cm's default ToS for the port: 106 = DSCP 26 << 2 | ECT(0)
	[[ -d $RWN_CM ]] || mkdir "$RWN_CM" || vm_fail "mkdir $RWN_CM failed"
	echo 106 >"$RWN_CM/ports/1/default_roce_tos" || vm_fail "setting $RWN_CM default_roce_tos failed"
}

# rwn_failing CHECK_JSON: "rule=outcome" for every result that neither passed nor was skipped,
# sorted, space-separated (empty when all is well).
rwn_failing() {
	rw_jq "$1" '[.results[] | select(.outcome != "pass" and .outcome != "skip") |
		"\(.rule)=\(.outcome)"] | sort | join(" ")'
}

# rwn_expect_failing WHAT EXPECTED [CHECK ARGS...]: run check with the lossless-roce profile
# and fail unless exactly the EXPECTED results (rwn_failing's form) fail.
rwn_expect_failing() {
	local what=$1 want=$2 chk got
	shift 2
	chk=$VM_OUT/check-${what//[^a-z0-9]/-}.json
	rw_check "$chk" --profile lossless-roce "$@"
	got=$(rwn_failing "$chk")
	[[ $got == "$want" ]] ||
		vm_fail "$what: check's failing rules are '${got:-none}', expected '${want:-none}'"
	if [[ -z $want ]]; then
		[[ $RW_CHECK_RC == 0 ]] || vm_fail "$what: nothing fails but check exited $RW_CHECK_RC"
	else
		[[ $RW_CHECK_RC != 0 ]] || vm_fail "$what: '$want' fails but check exited 0"
	fi
	vm_log "ok: $what: failing: ${got:-none} (exit $RW_CHECK_RC)"
}
