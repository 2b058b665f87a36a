#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier: `rocewatch check` on a node where `rocewatch serve` runs on its
# default port takes the counter rules from serve's history without being
# told (a private namespace: its 127.0.0.1:9479 is ours alone), and says so;
# once serve is gone it falls back to its own samples and says that too.
. "$(dirname "$0")/../lib.sh"
export COLUMNS=250 # whole lines to grep
need_root
need_cmd ip iproute2
need_cmd curl
need_cmd python3

ns=$(make_netns chk)
# A node-scope counter rule, so the verdict needs no RDMA device here.
cat >"$TMPD/t.yaml" <<'YAML'
profile: t
description: a counter rule any node has
rules:
  - name: rdma_devices_steady
    scope: node
    expr: increase(rdma_devices, 5m) == 0
    severity: warning
    summary: "{increase(rdma_devices, 5m)} RDMA devices came or went"
YAML
ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address 127.0.0.1:9479 --interval 100ms \
	--profile "$TMPD/t.yaml" >"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill $pid"
observed() { # serve's history of the rule covers at least 1 s
	ip netns exec "$ns" curl -sf http://127.0.0.1:9479/api/v1/checks | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
sys.exit(0 if (r["observed_seconds"] or 0) >= 1 else 1)'
}
wait_until 30 observed || die "serve did not build a history: $(tail -5 "$TMPD/serve.log")"

by_default() {
	ip netns exec "$ns" "$ROCEWATCH" check --profile "$TMPD/t.yaml" --format json >"$TMPD/c.json" || return 1
	python3 - "$TMPD/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h, r = d["history"], d["results"][0]
assert h["source"] == "serve" and h["serve_url"] == "http://127.0.0.1:9479", h
assert h["from_serve"] == h["counter_results"] == 1, h
assert r["outcome"] == "pass" and r["observed_seconds"] >= 1, r
PY
}
check "check uses the serve on 127.0.0.1:9479 by default" by_default
check "... and the text report says so" bash -c \
	"ip netns exec '$ns' '$ROCEWATCH' check --profile '$TMPD/t.yaml' | grep -q '^counter rules: 1 of 1 from rocewatch serve at http://127.0.0.1:9479, decided on its '"
check "--serve none: this check's own samples" bash -c \
	"ip netns exec '$ns' '$ROCEWATCH' check --profile '$TMPD/t.yaml' --serve none --format json | python3 -c 'import json,sys; h=json.load(sys.stdin)[\"history\"]; sys.exit(0 if h[\"source\"] == \"local\" else 1)'"

kill "$pid"
wait "$pid" 2>/dev/null || true
fallback() {
	ip netns exec "$ns" "$ROCEWATCH" check --profile "$TMPD/t.yaml" >"$TMPD/c.txt" || return 1
	grep -q "^counter rules: decided on 0\.[0-9]s of samples (this check's), less than their 5m window; no usable rocewatch serve at http://127.0.0.1:9479 (Couldn't connect to server); run \`rocewatch serve\` on the node, or pass --serve URL$" "$TMPD/c.txt" ||
		{ cat "$TMPD/c.txt" >&2; return 1; }
}
check "no serve: falls back to its own samples, and says why" fallback
finish
