#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One guest: soft-RoCE on a veth, and the RoCE active_mtu following the netdev MTU the way real
# NICs do (IB MTUs are 256..4096 and the RoCE headers must fit: 1500 -> 1024, 9000 -> 4096).
# This is the fact rocewatch's min_mtu rule rests on, checked against the real kernel.
#
# Run: tests/vm/run-scenario tests/vm/scenarios/smoke-rxe.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"

vm_run modprobe rdma_rxe
vm_run modprobe veth

vm_run ip link add va type veth peer name vb
vm_run ip link set va mtu 1500
vm_run ip link set vb mtu 1500
vm_run ip addr add 10.98.0.1/24 dev va
vm_run ip link set vb up
vm_run ip link set va up

vm_run rdma link add rxe_a type rxe netdev va
vm_wait_port_active rxe_a 1 30
rdma link show rxe_a/1 >&2

vm_expect_eq "$(vm_active_mtu rxe_a)" 1024 "rxe_a active_mtu at netdev MTU 1500"

vm_run ip link set vb mtu 9000
vm_run ip link set va mtu 9000
# rxe follows NETDEV_CHANGEMTU from a notifier; give it a moment rather than racing it.
vm_wait_until 10 "rxe_a active_mtu 4096" vm_active_mtu_is rxe_a 4096
vm_expect_eq "$(vm_active_mtu rxe_a)" 4096 "rxe_a active_mtu at netdev MTU 9000"

ibv_devinfo -v -d rxe_a >"$VM_OUT/ibv_devinfo.txt" 2>&1 || true
rdma -j statistic show link rxe_a/1 >"$VM_OUT/rdma-statistic.json" 2>&1 || true

vm_pass
