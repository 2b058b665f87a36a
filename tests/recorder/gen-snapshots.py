#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write snapshot sequences (the --from JSON array format, docs/snapshot.md)
for the recorder tests and benchmark.

  incident N OUT   a RoCE node (eth2 + mlx5_0/1) through a synthetic incident:
                   a PFC pause storm on priority 3 during polls 20..39 (2 s at
                   100 ms) peaking at poll 30, transport retries during polls
                   40..59 peaking at poll 45, PFC enabled on priority 4 too
                   from poll 60 on.  Prints the ground truth as JSON on stdout.
  load N OUT NICS ETHTOOL HW
                   NICS netdevs x ETHTOOL driver stats and NICS RDMA ports x HW
                   hw counters, every counter changing in every snapshot.
"""
import json
import sys

T0_NS = 1796205600 * 10**9  # 2026-12-02T10:00:00Z; serve restamps with its clock


def snap(i, netdevs, ports):
    return {
        "schema": "rocewatch-snapshot", "schema_version": 1, "host": "gpu-node-07",
        "time_unix_ns": T0_NS + i * 100 * 10**6,
        "collectors": {"link": {"enabled": True, "success": True, "duration_seconds": 0.0001}},
        "node": {"fields": {"kernel": "6.1.0-27-amd64"}},
        "netdevs": netdevs, "rdma_ports": ports,
    }


def incident(n):
    out = []
    pause = dur = retries = oos = 0
    truth = {"pause": {"device": "eth2", "priority": 3, "first_poll": 20, "last_poll": 39,
                       "peak_poll": 30, "frames": 0},
             "retries": {"device": "mlx5_0", "port": 1, "counter": "local_ack_timeout_err",
                         "first_poll": 40, "last_poll": 59, "peak_poll": 45, "total": 0},
             "config": {"device": "eth2", "field": "pfc.enabled", "poll": 60}}
    for i in range(n):
        if 20 <= i <= 39:
            inc = 1000 + 500 * (10 - abs(i - 30))  # peak 6000 frames in poll 30
            truth["pause"].setdefault("increments", {})[i] = inc
            pause += inc
            dur += 80000 if i != 30 else 99000      # us paused per 100 ms poll
            truth["pause"]["frames"] += inc
            if i == 30:
                truth["pause"]["peak_frames"] = inc
        if 40 <= i <= 59:
            inc = 50 if i == 45 else 5
            truth["retries"].setdefault("increments", {})[i] = inc
            retries += inc
            oos += 3
            truth["retries"]["total"] += inc
            if i == 45:
                truth["retries"]["peak"] = inc
        rx_pause = [0, 0, 0, pause, 0, 0, 0, 0]
        nd = {"name": "eth2", "ifindex": 4,
              "fields": {"mtu": 9000, "carrier": True, "operstate": "up",
                         "pfc.enabled": [3] if i < 60 else [3, 4],
                         "pfc.rx_pause": rx_pause,
                         "pfc.tx_pause": [0, 0, 0, 7, 0, 0, 0, 0],
                         "pfc.rx_pause_duration_us": [0, 0, 0, dur, 0, 0, 0, 0],
                         "prio.rx_bytes": [0, 0, 0, 10**9 + i * 12500000, 0, 0, 0, 0],
                         "pause_storm.warning_events": 1 if i >= 35 else 0,
                         "dscp2prio": {"26": 3, "48": 6}, "trust": "dscp"},
              "counters": {"ethtool": {"rx_prio3_pause": pause, "rx_discards_phy": 0}}}
        pt = {"device": "mlx5_0", "port": 1, "netdev": "eth2", "ifindex": 4,
              "fields": {"state": "ACTIVE", "active_mtu": 4096, "netdev_name": "eth2"},
              "counters": {"hw": {"local_ack_timeout_err": retries, "out_of_sequence": oos,
                                  "np_cnp_sent": 0},
                           "port": {"port_xmit_data": 1000 + i}}}
        out.append(snap(i, [nd], [pt]))
    return out, truth


def load(n, nics, n_eth, n_hw):
    out = []
    for i in range(n):
        nds, pts = [], []
        for k in range(nics):
            base = (k + 1) * 10**9 + i * 1000
            eth = {"rx%d_stat%d" % (j % 16, j): base + j * 7 + i for j in range(n_eth)}
            prio = [base + p + i for p in range(8)]
            nds.append({"name": "eth%d" % k, "ifindex": 10 + k,
                        "fields": {"mtu": 9000, "carrier": True, "operstate": "up",
                                   "pfc.enabled": [3], "trust": "dscp",
                                   "pfc.rx_pause": prio, "pfc.tx_pause": prio,
                                   "prio.rx_bytes": prio, "prio.tx_bytes": prio,
                                   "prio.rx_packets": prio, "prio.tx_packets": prio},
                        "counters": {"ethtool": eth}})
            hw = {"hw_counter_%d" % j: base + j + i for j in range(n_hw)}
            pts.append({"device": "mlx5_%d" % k, "port": 1, "netdev": "eth%d" % k,
                        "ifindex": 10 + k, "fields": {"state": "ACTIVE", "active_mtu": 4096},
                        "counters": {"hw": hw}})
        out.append(snap(i, nds, pts))
    return out


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "incident":
        seq, truth = incident(int(sys.argv[2]))
        json.dump(truth, sys.stdout)
        print()
    elif len(sys.argv) == 7 and sys.argv[1] == "load":
        seq = load(*(int(a) for a in sys.argv[2:3] + sys.argv[4:7]))
    else:
        sys.exit(__doc__)
    with open(sys.argv[3], "w") as f:
        json.dump(seq, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
