#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shipped Prometheus rules: syntax (promtool check rules), behaviour
# (promtool test rules) and the example scrape config (promtool check config);
# and the rule-result alert over what a real serve exports for a
# misconfigured node (the label names the rules rely on are serve's own).
. "$(dirname "$0")/../lib.sh"
need_cmd promtool "apt-get install prometheus"
need_cmd curl
need_cmd python3
d="$SOURCE_DIR/contrib/prometheus"
check "promtool check rules" promtool check rules "$d/rocewatch-alerts.yml"
check "promtool test rules" bash -c "cd '$d' && promtool test rules rocewatch-alerts.test.yml"
# check config resolves rule_files relative to the config file
check "promtool check config (example)" promtool check config "$d/scrape-config.yml"

# serve on a node with PFC on priorities 0 and 3: pfc_only_on_roce_priority fires
port=$(free_port)
"$ROCEWATCH" serve --from "$SOURCE_DIR/tests/fixtures/snapshots/rules/pfc-0-and-3.json" \
	--interval 100ms --web.listen-address "127.0.0.1:$port" >"$TMPD/serve.log" 2>&1 &
on_exit "kill $!"
firing() {
	curl -sf "http://127.0.0.1:$port/metrics" >"$TMPD/metrics.txt" &&
		grep -q '^roce_alert_firing{alertname="pfc_only_on_roce_priority"' "$TMPD/metrics.txt"
}
wait_until 30 firing || die "serve never fired pfc_only_on_roce_priority: $(tail -5 "$TMPD/serve.log")"
python3 - "$TMPD/metrics.txt" "$d/rocewatch-alerts.yml" >"$TMPD/serve.test.yml" <<'PY'
import re, sys
series = [l.rsplit(" ", 1)[0] for l in open(sys.argv[1]) if l.startswith("roce_alert_firing{")]
print("rule_files: [%s]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:" % sys.argv[2])
for s in series:
    print("      - series: '%s'\n        values: '1x5'" % s.replace("{", '{instance="n1:9479",job="rocewatch",', 1))
print("    alert_rule_test:\n      - eval_time: 2m\n        alertname: RoceRuleFiring\n        exp_alerts:")
for s in series:
    labels = dict(re.findall(r'(\w+)="([^"]*)"', s))
    if labels["alertname"] == "RoceRuleUnknown" or labels["severity"] == "info":
        continue
    exp = {"severity": labels["severity"], "instance": "n1:9479", "job": "rocewatch",
           "rule": labels["alertname"], "profile": labels["profile"], "device": labels["device"]}
    if labels.get("port"):
        exp["port"] = labels["port"]
    print("          - exp_labels: {%s}" % ", ".join('%s: "%s"' % kv for kv in exp.items()))
    print("            exp_annotations:")
    print("              summary: \"RoCE rule %s fails on n1:9479 %s\"" % (exp["rule"], exp["device"]))
    print("              description: \"rocewatch's %s profile finds %s failing. `rocewatch check`"
          " on the node prints the rule's summary and how to fix it; GET /api/v1/alerts has the"
          " same.\"" % (exp["profile"], exp["rule"]))
PY
check "RoceRuleFiring fires for what serve's roce_alert_firing says (pfc_only_on_roce_priority on eth2)" \
	bash -c "grep -q 'rule: \"pfc_only_on_roce_priority\", profile: \"lossless-roce\", device: \"eth2\"' '$TMPD/serve.test.yml' && promtool test rules '$TMPD/serve.test.yml'"
finish
