#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A generated fleet as series, for a real engine to hold (tests/e2e/test-fleet-engines.sh,
tests/bench/bench_fleet_engines.py).

    fleet-series.py PLAN OUT.om OUT.prom

PLAN is JSON: {"expositions": {"good": FILE, ...}, "nodes": N, "instance": "node%05d:9479",
"variant": {"7": "mtu", ...}, "jobs": {"4242": [FIRST, LAST], ...}, "down": [20, ...],
"ts": SECONDS}.  Each node i (1..N) holds the roce_* series of its variant's exposition
(FILE: a `rocewatch serve` /metrics; "good" where none is named), instance and
job="rocewatch" labels added, one sample at ts; `up` (0 for the nodes in "down"); and one
roce_job_info{job_id} per job whose range holds it.  The same series twice: OUT.om as
OpenMetrics for `promtool tsdb create-blocks-from openmetrics` (Prometheus), OUT.prom as
the text format with millisecond timestamps for VictoriaMetrics' /api/v1/import/prometheus.
"""
import json
import re
import sys

LINE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$")


def series(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m or not m.group(1).startswith("roce_"):
            continue
        labels = m.group(2)[1:-1] if m.group(2) else ""
        out.append((m.group(1), labels, m.group(3)))
    return out


def main():
    plan = json.load(open(sys.argv[1]))
    expo = {k: series(v) for k, v in plan["expositions"].items()}
    fams = {}  # OpenMetrics wants a family's samples together
    for i in range(1, plan["nodes"] + 1):
        inst = plan["instance"] % i
        rows = list(expo[plan.get("variant", {}).get(str(i), "good")])
        rows.append(("up", "", "0" if i in plan.get("down", []) else "1"))
        for job, (lo, hi) in plan.get("jobs", {}).items():
            if lo <= i <= hi:
                rows.append(("roce_job_info", 'job_id="%s"' % job, "1"))
        for name, labels, value in rows:
            lab = '%s%sinstance="%s",job="rocewatch"' % (labels, "," if labels else "", inst)
            fams.setdefault(name, []).append((lab, value))
    ts = int(plan["ts"])
    with open(sys.argv[2], "w") as om, open(sys.argv[3], "w") as pt:
        for name, rows in fams.items():
            for lab, value in rows:
                om.write("%s{%s} %s %d\n" % (name, lab, value, ts))
                pt.write("%s{%s} %s %d\n" % (name, lab, value, ts * 1000))
        om.write("# EOF\n")


if __name__ == "__main__":
    main()
