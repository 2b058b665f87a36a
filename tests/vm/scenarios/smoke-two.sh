#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Two guests ("two nodes") joined by one e1000 link: soft-RoCE on each eth0 and one RDMA write
# bandwidth run across the link (ib_write_bw, 50 x 64 KiB, RoCE v2 over the IPv4-mapped GID).
# Proves the two-node plumbing every cross-node scenario builds on: distinct MACs, rendezvous,
# RoCE traffic that really crosses the wire, counters on both sides.
#
# Run: tests/vm/run-scenario --guests 2 tests/vm/scenarios/smoke-two.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"

[[ ${GUEST_COUNT:-1} -eq 2 ]] || vm_fail "needs two guests (run-scenario --guests 2)"

vm_run modprobe rdma_rxe
vm_run rdma link add rxe0 type rxe netdev "$GUEST_IFACE"
vm_wait_port_active rxe0 1 30

# perftest -x 1 picks GID index 1: the IPv4-mapped GID of the address stage 2 gave eth0.
gid=$(vm_gid_ipv4 "$GUEST_IP")
vm_wait_until 20 "rxe0 GID 1 = $gid" vm_gid_is rxe0 1 1 "$gid"

vm_wait_ping "$PEER_IP" 30
vm_barrier rxe-up 60

rdma -j statistic show link rxe0/1 >"$VM_OUT/stat-before.json" 2>&1 || true
bw=(ib_write_bw -d rxe0 -x 1 -n 50)
if ((GUEST_ID == 0)); then
	vm_log "+ ${bw[*]} (server)"
	"${bw[@]}" >"$VM_OUT/ib_write_bw.txt" 2>&1 &
	server=$!
	# perftest's out-of-band exchange is TCP 18515; once it listens, the client may connect.
	vm_wait_listening 18515 30
	vm_mark server-ready
	rc=0
	wait "$server" || rc=$?
else
	vm_wait_mark 0 server-ready 60
	vm_log "+ ${bw[*]} $PEER_IP (client)"
	rc=0
	"${bw[@]}" "$PEER_IP" >"$VM_OUT/ib_write_bw.txt" 2>&1 || rc=$?
fi
cat "$VM_OUT/ib_write_bw.txt" >&2
rdma -j statistic show link rxe0/1 >"$VM_OUT/stat-after.json" 2>&1 || true
((rc == 0)) || vm_fail "ib_write_bw exited $rc (see $VM_OUT/ib_write_bw.txt)"

# The result row: "#bytes #iterations BW peak BW average MsgRate"; 65536 bytes, 50 iterations.
awk '$1 == 65536 && $2 == 50 { found = 1 } END { exit !found }' "$VM_OUT/ib_write_bw.txt" ||
	vm_fail "ib_write_bw printed no 65536-byte x 50 result row"
vm_log "ok: ib_write_bw completed: $(awk '$1 == 65536 && $2 == 50' "$VM_OUT/ib_write_bw.txt")"

vm_barrier finished 60
vm_pass
