#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate an mlx5-shaped /sys/class/infiniband tree with N devices.

Layout and file formats as the kernel writes them (drivers/infiniband/core/sysfs.c,
drivers/infiniband/hw/mlx5/counters.c): one port per device, 21 classic counters and
39 hw counters (60 per port), so both rocewatch and node_exporter's infiniband
collector read the same files.  `--bump` rewrites every counter with new values, to
keep the tree "moving" between polls.  `--classic-only` leaves hw_counters/ out (a
port whose driver has none), so both exporters do the same work: node_exporter 1.5
reads only counters/.
"""
import argparse
import os
import random

COUNTERS = """excessive_buffer_overrun_errors link_downed link_error_recovery
local_link_integrity_errors multicast_rcv_packets multicast_xmit_packets
port_rcv_constraint_errors port_rcv_data port_rcv_errors port_rcv_packets
port_rcv_remote_physical_errors port_rcv_switch_relay_errors
port_xmit_constraint_errors port_xmit_data port_xmit_discards port_xmit_packets
port_xmit_wait symbol_error unicast_rcv_packets unicast_xmit_packets VL15_dropped""".split()

HW_COUNTERS = """duplicate_request implied_nak_seq_err lifespan local_ack_timeout_err
np_cnp_sent np_ecn_marked_roce_packets out_of_buffer out_of_sequence packet_seq_err
req_cqe_error req_cqe_flush_error req_remote_access_errors req_remote_invalid_request
req_rnr_retries_exceeded req_transport_retries_exceeded resp_cqe_error
resp_cqe_flush_error resp_local_length_error resp_remote_access_errors
rnr_nak_retry_err roce_adp_retrans roce_adp_retrans_to roce_slow_restart
roce_slow_restart_cnps roce_slow_restart_trans rp_cnp_handled rp_cnp_ignored
rx_atomic_requests rx_dct_connect rx_icrc_encapsulated rx_read_requests
rx_write_requests cc_rx_ce_pkts cc_rx_cnp_pkts cc_tx_cnp_pkts rdma_tx_packets
rdma_tx_bytes rdma_rx_packets rdma_rx_bytes""".split()

assert len(COUNTERS) + len(HW_COUNTERS) == 60


def write(path, text):
    with open(path, "w") as f:
        f.write(text + "\n")


def gen(root, n, seed, classic_only=False):
    rnd = random.Random(seed)
    ib = os.path.join(root, "class", "infiniband")
    os.makedirs(ib, exist_ok=True)
    for d in range(n):
        dev = os.path.join(ib, "mlx5_%d" % d)
        port = os.path.join(dev, "ports", "1")
        for sub in ("counters", "hw_counters", "gids", "gid_attrs/types", "gid_attrs/ndevs"):
            if sub != "hw_counters" or not classic_only:
                os.makedirs(os.path.join(port, sub), exist_ok=True)
        write(os.path.join(dev, "node_type"), "1: CA")
        write(os.path.join(dev, "node_guid"), "b83f:d203:00%02x:1a2b" % d)
        write(os.path.join(dev, "fw_ver"), "28.39.1002")
        write(os.path.join(dev, "hca_type"), "MT4129")
        write(os.path.join(dev, "board_id"), "MT_0000000838")
        write(os.path.join(port, "state"), "4: ACTIVE")
        write(os.path.join(port, "phys_state"), "5: LinkUp")
        write(os.path.join(port, "rate"), "400 Gb/sec (4X NDR)")
        write(os.path.join(port, "link_layer"), "Ethernet")
        write(os.path.join(port, "lid"), "0x0")
        write(os.path.join(port, "sm_lid"), "0x0")
        write(os.path.join(port, "cap_mask"), "0x00010000")
        for name in COUNTERS:
            write(os.path.join(port, "counters", name), str(rnd.randrange(0, 1 << 40)))
        for name in [] if classic_only else HW_COUNTERS:
            write(os.path.join(port, "hw_counters", name), str(rnd.randrange(0, 1 << 32)))
        # GID 0: link-local RoCE v1, 1: the same as v2, 2/3: IPv4-mapped v1/v2
        gids = [
            ("fe80:0000:0000:0000:ba3f:d2ff:fe%02x:1a2b" % d, "IB/RoCE v1"),
            ("fe80:0000:0000:0000:ba3f:d2ff:fe%02x:1a2b" % d, "RoCE v2"),
            ("0000:0000:0000:0000:0000:ffff:0a00:%04x" % (d + 1), "IB/RoCE v1"),
            ("0000:0000:0000:0000:0000:ffff:0a00:%04x" % (d + 1), "RoCE v2"),
        ]
        for i in range(8):
            gid, typ = gids[i] if i < len(gids) else ("0000:" * 7 + "0000", None)
            write(os.path.join(port, "gids", str(i)), gid)
            if typ:
                write(os.path.join(port, "gid_attrs", "types", str(i)), typ)
                write(os.path.join(port, "gid_attrs", "ndevs", str(i)), "eth%d" % d)


def bump(root, seed):
    rnd = random.Random(seed)
    ib = os.path.join(root, "class", "infiniband")
    for dev in sorted(os.listdir(ib)):
        for sub in ("counters", "hw_counters"):
            d = os.path.join(ib, dev, "ports", "1", sub)
            for name in os.listdir(d) if os.path.isdir(d) else []:
                p = os.path.join(d, name)
                with open(p) as f:
                    v = int(f.read())
                write(p, str(v + rnd.randrange(0, 1000)))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("root")
    ap.add_argument("-n", "--devices", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bump", action="store_true")
    ap.add_argument("--classic-only", action="store_true", help="no hw_counters/")
    a = ap.parse_args()
    if a.bump:
        bump(a.root, a.seed)
    else:
        gen(a.root, a.devices, a.seed, a.classic_only)


if __name__ == "__main__":
    main()
