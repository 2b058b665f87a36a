#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A job's fleet as snapshot files, for fleet check --nccl-env (tests/fleet/test-fleet-job.sh,
tests/e2e/test-fleet-engines.sh).

    gen-job-fleet.py DIR SCENARIO [NODES]

NODES (default 4) nodes n1.. from tests/fixtures/snapshots/fleet/rails-good.json (two
RoCE NICs: mlx5_0 on eth2 at PCI 0000:17:00.0, mlx5_1 on eth3 at 0000:18:00.0, the IPv4
RoCE v2 GID at index 3), each under its own host name, and one node changed by SCENARIO:

  good      nothing changed
  swapped   n3's device names do not follow its PCI slots: mlx5_0 sits in the second slot
            (eth2 at 0000:18:00.0) and mlx5_1 in the first; NCCL's device 0 there is rail 1
  missing   n2's mlx5_1 port is DOWN: NCCL uses one device there
  gid5      n4 got an IPv6 address first: its IPv4 RoCE v2 GID moved to index 5, and index
            3 is the IPv6 one (an explicit NCCL_IB_GID_INDEX=3 is wrong there)
  macvlan   n2's RoCE v2 GIDs at indexes 2-3 are IPv6 and its IPv4 one is at index 4 (a
            macvlan or per-pod interface): NCCL, left to pick, picks 4 there
"""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "fixtures", "snapshots", "fleet", "rails-good.json")
V6 = "fd00:0000:0000:0000:0000:0000:0000:00%02x"


def port(s, dev):
    return next(p for p in s["rdma_ports"] if p["device"] == dev)["fields"]


def netdev(s, name):
    return next(n for n in s["netdevs"] if n["name"] == name)["fields"]


def swapped(s):
    netdev(s, "eth2")["bus"], netdev(s, "eth3")["bus"] = netdev(s, "eth3")["bus"], netdev(s, "eth2")["bus"]


def missing(s):
    port(s, "mlx5_1")["state"] = "DOWN"


def gid5(s):
    for dev in ("mlx5_0", "mlx5_1"):
        p = port(s, dev)
        for g in p["gids"]:
            if g["index"] >= 2:
                g["index"] += 2
        p["gids"][2:2] = [{"index": 2, "gid": V6 % 16, "type": "IB/RoCE v1", "netdev": "eth2"},
                          {"index": 3, "gid": V6 % 16, "type": "RoCE v2", "netdev": "eth2"}]
        p["gid.rocev2_ipv4_index"] = 5


def macvlan(s):
    for dev in ("mlx5_0", "mlx5_1"):
        p = port(s, dev)
        ipv4 = dict([g for g in p["gids"] if g["index"] == 3][0])
        for g in p["gids"]:
            if g["index"] in (2, 3):
                g["gid"] = V6 % 32
        p["gids"].append(dict(ipv4, index=4))
        p["gid.rocev2_ipv4_index"] = 4


WHO = {"swapped": (3, swapped), "missing": (2, missing), "gid5": (4, gid5), "macvlan": (2, macvlan)}


def main():
    out, scenario = sys.argv[1], sys.argv[2]
    nodes = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    if scenario != "good" and scenario not in WHO:
        raise SystemExit("gen-job-fleet: unknown scenario %s" % scenario)
    base = json.load(open(BASE))
    os.makedirs(out, exist_ok=True)
    for i in range(1, nodes + 1):
        s = copy.deepcopy(base)
        s["host"] = "n%d" % i
        if scenario in WHO and WHO[scenario][0] == i:
            WHO[scenario][1](s)
        with open(os.path.join(out, "n%d.json" % i), "w") as f:
            json.dump(s, f)


if __name__ == "__main__":
    main()
