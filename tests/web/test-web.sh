#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --web.config.file against real clients (curl, openssl s_client, raw sockets):
# TLS with basic auth, 401 for wrong or missing credentials, plain HTTP on the
# TLS port refused, client certificates required and verified, min_version
# enforced, certificate rotation without a restart (and a broken rotation
# keeping the old pair), extra headers, the rate limit, the capture API off
# by default, and a bad file refused before serve starts.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tls-lib.sh"
need_cmd curl
need_cmd openssl
need_cmd htpasswd "apt-get install apache2-utils"

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules/good.json"
C="$TMPD/tls"
mkdir -p "$C"
make_tls_set "$C" || die "openssl could not make the test certificates"
hash=$(bcrypt_hash 's3cret' 4)

start() { # NAME CONFIG [ARGS...]: serve with CONFIG; sets $port, $pid
	local name=$1 conf=$2
	shift 2
	port=$(free_port)
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" --interval 200ms --from "$FX" \
		--web.config.file "$conf" "$@" >"$TMPD/$name.log" 2>&1 &
	pid=$!
	on_exit "kill $pid"
}
up() { curl -s -o /dev/null --cacert "$C/ca.crt" "https://localhost:$port/healthz" "$@"; }
code() { curl -s -o /dev/null -w '%{http_code}' --cacert "$C/ca.crt" "$@"; }

# ---- TLS + basic auth ----
cat >"$TMPD/web.yml" <<EOF
tls_server_config:
  cert_file: tls/server.crt
  key_file: tls/server.key
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
    X-Frame-Options: deny
basic_auth_users:
  alice: $hash
EOF
start tls "$TMPD/web.yml"
wait_until 15 up || die "serve did not come up: $(cat "$TMPD/tls.log")"
url="https://localhost:$port"
# A TLS handshake's small records must not wait on Nagle and the peer's delayed ACK
# (~40 ms a handshake on loopback): every accepted connection gets TCP_NODELAY before
# anything is sent.  Seen from outside with strace rather than timed.
if command -v strace >/dev/null; then
	sport=$(free_port)
	strace -f -qq -e trace=accept4,setsockopt -o "$TMPD/nodelay.strace" \
		"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$sport" --interval 200ms --from "$FX" \
		--web.config.file "$TMPD/web.yml" >"$TMPD/nodelay.log" 2>&1 &
	spid=$!
	on_exit "kill $spid"
	wait_until 30 curl -s -o /dev/null --cacert "$C/ca.crt" "https://localhost:$sport/healthz" ||
		die "serve under strace did not come up: $(cat "$TMPD/nodelay.log")"
	kill $(pgrep -P "$spid") # serve; strace ends with it
	wait "$spid" 2>/dev/null || true
	check "each accepted connection gets TCP_NODELAY" python3 -c "
import re, sys
text = open('$TMPD/nodelay.strace').read()
acc = [m.group(1) for m in re.finditer(r'accept4\\(\\d+, .*\\) = (\\d+)', text)]
nd = set(re.findall(r'setsockopt\\((\\d+), SOL_TCP, TCP_NODELAY, \\[1\\]', text))
sys.exit(0 if acc and set(acc) <= nd else 'accepted %s, TCP_NODELAY on %s' % (acc, sorted(nd)))"
else
	echo "# TCP_NODELAY not checked: no strace (contrib/install-deps.sh test)"
fi
check "TLS + basic auth: /metrics 200 with the right password" \
	[ "$(code -u alice:s3cret "$url/metrics")" = 200 ]
check "the exposition comes over TLS" bash -c \
	"curl -sf --cacert '$C/ca.crt' -u alice:s3cret '$url/metrics' | grep -q '^rocewatch_build_info'"
