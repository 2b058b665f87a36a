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
on_exit "kill $!"

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
finish
