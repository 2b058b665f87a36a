#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rules in a running serve: results on /metrics and /api/v1/checks after every poll,
# SIGHUP reloads the rule file (a good file takes effect with the counter history
# kept; a bad file keeps the old rules and says so in the log and the metrics).
. "$(dirname "$0")/../lib.sh"
need_cmd curl

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
port=$(free_port)
url="http://127.0.0.1:$port"
cp "$SOURCE_DIR/rules/profiles/lossless-roce.yaml" "$TMPD/site.yaml"

"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" --interval 100ms \
	--from "$FX/good.json" --profile "$TMPD/site.yaml" >"$TMPD/log" 2>&1 &
pid=$!
on_exit "kill $pid"
wait_until 10 curl -sf "$url/healthz" || die "serve did not come up: $(cat "$TMPD/log")"

checks() { curl -sf "$url/api/v1/checks" >"$TMPD/c.json" && python3 - "$TMPD/c.json" "$@"; }
metric() { curl -sf "$url/metrics" | grep -E "^$1( |\{)" ; }

# results after polls; counter rules decided (two samples or more)
all_pass() {
	checks 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "OK" and d["counts"]["fail"] == 0 and d["counts"]["unknown"] == 0, d["counts"]
assert d["last_reload_success"] is True' 2>/dev/null
}
check "/api/v1/checks: OK, nothing unknown" wait_until 5 all_pass
check "/metrics: one roce_rule_result per rule and object" bash -c \
	"curl -sf '$url/metrics' | grep -q '^roce_rule_result{profile=\"lossless-roce\",rule=\"pfc_only_on_roce_priority\",severity=\"critical\",device=\"eth2\",outcome=\"pass\"} 1$'"
check "/metrics: port results carry device, port and netdev" bash -c \
	"curl -sf '$url/metrics' | grep -q '^roce_rule_result{profile=\"lossless-roce\",rule=\"active_mtu_4096\",severity=\"critical\",device=\"mlx5_0\",port=\"1\",netdev=\"eth2\",outcome=\"pass\"} 1$'"
check "/metrics: skipped results have no series" bash -c \
	"! curl -sf '$url/metrics' | grep -q 'roce_rule_result{.*device=\"eno1\"'"
check "/metrics: reload success 1 at start" bash -c "curl -sf '$url/metrics' | grep -q '^rocewatch_rules_reload_success 1$'"
if command -v promtool >/dev/null; then
	check "/metrics passes promtool check metrics" bash -c "curl -sf '$url/metrics' | promtool check metrics"
fi

# a good reload: min_mtu 10000 makes netdev_mtu fail; counter rules keep their history
t0=$(metric rocewatch_rules_last_reload_timestamp_seconds | awk '{print $2}')
sed -i 's/^  min_mtu: 4200 /  min_mtu: 10000/' "$TMPD/site.yaml"
kill -HUP "$pid"
reloaded_good() {
	checks 'import json,sys
d = json.load(open(sys.argv[1]))
f = sorted("%s@%s" % (r["rule"], r["object"].get("device")) for r in d["results"] if r["outcome"] == "fail")
assert f == ["netdev_mtu@eth2", "netdev_mtu@eth3"], f
# history was carried over: no counter rule fell back to "needs two samples"
assert d["counts"]["unknown"] == 0, [r["reason"] for r in d["results"] if r["outcome"] == "unknown"]
assert d["last_reload_success"] is True' 2>/dev/null
}
check "SIGHUP with a good file: new rules in effect" wait_until 5 reloaded_good
# /api/v1/checks has the new results as soon as the rules are swapped; the log line and
# /metrics (published after the reload returns) follow a moment later: wait for them
check "SIGHUP with a good file: reload timestamp moved" wait_until 5 bash -c \
	"[ \"\$(curl -sf '$url/metrics' | awk '/^rocewatch_rules_last_reload_timestamp_seconds /{print \$2}')\" != '$t0' ]"
