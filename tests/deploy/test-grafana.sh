#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# contrib/grafana/rocewatch.json against a real Prometheus: every panel's PromQL
# (with Grafana's variables filled in) is parsed by Prometheus itself through
# `promtool query instant`, and returns a non-empty result while Prometheus
# scrapes `rocewatch serve --from` a sequence of snapshots in which every plotted
# counter moves (tests/deploy/gen-dashboard-snapshots.py).  Loopback only.
. "$(dirname "$0")/../lib.sh"
need_cmd prometheus "apt-get install prometheus"
need_cmd promtool "apt-get install prometheus"
need_cmd curl

DASH="$SOURCE_DIR/contrib/grafana/rocewatch.json"
check "the dashboard is JSON with panels, a datasource and an instance variable" python3 - "$DASH" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["uid"] == "rocewatch" and d["title"], d.get("title")
names = [v["name"] for v in d["templating"]["list"]]
assert names == ["datasource", "instance"], names
panels = [p for p in d["panels"] if p["type"] != "row"]
assert len(panels) >= 12, len(panels)
ids = [p["id"] for p in d["panels"]]
assert len(set(ids)) == len(ids), "duplicate panel ids"
for p in panels:
    assert p["targets"] and all(t["expr"] and t["refId"] for t in p["targets"]), p["title"]
    assert p["datasource"]["uid"] == "${datasource}", p["title"]
    g = p["gridPos"]
    assert g["x"] + g["w"] <= 24, p["title"]
titles = " | ".join(p["title"] for p in panels)
for want in ("Rule outcomes", "drift", "pause frames/s by priority and direction", "Pause-storm",
             "Retries/s", "Out-of-sequence/s", "CNPs sent / handled", "Discards/s",
             "active_mtu vs netdev MTU", "across the fleet", "Carrier flaps", "Pre-FEC BER",
             "CNP / ECN rates", "Health escalations"):
    assert want in titles, "no panel for %r in %s" % (want, titles)
PY

# "Configuration drift" sees a trust change: the trust mode is a label of an _info series
# that is always 1 (changes() of it is 0), so a change is one more series in the range;
# an MTU change is a changes() of the value.  promtool's own PromQL on made-up series.
drift_test() {
	python3 - "$DASH" >"$TMPD/drift.test.yml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
q = [p for p in d["panels"] if p["title"] == "Configuration drift"][0]["targets"][0]["expr"]
q = q.replace("$instance", ".*").replace("$__range", "10m")
print("""rule_files: []
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'roce_qos_trust_info{instance="n1",device="eth2",trust="pcp"}'
        values: '1x4'
      - series: 'roce_qos_trust_info{instance="n1",device="eth2",trust="dscp"}'
        values: '_x4 1x6'
      - series: 'roce_netdev_mtu_bytes{instance="n1",device="eth2"}'
        values: '9000x10'
      - series: 'roce_qos_trust_info{instance="n2",device="eth2",trust="dscp"}'
        values: '1x10'
      - series: 'roce_netdev_mtu_bytes{instance="n2",device="eth2"}'
        values: '1500x4 9000x6'
      - series: 'roce_qos_trust_info{instance="n3",device="eth2",trust="dscp"}'
        values: '1x10'
      - series: 'roce_netdev_mtu_bytes{instance="n3",device="eth2"}'
        values: '9000x10'
    promql_expr_test:
      - expr: '%s'
        eval_time: 10m
        exp_samples:
          - labels: '{instance="n1"}'
            value: 1
          - labels: '{instance="n2"}'
            value: 1
          - labels: '{instance="n3"}'
            value: 0""" % q.replace("'", "''"))
PY
	promtool test rules "$TMPD/drift.test.yml"
}
check "Configuration drift counts a trust change and an MTU change (promtool)" drift_test

python3 "$SOURCE_DIR/tests/deploy/gen-dashboard-snapshots.py" \
	"$SOURCE_DIR/tests/fixtures/snapshots/health/healthy.json" "$TMPD/moving.json" 600
rport=$(free_port)
pport=$(free_port)
[ "$rport" != "$pport" ] || pport=$((rport + 1))
"$ROCEWATCH" serve --from "$TMPD/moving.json" --web.listen-address "127.0.0.1:$rport" \
	--interval 100ms >"$TMPD/serve.log" 2>&1 &
on_exit "kill $!"
cat >"$TMPD/prometheus.yml" <<YML
global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: rocewatch
    static_configs: [{ targets: ['127.0.0.1:$rport'] }]
YML
prometheus --config.file "$TMPD/prometheus.yml" --storage.tsdb.path "$TMPD/tsdb" \
	--web.listen-address "127.0.0.1:$pport" >"$TMPD/prom.log" 2>&1 &
stop_at_exit $!
PROM="http://127.0.0.1:$pport"

nonempty() { # EXPR: the instant query succeeds and has at least one sample
	curl -sf --get "$PROM/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["status"] == "success" and d["data"]["result"] else 1)'
}
# two scrapes of moving counters before any rate can be non-empty
wait_until 60 nonempty 'rate(roce_pfc_pause_frames_total[10s]) > 0' ||
	die "no moving counter in Prometheus: $(tail -3 "$TMPD/prom.log") $(tail -3 "$TMPD/serve.log")"

# The drift panel sees the trust change (an info series is always 1: changes() on it cannot).
drift=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
q = [t["expr"] for p in d["panels"] if p["title"] == "Configuration drift" for t in p["targets"]][0]
print(q.replace("$__range", "5m").replace("$instance", ".*"))' "$DASH")
check "Configuration drift counts the trust change" wait_until 30 nonempty "($drift) > 0"
check "... and changes() alone on the info series would not have" bash -c "! curl -sf --get '$PROM/api/v1/query' --data-urlencode 'query=sum(changes(roce_qos_trust_info[5m])) > 0' | grep -q '\"value\"'"

# Each panel's queries, Grafana's variables as a dashboard with "All" nodes fills them in.
python3 - "$DASH" >"$TMPD/queries" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
subst = {"$__rate_interval": "10s", "$__range": "1m", "$__interval": "1s", "$instance": ".*"}
for p in d["panels"]:
    for t in p.get("targets", []):
        q = t["expr"]
        for k, v in subst.items():
            q = q.replace(k, v)
        assert "$" not in q.replace("$1", ""), "unknown variable in %r" % q
        print("%s [%s]\t%s" % (p["title"], t["refId"], q.replace("\n", " ")))
# the instance variable's own query, as Grafana runs label_values()
print("variable instance\tgroup by (instance) (rocewatch_build_info)")
PY
while IFS=$'\t' read -r what q; do
	check "promtool: $what parses and runs" bash -c "promtool query instant '$PROM' \"\$1\" >'$TMPD/out' 2>&1 || { cat '$TMPD/out' >&2; false; }" _ "$q"
	check "$what: non-empty" wait_until 20 nonempty "$q"
done <"$TMPD/queries"
check "a query with a syntax error is refused (the check can fail)" bash -c "! promtool query instant '$PROM' 'sum by (instance (up)' >/dev/null 2>&1"
finish
