#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# e2e tier: a real Prometheus scrapes `rocewatch serve` over HTTPS with
# basic_auth (and, on a second serve, with a client certificate), the way a
# site would configure it.  The right job is up with the veth's MTU; a wrong
# password, plain HTTP to the TLS port and a missing client certificate are
# down, with Prometheus's own reason.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../web/tls-lib.sh"
need_root
need_cmd prometheus "apt-get install prometheus"
need_cmd promtool "apt-get install prometheus"
need_cmd curl
need_cmd openssl
need_cmd htpasswd "apt-get install apache2-utils"

ns=$(make_netns e2etls)
ip -n "$ns" link add e2ta type veth peer name e2tb
ip -n "$ns" link set e2ta mtu 9000 up
ip -n "$ns" link set e2tb up
C="$TMPD/tls"
mkdir -p "$C"
make_tls_set "$C" || die "openssl could not make the test certificates"
rport=$(free_port)
mport=$(free_port)
pport=$(free_port)

cat >"$TMPD/web.yml" <<EOF
tls_server_config:
  cert_file: $C/server.crt
  key_file: $C/server.key
basic_auth_users:
  prometheus: $(bcrypt_hash 'scrape-secret' 10)
EOF
cat >"$TMPD/mtls.yml" <<EOF
tls_server_config:
  cert_file: $C/server.crt
  key_file: $C/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $C/ca.crt
EOF
ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$rport" --interval 500ms \
	--web.config.file "$TMPD/web.yml" >"$TMPD/serve.log" 2>&1 &
on_exit "kill $!"
ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$mport" --interval 500ms \
	--web.config.file "$TMPD/mtls.yml" >"$TMPD/serve-mtls.log" 2>&1 &
on_exit "kill $!"

cat >"$TMPD/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rocewatch-https
    scheme: https
    tls_config:
      ca_file: $C/ca.crt
      server_name: localhost
    basic_auth:
      username: prometheus
      password: scrape-secret
    static_configs:
      - targets: ['127.0.0.1:$rport']
  - job_name: wrong-password
    scheme: https
    tls_config:
      ca_file: $C/ca.crt
      server_name: localhost
    basic_auth:
      username: prometheus
      password: guessed
    static_configs:
      - targets: ['127.0.0.1:$rport']
  - job_name: plain-http
    static_configs:
      - targets: ['127.0.0.1:$rport']
  - job_name: client-cert
    scheme: https
    tls_config:
      ca_file: $C/ca.crt
      cert_file: $C/client.crt
      key_file: $C/client.key
      server_name: localhost
    static_configs:
      - targets: ['127.0.0.1:$mport']
  - job_name: no-client-cert
    scheme: https
    tls_config:
      ca_file: $C/ca.crt
      server_name: localhost
    static_configs:
      - targets: ['127.0.0.1:$mport']
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
last_error() { # JOB: the scrape error Prometheus reports for the job's target
	ip netns exec "$ns" curl -sf "http://127.0.0.1:$pport/api/v1/targets" | python3 -c "
import json, sys
for t in json.load(sys.stdin)['data']['activeTargets']:
    if t['labels']['job'] == sys.argv[1]:
        print(t['lastError'])" "$1"
}

wait_until 60 value_is 'up{job="rocewatch-https"}' 1 || echo "prometheus log: $(tail -5 "$TMPD/prom.log")"
check "HTTPS + basic_auth: up == 1" value_is 'up{job="rocewatch-https"}' 1
check "HTTPS + basic_auth: the veth MTU arrives" \
	wait_until 20 value_is 'roce_netdev_mtu_bytes{job="rocewatch-https",device="e2ta"}' 9000
check "wrong password: up == 0" wait_until 20 value_is 'up{job="wrong-password"}' 0
err=$(last_error wrong-password)
echo "  wrong-password: $err"
check "wrong password: Prometheus saw 401" grep -q 401 <<<"$err"
check "plain HTTP to the TLS port: up == 0" wait_until 20 value_is 'up{job="plain-http"}' 0
err=$(last_error plain-http)
echo "  plain-http: $err"
check "plain HTTP to the TLS port: Prometheus saw 400" grep -q 400 <<<"$err"
check "client certificate: up == 1" wait_until 30 value_is 'up{job="client-cert"}' 1
check "no client certificate: up == 0" wait_until 20 value_is 'up{job="no-client-cert"}' 0
echo "  no-client-cert: $(last_error no-client-cert)"

ip netns exec "$ns" curl -sf --cacert "$C/ca.crt" -u prometheus:scrape-secret \
	"https://localhost:$rport/metrics" --resolve "localhost:$rport:127.0.0.1" >"$TMPD/metrics.txt"
check "promtool check metrics passes (over HTTPS)" bash -c "promtool check metrics < '$TMPD/metrics.txt'"
finish
