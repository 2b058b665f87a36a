#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The binary alone: copied into an empty directory and run with an empty
# environment (no ROCEWATCH_PROFILE_DIR, no data directory of its own), it
# still has its profiles (built in from rules/profiles/*.yaml): `check` over a
# fixture tree gives a verdict, `serve` answers /metrics with rule results.
. "$(dirname "$0")/../lib.sh"
need_cmd curl

FXS="$SOURCE_DIR/tests/fixtures/sysfs/mlx5-roce"
BIN="$TMPD/alone"
mkdir "$BIN"
cp "$ROCEWATCH" "$BIN/rocewatch"
cd "$BIN" || die "cannot enter $BIN"
check "the directory holds the binary and nothing else" [ "$(ls -A "$BIN")" = rocewatch ]

# Where this build would look for installed profiles; when nothing is installed
# there, whatever loads comes from the binary itself.
datadir=$(env -i ./rocewatch rules --help | sed -n 's/.*directory (\(.*\)), then among the/\1/p')
check "rules --help names the installed profile directory" [ -n "$datadir" ]
installed=false
[ -e "$datadir/lossless-roce.yaml" ] && installed=true

rc=0
env -i ./rocewatch check --sysfs-root "$FXS" -j >"$TMPD/check.json" 2>"$TMPD/check.err" || rc=$?
check "check --sysfs-root FIXTURE under env -i: a verdict (exit $rc), not UNKNOWN" [ "$rc" -le 2 ]
check "check: no profile error on stderr" bash -c "! grep -q 'not found' '$TMPD/check.err'"
check "check: lossless-roce loaded (built in unless installed), rules evaluated" \
	python3 - "$TMPD/check.json" "$installed" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["profiles"][0]
assert p["name"] == "lossless-roce", p
if sys.argv[2] == "false":
    assert p["origin"] == "built-in" and p["file"] == "built-in:lossless-roce.yaml", p
assert p["rules"] > 30 and len(d["results"]) > 0, (p["rules"], len(d["results"]))
assert sum(d["counts"][k] for k in ("pass", "fail")) > 0, d["counts"]
PY
check "rules list under env -i says where the profile came from" bash -c \
	"env -i ./rocewatch rules list | head -1 | grep -qE '^profile lossless-roce \\((built into this binary|.*the installed copy)\\)$'"
check "rules show prints the shipped lossless-roce.yaml byte for byte" bash -c \
	"env -i ./rocewatch rules show lossless-roce | cmp -s - '$SOURCE_DIR/rules/profiles/lossless-roce.yaml'"
check "rules show of an unknown name: exit 1, the built-in names listed" bash -c \
	"rc=0; env -i ./rocewatch rules show nope 2>'$TMPD/show.err' || rc=\$?; [ \$rc -eq 1 ] && grep -q 'built in: container, fleet, lossless-roce, lossy-roce' '$TMPD/show.err'"

port=$(free_port)
url="http://127.0.0.1:$port"
env -i ./rocewatch serve --web.listen-address "127.0.0.1:$port" --sysfs-root "$FXS" \
	--interval 200ms >"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill $pid"
wait_until 20 curl -sf "$url/metrics" || die "serve did not answer /metrics: $(cat "$TMPD/serve.log")"
curl -sf "$url/metrics" >"$TMPD/metrics" || true
check "serve under env -i: /metrics has lossless-roce rule results" \
	grep -qE '^roce_rule_result\{profile="lossless-roce",' "$TMPD/metrics"
check "serve under env -i: /metrics has the fixture's RDMA port" \
	grep -q 'device="mlx5_0"' "$TMPD/metrics"
# libcurl (and the OpenSSL, Kerberos, LDAP it brings) is opened by the first
# outbound request only: a serve without an Alertmanager never maps it
check "serve without an Alertmanager has not loaded libcurl or libcrypto" \
	bash -c "! grep -qE '/lib(curl|crypto)[.-]' /proc/$pid/maps"
kill "$pid"
rc=0
wait "$pid" || rc=$?
check "serve stops on SIGTERM (exit $rc)" [ "$rc" -eq 0 ]
check "serve's log has no profile error" bash -c "! grep -q 'not found' '$TMPD/serve.log'"

# What every process maps at load (issue 39): libraries only some commands use are
# opened on first use, and libm's six functions are rocewatch's own (src/core/util.c).
readelf -d "$ROCEWATCH" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$TMPD/needed"
check "the binary links libc, libmicrohttpd and libmnl (readelf works)" bash -c \
	"grep -qx 'libc.so.6' '$TMPD/needed' && grep -qx 'libmicrohttpd.so.12' '$TMPD/needed' && grep -qx 'libmnl.so.0' '$TMPD/needed'"
for lib in libm.so.6 libibverbs.so.1 libnl-3.so.200 libnl-route-3.so.200 libcrypt.so.1 \
	libsqlite3.so.0 libcurl.so.4 libbpf.so.1 libelf.so.1; do
	check "the binary does not link $lib (opened on first use, or not used)" \
		bash -c "! grep -qx '$lib' '$TMPD/needed'"
done
finish
