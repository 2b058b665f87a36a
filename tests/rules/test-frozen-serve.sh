#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Frozen results in a running serve (docs/rules.md, Settled results): a counter rule
# over a 1 s window on a generated sysfs tree stands frozen once its window is whole
# (rocewatch_rules_standing_total{how="frozen"} counts it), a jump of the counter file,
# written in place as the kernel's file would change, is judged at once (fail, with the
# increase), the window passes it (pass again) and the result freezes again. Conditions
# are waited for, counted in polls and results, never timed.
. "$(dirname "$0")/../lib.sh"
need_cmd curl
need_cmd python3

python3 "$SOURCE_DIR/tests/bench/gen-sysfs.py" "$TMPD/sys" -n 1 --classic-only >/dev/null ||
	die "gen-sysfs.py failed"
ctr=$(echo "$TMPD"/sys/class/infiniband/*/ports/1/counters/link_downed)
[ -f "$ctr" ] || die "no link_downed in the generated tree"
cat >"$TMPD/t.yaml" <<'EOF'
profile: t
rules:
  - name: no_link_down
    scope: rdma_port
    severity: warning
    expr: increase(port["link_downed"], 1s) == 0
    summary: "{increase(port[\"link_downed\"], 1s)} link down event(s)"
EOF
port=$(free_port)
url="http://127.0.0.1:$port"
"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" --sysfs-root "$TMPD/sys" \
	--interval 100ms --config-interval 1h --netdev-exclude '.*' --profile "$TMPD/t.yaml" \
	>"$TMPD/log" 2>&1 &
pid=$!
stop_at_exit "$pid"
wait_until 20 curl -sf "$url/healthz" || die "serve did not come up: $(cat "$TMPD/log")"

frozen() { curl -sf "$url/metrics" | awk '/^rocewatch_rules_standing_total\{how="frozen"\} /{print $2}'; }
frozen_over() { local n; n=$(frozen); [ -n "$n" ] && [ "$n" -gt "$1" ]; }
# outcome and summary of the rule's one result
result() {
	curl -sf "$url/api/v1/checks" | python3 -c '
import json, sys
r = [x for x in json.load(sys.stdin)["results"] if x["rule"] == "no_link_down"]
print(r[0]["outcome"], r[0]["summary"]) if len(r) == 1 else sys.exit(1)'
}
is_result() { [ "$(result)" = "$1" ]; }

check "a whole window: the result stands frozen" wait_until 30 frozen_over 10
check "frozen, it passes" is_result "pass 0 link down events (over the last 1s)"
# in place, as a counter file changes (serve keeps the file open and preads it)
python3 - "$ctr" <<'EOF'
import sys
with open(sys.argv[1], "r+") as f:
    v = int(f.read())
    f.seek(0)
    f.write("%d\n" % (v + 1))
EOF
check "a jump while frozen: judged, with the increase" \
	wait_until 30 is_result "fail 1 link down event (over the last 1s)"
n=$(frozen)
check "the window passes it: pass again" \
	wait_until 30 is_result "pass 0 link down events (over the last 1s)"
check "and it freezes again" wait_until 30 frozen_over "$((n + 10))"
check "the alert fired and nothing failed" bash -c \
	"grep -q 'alert firing: no_link_down mlx5_0/1: 1 link down event' '$TMPD/log' && ! grep -q 'level=error' '$TMPD/log'"
finish
