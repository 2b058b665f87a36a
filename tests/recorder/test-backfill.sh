#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A recorded incident backfilled into a real Prometheus looks as it did live:
# serve --record replays the synthetic incident (a pause storm, retries, PFC
# turned on for priority 4) with the RDMA port DOWN for ten polls (1 s);
# `rocewatch export` of the recording, twice under two instance names (two
# nodes), goes through `promtool tsdb create-blocks-from openmetrics` into a
# Prometheus, which is then asked what the shipped dashboard asks: its
# instance list, every panel's query, and at chosen times whether the port
# is DOWN -- during the DOWN, and 5 s after it ended (not for the 5 minutes
# PromQL's lookback would carry an unmarked last sample).
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_cmd curl
need_cmd promtool "apt-get install prometheus"
need_cmd prometheus "apt-get install prometheus"

export ROCEWATCH_NO_PROGRESS=1
GEN="$SOURCE_DIR/tests/recorder/gen-snapshots.py"
DASH="$SOURCE_DIR/contrib/grafana/rocewatch.json"
python3 "$GEN" incident 100 "$TMPD/incident.json" >/dev/null
# the port goes DOWN at poll 62 and comes back at poll 72
python3 - "$TMPD/incident.json" <<'PY'
import json, sys
seq = json.load(open(sys.argv[1]))
for i, s in enumerate(seq):
    if 62 <= i <= 71:
        s["rdma_ports"][0]["fields"]["state"] = "DOWN"
json.dump(seq, open(sys.argv[1], "w"))
PY
port=$(free_port)
"$ROCEWATCH" serve --from "$TMPD/incident.json" --interval 100ms --config-interval 100ms \
	--web.listen-address "127.0.0.1:$port" --record "$TMPD/rec" >"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
committed() { [ "$(curl -sf "http://127.0.0.1:$port/metrics" | awk '$1=="rocewatch_recorder_last_committed_poll"{print $2}')" -ge 100 ] 2>/dev/null; }
wait_until 90 committed || die "serve did not record 100 polls: $(tail -5 "$TMPD/serve.log")"
kill "$pid"
wait "$pid" || true

# poll k of the snapshots is poll k+1 of a fresh recording: its time in seconds
poll_time() {
	python3 - "$TMPD/rec/rocewatch.db" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("%.3f" % (db.execute("SELECT t_ms FROM polls WHERE seq = ?", (int(sys.argv[2]) + 1,)).fetchone()[0] / 1000))
PY
}
t_down=$(poll_time 66)
t_up=$(poll_time 72)
t_end=$(poll_time 99)
t_after=$(python3 -c "print($t_up + 5)")
t_storm=$(poll_time 30)

check "export, instance gpu-node-07:9479" \
	"$ROCEWATCH" export --db "$TMPD/rec" --instance gpu-node-07:9479 -o "$TMPD/a.om"
check "export, the same recording as another node" \
	"$ROCEWATCH" export --db "$TMPD/rec" --instance gpu-node-08:9479 -o "$TMPD/b.om"
check "every sample names its instance and job" bash -c \
	"! grep -v '^#' '$TMPD/a.om' | grep -v '{instance=\"gpu-node-07:9479\",job=\"rocewatch\"'"
check "promtool tsdb create-blocks-from openmetrics takes both" bash -c \
	"promtool tsdb create-blocks-from openmetrics '$TMPD/a.om' '$TMPD/tsdb' >'$TMPD/blocks.log' 2>&1 &&
	 promtool tsdb create-blocks-from openmetrics '$TMPD/b.om' '$TMPD/tsdb' >>'$TMPD/blocks.log' 2>&1 ||
	 { tail -5 '$TMPD/blocks.log' >&2; false; }"

pport=$(free_port)
printf 'global:\n  scrape_interval: 15s\n' >"$TMPD/prometheus.yml"
prometheus --config.file "$TMPD/prometheus.yml" --storage.tsdb.path "$TMPD/tsdb" \
	--storage.tsdb.retention.time 100y --web.listen-address "127.0.0.1:$pport" >"$TMPD/prom.log" 2>&1 &
stop_at_exit $!
# query PROMQL [TIME]: the result vector as "labels value" lines
query() {
	curl -sf --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" \
		${2:+--data-urlencode "time=$2"} | python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    m = r["metric"]
    print(",".join("%s=%s" % kv for kv in sorted(m.items())), r["value"][1])'
}
loaded() { [ -n "$(query 'rocewatch_build_info' "$t_end")" ]; }
wait_until 60 loaded || die "Prometheus did not load the blocks: $(tail -5 "$TMPD/prom.log")"

# the dashboard's instance variable: label_values(rocewatch_build_info, instance)
instances() {
	curl -sf --get "http://127.0.0.1:$pport/api/v1/label/instance/values" \
		--data-urlencode 'match[]=rocewatch_build_info' --data-urlencode "start=$t_storm" \
		--data-urlencode "end=$t_end" | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["data"]))'
}
check "the dashboard's node list holds both nodes" bash -c \
	"$(declare -f instances); pport=$pport t_storm=$t_storm t_end=$t_end; [ \"\$(instances)\" = 'gpu-node-07:9479 gpu-node-08:9479' ]"
