#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier (root): libibverbs is opened on first use (src/core/verbs_lazy.c), not
# linked.  With the library hidden (/dev/null bound over it in a mount namespace of
# the command's own) every command still starts; what needs verbs says so once,
# naming libibverbs.so.1: the verbs collector on this machine cannot start (over a
# fixture tree it needs no verbs and says nothing), `probe` exits 3 and
# `serve --probe` 1.  Where the library is not installed at all, the commands run as
# they are.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd unshare
need_cmd curl

lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libibverbs.so.1" { print $NF; exit }')
# "${hide[@]}" COMMAND...: COMMAND without libibverbs, in the same process (unshare and
# sh exec it), so that $! of one started in the background is the command's own pid
hide=()
[ -z "$lib" ] || hide=(unshare -m sh -c 'mount --bind /dev/null "$0" && exec "$@"' "$lib")
nolib() { "${hide[@]}" "$@"; }
want='RDMA verbs needs libibverbs.so.1'
fx="$SOURCE_DIR/tests/fixtures/sysfs/mlx5-roce"

if command -v readelf >/dev/null 2>&1; then
	check "the binary does not link libibverbs" \
		sh -c '! readelf -d "$1" | grep -q "NEEDED.*libibverbs"' sh "$ROCEWATCH"
fi
check "version runs" nolib "$ROCEWATCH" version

nolib "$ROCEWATCH" snapshot --sysfs-root "$fx" -j >"$TMPD/fx.json" 2>"$TMPD/fx.err" || true
check "a fixture tree needs no verbs: a snapshot" test -s "$TMPD/fx.json"
check "... and no word of libibverbs" sh -c '! grep -q libibverbs "$1"' sh "$TMPD/fx.err"

nolib "$ROCEWATCH" snapshot -j >"$TMPD/live.json" 2>"$TMPD/live.err" || true
check "this machine: the verbs collector says why it cannot start, once" \
	test "$(grep -c "verbs: cannot start: $want" "$TMPD/live.err")" = 1
check "... and the snapshot carries it as the collector's error" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["collectors"]["verbs"]
sys.exit(not (c["success"] is False and c["error"].startswith(sys.argv[2])))' \
	"$TMPD/live.json" "$want"

rc=0
nolib "$ROCEWATCH" probe 127.0.0.1:1 >"$TMPD/probe.out" 2>&1 || rc=$?
check "probe: exit 3 (got $rc)" test "$rc" = 3
check "... naming the library" grep -q "rocewatch probe: $want" "$TMPD/probe.out"

port=$(free_port)
rc=0
nolib timeout 20 "$ROCEWATCH" serve --probe --web.listen-address "127.0.0.1:$port" \
	>"$TMPD/serve-probe.out" 2>&1 || rc=$?
check "serve --probe: a start-up error, exit 1 (got $rc)" test "$rc" = 1
check "... naming the library" grep -q "rocewatch serve: --probe: $want" "$TMPD/serve-probe.out"

# serve without --probe runs, its verbs collector down with the reason said once
port=$(free_port)
"${hide[@]}" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" --interval 200ms \
	>"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill $pid"
metrics() { curl -sf "http://127.0.0.1:$port/metrics"; }
verbs_down() { metrics | grep -q '^rocewatch_collector_success{collector="verbs"} 0'; }
check "serve: up, rocewatch_collector_success{collector=\"verbs\"} 0" wait_until 20 verbs_down
# polls later, still once
polled() { [ "$(metrics | awk '/^rocewatch_polls_total\{loop="fast"\}/ { print $2 }')" -ge 10 ]; }
wait_until 20 polled || true
check "... the reason logged once" test "$(grep -c "verbs: cannot start: $want" "$TMPD/serve.log")" = 1
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null || true

finish
