#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier: `rocewatch check` on a node where `rocewatch serve` runs on its
# default port takes the counter rules from serve's history without being
# told (a private namespace: its 127.0.0.1:9479 is ours alone), and says so;
# once serve is gone it falls back to its own samples and says that too.
# A serve behind --web.config.file (TLS + basic auth) is read with the client
# flags check shares with fleet check (--ca-file, --user, --password-file).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../web/tls-lib.sh"
export COLUMNS=250 # whole lines to grep
need_root
need_cmd ip iproute2
need_cmd curl
need_cmd python3
need_cmd openssl
need_cmd htpasswd "apt-get install apache2-utils"

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

# ---- a hardened serve: TLS and basic auth ----
C="$TMPD/tls"
mkdir -p "$C"
make_tls_set "$C" || die "openssl could not make the test certificates"
printf 'check-secret\n' >"$TMPD/pw"
cat >"$TMPD/web.yml" <<EOF
tls_server_config:
  cert_file: $C/server.crt
  key_file: $C/server.key
basic_auth_users:
  checker: $(bcrypt_hash 'check-secret' 4)
EOF
ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address 127.0.0.1:9443 --interval 100ms \
	--profile "$TMPD/t.yaml" --web.config.file "$TMPD/web.yml" >"$TMPD/serve-tls.log" 2>&1 &
tpid=$!
on_exit "kill $tpid"
observed_tls() {
	ip netns exec "$ns" curl -sf --cacert "$C/ca.crt" -u checker:check-secret \
		https://127.0.0.1:9443/api/v1/checks | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
sys.exit(0 if (r["observed_seconds"] or 0) >= 1 else 1)'
}
wait_until 30 observed_tls || die "the TLS serve did not build a history: $(tail -5 "$TMPD/serve-tls.log")"
history_of() { # CHECK-ARGS...: the history object of a JSON check, on stdout
	ip netns exec "$ns" "$ROCEWATCH" check --profile "$TMPD/t.yaml" --format json \
		--serve https://127.0.0.1:9443 "$@" |
		python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["history"]))'
}
tls_auth() {
	h=$(history_of --ca-file "$C/ca.crt" --user checker --password-file "$TMPD/pw") || return 1
	python3 -c 'import json,sys; h=json.loads(sys.argv[1]); assert h["source"] == "serve" and h["from_serve"] == 1, h' "$h"
}
check "check --serve https:// with --ca-file, --user, --password-file takes serve's history" tls_auth
no_auth() {
	h=$(history_of --ca-file "$C/ca.crt") || return 1
	python3 -c 'import json,sys; h=json.loads(sys.argv[1]); assert h["source"] == "local" and "HTTP 401" in h["note"], h' "$h"
}
check "... without the credentials: its own samples, and serve's 401 said" no_auth
client_config() {
	cat >"$TMPD/client.yml" <<EOF
tls_config:
  ca_file: $C/ca.crt
basic_auth:
  username: checker
  password_file: $TMPD/pw
EOF
	h=$(history_of --client-config "$TMPD/client.yml") || return 1
	python3 -c 'import json,sys; h=json.loads(sys.argv[1]); assert h["source"] == "serve", h' "$h"
}
check "... and with the same settings from --client-config" client_config
finish