check "SIGHUP with a good file: logged" wait_until 5 grep -Eq "rules: reloaded, [0-9]+ rules in 1 profiles" "$TMPD/log"
check "/metrics: the failing rule is there" wait_until 5 bash -c \
	"curl -sf '$url/metrics' | grep -q 'rule=\"netdev_mtu\",severity=\"critical\",device=\"eth2\",outcome=\"fail\"} 1'"
check "/metrics: status 2 (CRITICAL)" bash -c "curl -sf '$url/metrics' | grep -q '^roce_rules_status 2$'"

# a bad reload: the old rules stay, the failure shows in the log and the metrics
cat >>"$TMPD/site.yaml" <<'EOF'
  - name: broken
    scope: netdev
    severity: warning
    expr: mtu == "big"
EOF
kill -HUP "$pid"
reload_failed() { metric rocewatch_rules_reload_success | grep -q ' 0$'; }
check "SIGHUP with a bad file: reload_success 0" wait_until 5 reload_failed
check "SIGHUP with a bad file: failures counted" bash -c "curl -sf '$url/metrics' | grep -q '^rocewatch_rules_reload_failures_total 1$'"
check "SIGHUP with a bad file: file:line:col in the log" \
	grep -q "site.yaml:[0-9]*:15: error: expr: type mismatch: '==' cannot compare number with string" "$TMPD/log"
check "SIGHUP with a bad file: 'keeping the previous rules' logged" grep -q "keeping the previous rules" "$TMPD/log"
still_old() {
	checks 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["last_reload_success"] is False
assert not [r for r in d["results"] if r["rule"] == "broken"]
assert [r for r in d["results"] if r["rule"] == "netdev_mtu" and r["outcome"] == "fail"]
assert d["evaluations"] > 0'
}
check "SIGHUP with a bad file: the previous rules still evaluate" still_old
n1=$(curl -sf "$url/api/v1/checks" | python3 -c 'import json,sys; print(json.load(sys.stdin)["evaluations"])')
sleep 0.5
n2=$(curl -sf "$url/api/v1/checks" | python3 -c 'import json,sys; print(json.load(sys.stdin)["evaluations"])')
check "polls go on evaluating after the failed reload ($n1 -> $n2)" test "$n2" -gt "$n1"
check "serve is still healthy" curl -sf -o /dev/null "$url/healthz"

kill -TERM "$pid"
wait "$pid"
check "serve exits 0 on SIGTERM" test $? -eq 0

# bad rules at start-up: serve refuses to start, naming the place
bad_start() {
	local rc=0
	timeout 10 "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$(free_port)" \
		--from "$FX/good.json" --profile "$TMPD/site.yaml" >"$TMPD/o" 2>"$TMPD/e" || rc=$?
	[ "$rc" -eq 1 ] && grep -q "site.yaml:[0-9]*:15: error: expr: type mismatch" "$TMPD/e"
}
check "serve with bad rules: exit 1 with file:line:col" bad_start

# issue 41: an undecided critical beside a failing warning is UNKNOWN on the API, /metrics
# and the status page, as in check (one precedence: CRITICAL > UNKNOWN > WARNING > OK)
port2=$(free_port)
"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port2" --interval 100ms \
	--from "$FX/trust-unknown-cnp-40.json" >"$TMPD/log2" 2>&1 &
pid2=$!
on_exit "kill $pid2"
wait_until 10 curl -sf "http://127.0.0.1:$port2/healthz" || die "serve did not come up: $(cat "$TMPD/log2")"
api_unknown() {
	curl -sf "http://127.0.0.1:$port2/api/v1/checks" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["status"] == "UNKNOWN" and d["counts"]["fail"] == 1 and d["counts"]["unknown"] == 1, (d["status"], d["counts"])'
}
check "/api/v1/checks: an unknown critical and a failing warning are UNKNOWN" wait_until 10 api_unknown
check "/metrics: roce_rules_status 3 (UNKNOWN)" bash -c "curl -sf 'http://127.0.0.1:$port2/metrics' | grep -q '^roce_rules_status 3$'"
check "the status page: the header is unknown" bash -c "curl -sf 'http://127.0.0.1:$port2/' | grep -q '<header id=\"verdict\" class=\"unknown\"'"

finish
