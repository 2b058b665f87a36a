#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# e2e: `serve --from` a misconfigured snapshot pushes alerts to a real
# Alertmanager on loopback; they carry the right labels; a healthy snapshot
# resolves them there; with Alertmanager killed rocewatch keeps serving,
# counts failures, and delivers once Alertmanager is back.
. "$(dirname "$0")/../lib.sh"
AM=$(command -v prometheus-alertmanager || command -v alertmanager || true)
[ -n "$AM" ] || skip "needs prometheus-alertmanager (apt-get install prometheus-alertmanager)"
need_cmd curl
snaps="$SOURCE_DIR/tests/fixtures/snapshots/rules"

amport=$(free_port)
rport=$(free_port)
[ "$amport" != "$rport" ] || rport=$((amport + 1))
cat >"$TMPD/am.yml" <<YML
route:
  receiver: blackhole
  group_wait: 0s
  group_interval: 1s
receivers:
  - name: blackhole
YML
start_am() {
	"$AM" --config.file "$TMPD/am.yml" --storage.path "$TMPD/am-data" \
		--web.listen-address "127.0.0.1:$amport" --cluster.listen-address "" \
		>>"$TMPD/am.log" 2>&1 &
	echo $! >"$TMPD/am.pid"
	wait_until 30 curl -sf "http://127.0.0.1:$amport/-/ready" || die "alertmanager did not start: $(tail -5 "$TMPD/am.log")"
}
start_am
on_exit 'kill $(cat '"$TMPD"'/am.pid); wait $(cat '"$TMPD"'/am.pid)'

cp "$snaps/global-pause.json" "$TMPD/state.json"
"$ROCEWATCH" serve --from "$TMPD/state.json" --web.listen-address "127.0.0.1:$rport" \
	--interval 200ms --alertmanager.url "http://127.0.0.1:$amport" \
	--alertmanager.resend-interval 1s --alertmanager.timeout 1s >"$TMPD/serve.log" 2>&1 &
rpid=$!
on_exit "kill $rpid"

am_alerts() { curl -sf "http://127.0.0.1:$amport/api/v2/alerts?active=true&silenced=false&inhibited=false"; }
# am_has NAME [KEY=VALUE...]: an active alert in Alertmanager with these labels
am_has() {
	local name=$1; shift
	am_alerts | python3 -c '
import json, sys
want = dict(a.split("=", 1) for a in sys.argv[2:])
for a in json.load(sys.stdin):
    l = a["labels"]
    if l.get("alertname") == sys.argv[1] and all(l.get(k) == v for k, v in want.items()) \
       and a["status"]["state"] == "active":
        sys.exit(0)
sys.exit(1)' "$name" "$@"
}
export -f am_alerts am_has
export amport
metric() { curl -sf "http://127.0.0.1:$rport/metrics" | awk -v m="$1" 'index($0, m) == 1 { print $NF; exit }'; }

host=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print((d[0] if isinstance(d, list) else d)["host"])' "$snaps/global-pause.json")
check "global_pause_off fires in Alertmanager with its labels" \
	wait_until 20 am_has global_pause_off severity=critical profile=lossless-roce instance="$host"
check "alert carries the device label" bash -c "curl -sf 'http://127.0.0.1:$amport/api/v2/alerts' | grep -q '\"device\":\"eth'"
check "alert has a summary and a description" bash -c "curl -sf 'http://127.0.0.1:$amport/api/v2/alerts' | python3 -c 'import json,sys; a=[x for x in json.load(sys.stdin) if x[\"labels\"][\"alertname\"]==\"global_pause_off\"][0]; assert a[\"annotations\"][\"summary\"] and a[\"annotations\"][\"description\"], a'"
check "/api/v1/alerts lists it as firing" bash -c "curl -sf http://127.0.0.1:$rport/api/v1/alerts | grep -q '\"state\": \"firing\"'"
check "roce_alert_firing on /metrics" bash -c "curl -sf http://127.0.0.1:$rport/metrics | grep -q '^roce_alert_firing{alertname=\"global_pause_off\"'"
check "status page shows the firing alert" bash -c "curl -sf http://127.0.0.1:$rport/ | grep -q 'global_pause_off'"
check "nothing else fires on this snapshot" bash -c "am_alerts >/dev/null && ! am_has pfc_only_on_roce_priority"

# Healthy again: the alert resolves in Alertmanager.
cp "$snaps/good.json" "$TMPD/state.new" && mv "$TMPD/state.new" "$TMPD/state.json"
check "healthy snapshot resolves it in Alertmanager" wait_until 20 bash -c "am_alerts >/dev/null && ! am_has global_pause_off"
check "no longer firing on /metrics" wait_until 5 bash -c "! curl -sf http://127.0.0.1:$rport/metrics | grep -q '^roce_alert_firing{alertname=\"global_pause_off\"'"

# Alertmanager dies: rocewatch keeps serving and counts failures.
kill "$(cat "$TMPD/am.pid")"; wait "$(cat "$TMPD/am.pid")" 2>/dev/null || true
cp "$snaps/mtu-1500.json" "$TMPD/state.new" && mv "$TMPD/state.new" "$TMPD/state.json"
check "errors counted while Alertmanager is down" wait_until 15 bash -c "[ \"\$(curl -sf http://127.0.0.1:$rport/metrics | awk '/^rocewatch_alertmanager_errors_total/ {print \$NF}')\" -gt 0 ]"
t0=$(date +%s%N)
curl -sf "http://127.0.0.1:$rport/metrics" >/dev/null
t1=$(date +%s%N)
check "scrapes stay fast with Alertmanager down ($(( (t1 - t0) / 1000000 )) ms)" [ $(( (t1 - t0) / 1000000 )) -lt 500 ]
check "/healthz stays 200 (polling not blocked)" bash -c "sleep 1; [ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$rport/healthz)\" = 200 ]"
check "netdev_mtu fires locally meanwhile" wait_until 10 bash -c "curl -sf http://127.0.0.1:$rport/metrics | grep -q '^roce_alert_firing{alertname=\"netdev_mtu\"'"

# Back: delivered.
start_am
check "delivered once Alertmanager is back" wait_until 40 am_has netdev_mtu severity=critical
check "serve still running" kill -0 "$rpid"
check "no sanitizer reports" bash -c "! grep -E 'ERROR: AddressSanitizer|runtime error' '$TMPD/serve.log'"
finish
