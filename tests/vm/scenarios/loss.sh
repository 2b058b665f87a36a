#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Two guests ("two nodes") on an e1000 link, soft-RoCE on each eth0, `rocewatch serve` on both.
#  - The e1000's real 802.3x pause setting (ethtool -a: RX on) must be what rocewatch reports,
#    and the lossless profile's global_pause_off rule must fail on eth0, in `check` and in
#    serve's /api/v1/checks.
#  - Then `tc netem loss` on guest 1's egress while guest 1 writes to guest 0 (ib_write_bw):
#    guest 0 (responder) sees requests out of sequence, guest 1 (requester) receives sequence
#    error NAKs. On each node the counter rule that watches its counter must go from pass to fail
#    while serve runs, well within its 5 minute window, with the increase it reports equal to
#    what `rdma statistic` says; every hw counter on /metrics must equal rdma statistic's.
#
# Run alone: tests/vm/run-scenario --guests 2 tests/vm/scenarios/loss.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

[[ ${GUEST_COUNT:-1} -eq 2 ]] || vm_fail "needs two guests (run-scenario --guests 2)"

dev=rxe0 if=$GUEST_IFACE port=9479
cleanup() {
	rw_serve_kill
	tc qdisc del dev "$if" root 2>/dev/null || true
	rdma link delete "$dev" 2>/dev/null || true
}
trap cleanup EXIT

# What each side's loss shows up as (rxe's names; the profile's rules also know mlx5's).
if ((GUEST_ID == 0)); then
	counter=out_of_seq_request rule=no_out_of_sequence
else
	counter=rcvd_seq_err rule=no_packet_seq_errors
fi

vm_run modprobe rdma_rxe
vm_run modprobe sch_netem
vm_run rdma link add "$dev" type rxe netdev "$if"
vm_wait_port_active "$dev" 1 30
vm_wait_until 20 "$dev GID 1 = IPv4 GID" vm_gid_is "$dev" 1 1 "$(vm_gid_ipv4 "$GUEST_IP")"

# --- global pause: e1000 comes up with autoneg on, RX on, TX off -----------------------------
ethtool -a "$if" >"$VM_OUT/ethtool-a.txt" 2>&1 || vm_fail "ethtool -a $if: $(cat "$VM_OUT/ethtool-a.txt")"
onoff() { awk -v k="$1:" '$1 == k { print ($2 == "on") ? "true" : "false" }' "$VM_OUT/ethtool-a.txt"; }
ref="$(onoff Autonegotiate) $(onoff RX) $(onoff TX)"
[[ $ref == *true* ]] || vm_fail "ethtool -a shows no pause on $if ($ref): the scenario assumes e1000's RX on"
snap=$VM_OUT/snapshot.json
rw_snapshot "$snap"
got=$(rw_jq "$snap" --arg n "$if" '[field(netdev($n); "pause.autoneg"), field(netdev($n); "pause.rx"),
	field(netdev($n); "pause.tx")] | map(tostring) | join(" ")')
vm_expect_eq "$got" "$ref" "snapshot $if pause.autoneg, pause.rx, pause.tx (= ethtool -a)"
chk=$VM_OUT/check.json
rw_check "$chk"
rw_expect_rule "$chk" global_pause_off fail "check" "$if"

# --- serve, the counter rule before the loss ---------------------------------------------------
rw_serve_start "$port" --interval 1s --config-interval 5s
checks=$VM_OUT/checks.json
rule_is() {
	rw_fetch /api/v1/checks "$checks"
	[[ $(rw_rule "$checks" "$rule" "$dev") == "$1"$'\t'* ]]
}
# increase() needs two samples; pass means the counter has not moved since serve started.
vm_wait_until 20 "$rule pass on /api/v1/checks" rule_is pass
rw_expect_rule "$checks" "$rule" pass "serve before the loss" "$dev"
rw_expect_rule "$checks" global_pause_off fail "serve" "$if"

vm_barrier serve-ready 90

# --- loss on guest 1's egress, traffic from guest 1 to guest 0 ---------------------------------
bw=(ib_write_bw -d "$dev" -x 1 -n 10)
if ((GUEST_ID == 1)); then
	vm_run tc qdisc add dev "$if" root netem loss 10%
	vm_wait_mark 0 server-ready 60
	vm_log "+ ${bw[*]} $PEER_IP (client, 10% loss on the way out)"
	rc=0
	"${bw[@]}" "$PEER_IP" >"$VM_OUT/ib_write_bw.txt" 2>&1 || rc=$?
	vm_run tc qdisc del dev "$if" root
else
	vm_log "+ ${bw[*]} (server)"
	"${bw[@]}" >"$VM_OUT/ib_write_bw.txt" 2>&1 &
	server=$!
	vm_wait_listening 18515 30
	vm_mark server-ready
	rc=0
	wait "$server" || rc=$?
fi
vm_perftest_ran "$rc" "$VM_OUT/ib_write_bw.txt" "$(vm_guest_dir "$(vm_peer_id)")/ib_write_bw.txt" ||
	vm_fail "ib_write_bw exited $rc: $(tail -n 3 "$VM_OUT/ib_write_bw.txt" | tr '\n' ' ')"
vm_barrier traffic-done 120

# --- the counters moved, and the rule saw it ---------------------------------------------------
stat=$VM_OUT/rdma-statistic.json
rdma -j statistic show link "$dev/1" >"$stat" || vm_fail "rdma statistic show link $dev/1 failed"
n=$(jq --arg c "$counter" '.[0][$c]' "$stat")
vm_log "rdma statistic after the loss: $(jq -c '.[0] | del(.ifname, .port)' "$stat")"
((n > 0)) || vm_fail "10% loss did not move $counter on $dev (rdma statistic: $n)"

# Fails within a few polls, and reports the increase rdma statistic shows (the device was new
# when serve started, so the increase since then is the counter itself).
rule_failed_with_n() {
	rw_fetch /api/v1/checks "$checks"
	[[ $(rw_rule "$checks" "$rule" "$dev") == fail$'\t'"$n "* ]]
}
vm_wait_until 20 "$rule fail with an increase of $n on /api/v1/checks" rule_failed_with_n
rw_expect_rule "$checks" "$rule" fail "serve after the loss" "$dev"

metrics=$VM_OUT/metrics.txt
rw_fetch /metrics "$metrics"
rw_hw_metrics_match "$stat" "$metrics" "$dev"

rw_serve_stop
vm_barrier finished 60
vm_pass
