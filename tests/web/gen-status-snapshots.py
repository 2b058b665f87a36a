#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A misconfigured node for the status page test, as a --from sequence.

  gen-status-snapshots.py N OUT [--evil]

Starts from the well-configured two-NIC node of the rule fixtures
(tests/fixtures/snapshots/rules/good.json) and breaks it: eth2 at MTU 1500
(so mlx5_0's active_mtu is 1024), PFC on priorities 0 and 3 on eth3.  Its
counters move in every snapshot (100 ms apart) so the sparklines have
something to draw: PFC pause on priority 3 both ways and on priority 0
received on eth3, ACK timeouts and out-of-sequence packets, CNPs sent and
handled, discards.  --evil renames eth2 to a <script> element and eth3 to a
name with & " < >, to prove the page escapes what the machine says.
Prints the names used as JSON on stdout.
"""
import copy
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "fixtures", "snapshots", "rules", "good.json")
T0_NS = 1796205600 * 10**9
EVIL = {"eth2": "<script>document.title='PWNED'</script>", "eth3": 'a&b"c<i>d</i>'}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    n, out, evil = int(sys.argv[1]), sys.argv[2], "--evil" in sys.argv[3:]
    base = json.load(open(BASE))[0]
    base.pop("time", None)
    seq = []
    tot = {"p3rx": 0, "p3tx": 0, "p0rx": 0, "ack": 0, "oos": 0, "cnps": 0, "cnph": 0,
           "disc": 0, "rdisc": 0}
    for i in range(n):
        s = copy.deepcopy(base)
        s["time_unix_ns"] = T0_NS + i * 100 * 10**6
        w = 1 + math.sin(i / 15.0)  # a wave, so the lines have a shape
        tot["p3rx"] += int(400 * w) + 50
        tot["p3tx"] += int(150 * (2 - w)) + 10
        tot["p0rx"] += 30 if (i // 40) % 2 else 0
        tot["ack"] += 2 if i % 7 == 0 else 0
        tot["oos"] += int(5 * w)
        tot["cnps"] += int(200 * w)
        tot["cnph"] += int(180 * w)
        tot["disc"] += 1 if i % 3 == 0 else 0
        tot["rdisc"] += 1 if i % 11 == 0 else 0
        for nd in s["netdevs"]:
            f = nd["fields"]
            if nd["name"] == "eth2":
                f["mtu"] = 1500
            if nd["name"] == "eth3":
                f["pfc.enabled"] = [0, 3]
            if nd["name"] in ("eth2", "eth3"):
                rx0 = tot["p0rx"] if nd["name"] == "eth3" else None
                f["pfc.rx_pause"] = [rx0, None, None, 1200 + tot["p3rx"], None, None, None, None]
                f["pfc.tx_pause"] = [None, None, None, 800 + tot["p3tx"], None, None, None, None]
                f["port.rx_discards"] = tot["disc"]
        for pt in s["rdma_ports"]:
            if pt["device"] == "mlx5_0":
                pt["fields"]["active_mtu"] = 1024
            hw = pt["counters"]["hw"]
            hw["local_ack_timeout_err"] = tot["ack"]
            hw["out_of_sequence"] = tot["oos"]
            hw["np_cnp_sent"] = tot["cnps"]
            hw["rp_cnp_handled"] = tot["cnph"]
            hw["out_of_buffer"] = tot["rdisc"]
        seq.append(s)
    text = json.dumps(seq, separators=(",", ":"))
    names = {"eth2": "eth2", "eth3": "eth3"}
    if evil:
        for old, new in EVIL.items():
            text = text.replace(json.dumps(old), json.dumps(new))
        names = dict(EVIL)
    with open(out, "w") as f:
        f.write(text)
    json.dump(names, sys.stdout)
    print()


if __name__ == "__main__":
    main()
