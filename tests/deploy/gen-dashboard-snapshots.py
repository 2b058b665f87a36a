#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A JSON array of snapshots in which every counter the Grafana dashboard
plots moves, for `serve --from` (one sample per poll): the correctly
configured two-NIC node of tests/fixtures/snapshots/rules/good.json (or the
same node with its link health facts, tests/fixtures/snapshots/health/healthy.json),
plus PFC pause on the RoCE priority, pause storms (so a rule fails), retries, ACK
timeouts, out-of-sequence, CNPs and discards growing every sample, the first
DSCP-trusting netdev's trust mode flipping every 10 s (configuration drift), and
where the input has them a carrier flap every 2 s, symbol errors, a wandering
pre-FEC BER and the optional CE/CNP counters.

usage: gen-dashboard-snapshots.py GOOD_JSON OUT [SAMPLES]
"""
import copy
import datetime
import json
import sys

good, out = sys.argv[1:3]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 400
base = json.load(open(good))
base = base[-1] if isinstance(base, list) else base


def grow(arr, k, step):
    return [None if v is None else v + step * k for v in arr]


t0 = datetime.datetime.strptime(base["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
samples = []
for k in range(n):
    s = copy.deepcopy(base)
    # 100 ms apart, as serve --interval 100ms polls them (serve stamps them with
    # its own clock; check evaluates them at these times)
    t = t0 + datetime.timedelta(milliseconds=100 * k)
    s["time"] = t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)
    for nd in s["netdevs"]:
        f = nd["fields"]
        if "pfc.rx_pause" not in f:
            continue
        f["pfc.rx_pause"] = grow(f["pfc.rx_pause"], k, 50)
        f["pfc.tx_pause"] = grow(f["pfc.tx_pause"], k, 30)
        f["pause_storm.warning_events"] = f.get("pause_storm.warning_events", 0) + k
        f["pause_storm.error_events"] = f.get("pause_storm.error_events", 0) + k // 2
        f["prio.rx_discards"] = grow(f["prio.rx_discards"], k, 3)
        f["port.rx_discards"] = f.get("port.rx_discards", 0) + 2 * k
        f["port.tx_discards"] = f.get("port.tx_discards", 0) + k
        if "carrier.changes" in f:
            f["carrier.changes"] += 2 * (k // 20)
            f["ber.pre_fec"] = 1e-9 * (1 + k % 7)
    # configuration drift: the first DSCP-trusting netdev's trust mode flips every 10 s (an info
    # series is always 1: the dashboard must see the new series, not a new value).  Flipping, not
    # changing once, so a Prometheus that starts late still scrapes both modes.
    if (k // 100) % 2 == 1:
        nd0 = [nd["fields"] for nd in s["netdevs"] if nd["fields"].get("trust") == "dscp"][0]
        nd0["trust"] = "pcp"
    for p in s["rdma_ports"]:
        hw = p["counters"]["hw"]
        for name, step in (("out_of_sequence", 5), ("np_cnp_sent", 100), ("rp_cnp_handled", 90),
                           ("local_ack_timeout_err", 1), ("req_transport_retries_exceeded", 1)):
            hw[name] = hw.get(name, 0) + step * k
        for name, step in (("cc_rx_ce_pkts", 40), ("cc_rx_cnp_pkts", 30), ("cc_tx_cnp_pkts", 20)):
            if name in hw:
                hw[name] += step * k
        if "symbol_error" in p["counters"]["port"]:
            p["counters"]["port"]["symbol_error"] += k // 10
    samples.append(s)
with open(out, "w") as f:
    json.dump(samples, f)