check "no credentials: 401" [ "$(code "$url/metrics")" = 401 ]
check "a wrong password: 401" [ "$(code -u alice:nope "$url/metrics")" = 401 ]
check "an unknown user: 401" [ "$(code -u mallory:s3cret "$url/metrics")" = 401 ]
check "every endpoint is protected (/healthz, /api/v1/state)" bash -c \
	"[ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$C/ca.crt' '$url/healthz')\" = 401 ] &&
	 [ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$C/ca.crt' '$url/api/v1/state')\" = 401 ]"
check "401 asks for Basic credentials" bash -c \
	"curl -s -D - -o /dev/null --cacert '$C/ca.crt' '$url/metrics' | grep -qi '^WWW-Authenticate: Basic realm=\"rocewatch\"'"
check "configured headers are on responses (401s too)" bash -c \
	"h=\$(curl -s -D - -o /dev/null --cacert '$C/ca.crt' -u alice:s3cret '$url/metrics');
	 echo \"\$h\" | grep -qi '^X-Content-Type-Options: nosniff' && echo \"\$h\" | grep -qi '^X-Frame-Options: deny' &&
	 curl -s -D - -o /dev/null --cacert '$C/ca.crt' '$url/metrics' | grep -qi '^X-Frame-Options: deny'"
check "plain HTTP on the TLS port: 400, no data" bash -c \
	"out=\$(curl -s -w '%{http_code}' 'http://127.0.0.1:$port/metrics');
	 [ \"\${out: -3}\" = 400 ] && echo \"\$out\" | grep -q 'HTTP request to an HTTPS server' && ! echo \"\$out\" | grep -q rocewatch_"
check "an untrusted server certificate is refused by the client (no --cacert)" \
	bash -c "! curl -sf -u alice:s3cret '$url/metrics' >/dev/null 2>&1"
check "the capture API is off by default: 403" \
	[ "$(code -u alice:s3cret -X POST "$url/api/v1/capture")" = 403 ]

# rotation: a new certificate and key (moved into place, as cert-manager or certbot do)
fp1=$(served_fingerprint "127.0.0.1:$port")
make_cert "$C" server2 ca serverAuth "DNS:localhost,IP:127.0.0.1"
cp "$C/server2.crt" "$C/new.crt" && cp "$C/server2.key" "$C/new.key"
mv "$C/new.key" "$C/server.key" && mv "$C/new.crt" "$C/server.crt"
fp2=$(openssl x509 -noout -fingerprint -sha256 -in "$C/server2.crt")
check "the old certificate was served before the rotation" [ -n "$fp1" ] && [ "$fp1" != "$fp2" ]
check "rotation: the new certificate is served without a restart" \
	wait_until 10 bash -c "[ \"\$(served_fingerprint 127.0.0.1:$port)\" = '$fp2' ]"
check "rotation: the same serve process still answers" \
	[ "$(code -u alice:s3cret "$url/metrics")" = 200 ]
# a broken rotation (a key that is not the certificate's): the previous pair keeps serving.
# (The rotation above may have logged a mismatch for a moment between its two moves.)
mismatch() { grep -c "key_file: .*server.key does not belong to the certificate" "$TMPD/tls.log"; }
n0=$(mismatch || true)
sleep 1.2 # one refresh period: a transient mismatch above has been retried and cleared
n0=$(mismatch || true)
cp "$C/client.key" "$C/server.key"
check "a mismatched key is reported, naming the file" \
	wait_until 10 bash -c "[ \$(grep -c 'key_file: .*server.key does not belong to the certificate' '$TMPD/tls.log') -gt $n0 ]"
check "a mismatched key leaves the previous certificate serving" bash -c \
	"[ \"\$(served_fingerprint 127.0.0.1:$port)\" = '$fp2' ] &&
	 [ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$C/ca.crt' -u alice:s3cret '$url/metrics')\" = 200 ]"
kill "$pid"
wait "$pid" 2>/dev/null || true
cp "$C/server2.key" "$C/server.key"

# ---- client certificates, TLS 1.3 only ----
cat >"$TMPD/mtls.yml" <<EOF
tls_server_config:
  cert_file: $C/server.crt
  key_file: $C/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $C/ca.crt
  min_version: TLS13
EOF
start mtls "$TMPD/mtls.yml"
url="https://localhost:$port"
cl=(--cert "$C/client.crt" --key "$C/client.key")
wait_until 15 up "${cl[@]}" || die "serve (mTLS) did not come up: $(cat "$TMPD/mtls.log")"
check "client certificate signed by client_ca_file: 200" [ "$(code "${cl[@]}" "$url/metrics")" = 200 ]
check "no client certificate: refused, nothing served" bash -c \
	"! curl -s --cacert '$C/ca.crt' '$url/metrics' | grep -q rocewatch_"
check "no client certificate: nothing served to openssl s_client either" bash -c \
	"! printf 'GET /metrics HTTP/1.0\r\n\r\n' | openssl s_client -quiet -connect 127.0.0.1:$port -CAfile '$C/ca.crt' 2>/dev/null | grep -q rocewatch_build_info"
check "the same request with the client certificate is served (s_client)" bash -c \
	"printf 'GET /metrics HTTP/1.0\r\n\r\n' | openssl s_client -quiet -connect 127.0.0.1:$port -CAfile '$C/ca.crt' -cert '$C/client.crt' -key '$C/client.key' 2>/dev/null | grep -q rocewatch_build_info"
check "a certificate no configured CA signed: refused" bash -c \
	"! curl -s --cacert '$C/ca.crt' --cert '$C/rogue.crt' --key '$C/rogue.key' '$url/metrics' | grep -q rocewatch_"
check "min_version TLS13: a TLS 1.2 client is refused" bash -c \
	"! curl -s --tls-max 1.2 --cacert '$C/ca.crt' --cert '$C/client.crt' --key '$C/client.key' '$url/metrics' | grep -q rocewatch_"
check "min_version TLS13: the same client with TLS 1.3 is served" \
	[ "$(code --tlsv1.3 "${cl[@]}" "$url/metrics")" = 200 ]
kill "$pid"
wait "$pid" 2>/dev/null || true

# ---- basic auth on plain HTTP, the rate limit, the capture API when enabled ----
cat >"$TMPD/plain.yml" <<EOF
basic_auth_users:
  alice: $hash
rate_limit:
  interval: 1h
  burst: 5
EOF
start plain "$TMPD/plain.yml" --web.enable-capture-api
wait_until 15 curl -s -o /dev/null "http://127.0.0.1:$port/healthz" || die "serve (plain) did not come up"
codes=$(for i in 1 2 3 4 5 6 7; do curl -s -o /dev/null -w '%{http_code} ' -u alice:s3cret "http://127.0.0.1:$port/metrics"; done)
echo "  rate limit burst 5, 7 requests: $codes"
check "rate_limit: a burst of 5 passes, then 429" bash -c \
	"echo '$codes' | grep -Eq '^(200|401|503) [0-9 ]*429 $' && [ \$(echo '$codes' | grep -o 429 | wc -l) -ge 2 ]"
kill "$pid"
wait "$pid" 2>/dev/null || true
cat >"$TMPD/plain.yml" <<EOF
basic_auth_users:
  alice: $hash
EOF
start plain2 "$TMPD/plain.yml" --web.enable-capture-api
wait_until 15 bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -u alice:s3cret http://127.0.0.1:$port/healthz)\" = 200 ]" ||
	die "serve (plain2) did not come up"
check "capture API enabled: only for authenticated users (401 without)" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/api/v1/capture")" = 401 ]
check "capture API enabled, authenticated, no --record: 409" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' -u alice:s3cret -X POST "http://127.0.0.1:$port/api/v1/capture")" = 409 ]
kill "$pid"
wait "$pid" 2>/dev/null || true

# ---- bad files: one clear line naming file, position and key; serve does not start ----
bad() { # DESCRIPTION EXPECTED-TEXT: the config in $TMPD/bad.yml is refused
	local out rc=0 ok=0
	out=$(timeout 20 "$ROCEWATCH" serve --web.listen-address 127.0.0.1:0 --from "$FX" \
		--web.config.file "$TMPD/bad.yml" 2>&1) || rc=$?
	if [ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
		printf '%s' "$out" | grep -qF -- "$2"; then
		ok=1
	fi
	check "$1 (exit 2, one line naming it)" [ "$ok" = 1 ] || echo "  got rc=$rc: $out"
}
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_auth: RequireAndVerifyClientCert\n' \
	"$C/server.crt" "$C/server.key" >"$TMPD/bad.yml"
bad "an unknown key" "bad.yml:4:3: tls_server_config.client_auth: unknown key"
printf 'basic_auth_users:\n  alice: s3cret\n' >"$TMPD/bad.yml"
bad "a password that is no bcrypt hash" "bad.yml:2:10: basic_auth_users.alice: not a bcrypt hash"
printf 'tls_server_config:\n  cert_file: missing.crt\n  key_file: %s\n' "$C/server.key" >"$TMPD/bad.yml"
bad "a certificate file that does not exist" "tls_server_config.cert_file: $TMPD/missing.crt: No such file"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$C/server.crt" "$C/client.key" >"$TMPD/bad.yml"
bad "a key that is not the certificate's" "does not belong to the certificate"
check "a missing web config file: exit 2, named" bash -c \
	"out=\$('$ROCEWATCH' serve --web.config.file '$TMPD/nope.yml' 2>&1); [ \$? = 2 ] && echo \"\$out\" | grep -q 'nope.yml: No such file'"
finish
