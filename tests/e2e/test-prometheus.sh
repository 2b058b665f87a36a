#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# e2e tier: a real Prometheus scrapes `rocewatch serve` on loopback inside a
# private namespace; its HTTP API must report up == 1 and the veth's MTU, and
# promtool must accept the exposition.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd prometheus "apt-get install prometheus"
need_cmd promtool "apt-get install prometheus"
need_cmd curl

ns=$(make_netns e2e)
ip -n "$ns" link add e2ea type veth peer name e2eb
ip -n "$ns" link set e2ea mtu 9000 up
ip -n "$ns" link set e2eb up
rport=$(free_port)
pport=$(free_port)
[ "$rport" != "$pport" ] || pport=$((rport + 1))

ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$rport" --interval 500ms \
	>"$TMPD/serve.log" 2>&1 &
on_exit "kill $!"

cat >"$TMPD/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rocewatch
    static_configs:
      - targets: ['127.0.0.1:$rport']
YML
check "promtool accepts the scrape config" promtool check config "$TMPD/prometheus.yml"
ip netns exec "$ns" prometheus --config.file "$TMPD/prometheus.yml" --storage.tsdb.path "$TMPD/tsdb" \
	--web.listen-address "127.0.0.1:$pport" >"$TMPD/prom.log" 2>&1 &
stop_at_exit $!

query() {
	ip netns exec "$ns" curl -sf --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1"
}
value_is() { # QUERY VALUE
	query "$1" | python3 -c "import json,sys; r=json.load(sys.stdin)['data']['result']; sys.exit(0 if r and r[0]['value'][1]=='$2' else 1)"
}

wait_until 60 value_is 'up{job="rocewatch"}' 1 || echo "prometheus log: $(tail -5 "$TMPD/prom.log")"
check "Prometheus sees up == 1" value_is 'up{job="rocewatch"}' 1
check "Prometheus has the veth MTU" wait_until 20 value_is 'roce_netdev_mtu_bytes{device="e2ea"}' 9000
check "Prometheus has collector success" value_is 'rocewatch_collector_success{collector="link"}' 1
check "no scrape sample errors" value_is 'scrape_samples_post_metric_relabeling{job="rocewatch"} > 0' "$(query 'scrape_samples_post_metric_relabeling{job="rocewatch"}' | python3 -c "import json,sys; print(json.load(sys.stdin)['data']['result'][0]['value'][1])")"

ip netns exec "$ns" curl -sf "http://127.0.0.1:$rport/metrics" >"$TMPD/metrics.txt"
check "promtool check metrics passes" bash -c "promtool check metrics < '$TMPD/metrics.txt'"

# A default install: wire is off by default.  Disabled is not failed: no
# rocewatch_collector_success series for it (node_exporter exports enabled
# collectors only), and the status page shows it grey, not red.
check "a disabled collector (wire) has no collector series" bash -c \
	"grep -q '^rocewatch_collector_success{collector=\"link\"} 1\$' '$TMPD/metrics.txt' && ! grep -q 'collector=\"wire\"' '$TMPD/metrics.txt'"
check "the status page shows wire disabled, not failed" bash -c \
	"ip netns exec '$ns' curl -sf 'http://127.0.0.1:$rport/' | grep -q '<td>wire</td><td class=\"disabled\">disabled<'"
# ... so the shipped RocewatchCollectorFailing alert stays silent over this very scrape
python3 - "$TMPD/metrics.txt" "$SOURCE_DIR/contrib/prometheus/rocewatch-alerts.yml" >"$TMPD/default.test.yml" <<'PY'
import sys
series = []
for line in open(sys.argv[1]):
    if line.startswith("rocewatch_collector_success{"):
        name_labels, value = line.rsplit(" ", 1)
        labels = name_labels[len("rocewatch_collector_success{"):-1]
        series.append((labels, value.strip()))
print("rule_files: [%s]" % sys.argv[2])
print("evaluation_interval: 1m")
print("tests:")
print("  - interval: 1m")
print("    input_series:")
for labels, value in series:
    print("      - series: 'rocewatch_collector_success{%s,instance=\"n1:9479\",job=\"rocewatch\"}'" % labels)
    print("        values: '%sx15'" % value)
print("    alert_rule_test:")
print("      - eval_time: 10m")
print("        alertname: RocewatchCollectorFailing")
print("        exp_alerts: []")
PY
check "promtool: RocewatchCollectorFailing does not fire on this default install's scrape" \
	promtool test rules "$TMPD/default.test.yml"
finish