check "two nodes' exports stay apart (one pause series each)" bash -c \
	"$(declare -f query); pport=$pport;
	 [ \"\$(query 'count by (instance) (roce_pfc_pause_frames_total{direction=\"rx\",priority=\"3\"})' $t_end | wc -l)\" = 2 ]"
# the port state, as a dashboard or an alert asks it
down() { query 'roce_rdma_port_state_info{instance="gpu-node-07:9479",state="DOWN"} == 1' "$1"; }
check "during the DOWN, the port is DOWN" bash -c "$(declare -f query down); pport=$pport; [ -n \"\$(down $t_down)\" ]"
check "5 s after it came back, it is not DOWN any more (the end is marked)" bash -c \
	"$(declare -f query down); pport=$pport; [ -z \"\$(down $t_after)\" ] &&
	 [ -n \"\$(query 'roce_rdma_port_state_info{instance=\"gpu-node-07:9479\",state=\"ACTIVE\"} == 1' $t_after)\" ]"
# rule results and alerts, as the dashboard's "Failing rules" panel and an alert rule ask
check "the failing rules at the end: pfc_only_on_roce_priority among them" bash -c \
	"$(declare -f query); pport=$pport;
	 query 'roce_rule_result{instance=~\"gpu-node-07:9479\", outcome=\"fail\"} == 1' $t_end | grep -q 'rule=pfc_only_on_roce_priority'"
check "the alert that fired: pfc_only_on_roce_priority" bash -c \
	"$(declare -f query); pport=$pport;
	 query 'roce_alert_firing{instance=\"gpu-node-07:9479\"}' $t_end | grep -q 'alertname=pfc_only_on_roce_priority'"
check "before PFC changed, it did not fail" bash -c \
	"$(declare -f query); pport=$pport;
	 ! query 'roce_rule_result{instance=\"gpu-node-07:9479\", outcome=\"fail\"} == 1' $t_storm | grep -q 'rule=pfc_only_on_roce_priority'"
# every panel of the shipped dashboard, its variables filled in as Grafana does for one node
python3 - "$DASH" >"$TMPD/queries" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
subst = {"$__rate_interval": "1s", "$__range": "30s", "$__interval": "1s",
         "$instance": "gpu-node-07:9479"}
for p in d["panels"]:
    for t in p.get("targets", []):
        q = t["expr"]
        for k, v in subst.items():
            q = q.replace(k, v)
        print("%s [%s]\t%s" % (p["title"], t["refId"], q.replace("\n", " ")))
PY
# the panels that must show the incident (the others may be empty for this node; Retries/s
# [A] is retries exceeded, which the incident has none of)
while IFS=$'\t' read -r what q; do
	case $what in
	"PFC pause frames/s"* | "Retries/s [B]" | "Failing rules"* | "Rule outcomes"* | "active_mtu vs netdev MTU"*) ;;
	*) continue ;;
	esac
	# the storm's time for the rates, the end for the rest
	at=$t_end
	case $what in "PFC pause frames/s"*) at=$t_storm ;; "Retries/s"*) at=$(poll_time 46) ;; esac
	check "dashboard panel $what: data at the incident's time" bash -c \
		"$(declare -f query); pport=$pport; [ -n \"\$(query \"\$1\" $at)\" ]" _ "$q"
done <"$TMPD/queries"
finish
