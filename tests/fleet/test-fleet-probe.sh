#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocewatch fleet probe on loopback, without RDMA devices: fake nodes speak serve's probe API
# (tests/fleet/fake-probe-node.py: /api/v1/probe, POST /api/v1/probe/plan and its results,
# as if its probes had gone out), so what is tested is the coordinator, the plan, the HTTP
# transport, the localizer and the report.  A clean run; a dead port found as node_rail; a node
# that dies after taking its slice and a hostile /api/v1/probe answer, each named on a line of
# its own in a bounded run; and serve's plan endpoint: off by default (403), behind the web
# config's basic auth (401 without credentials, before the body is read), its body bound (413).
# The verbs path itself is the vm tier's (tests/vm/scenarios/fleet-probe.sh).
. "$(dirname "$0")/../lib.sh"
need_cmd curl
need_cmd htpasswd "apt-get install apache2-utils"
. "$SOURCE_DIR/tests/web/tls-lib.sh"

FAKE="$SOURCE_DIR/tests/fleet/fake-probe-node.py"
FX="$SOURCE_DIR/tests/fixtures/snapshots/rules/good.json"
export COLUMNS=250

fake() { # NAME ID MODE [--dead GIDS]: sets port_NAME, once it listens
	local name=$1
	shift
	spawn_listener "$TMPD/fake-$name.log" python3 "$FAKE" PORT "$@" ||
		die "fake node $name did not come up: $(cat "$TMPD/fake-$name.log")"
	on_exit "kill $SPAWNED_PID 2>/dev/null"
	eval "port_$name=$SPAWNED_PORT"
}
ready() { grep -qx ready "$TMPD/fake-$1.log"; }
node() { eval "echo 127.0.0.1:\$port_$1"; }
# fleet probe NODES...: the report in $TMPD/out, the exit code in $rc, the seconds in $secs
probe() {
	local t0=$SECONDS
	rc=0
	"$ROCEWATCH" fleet probe --timeout 2s "$@" >"$TMPD/out" 2>"$TMPD/err" || rc=$?
	secs=$((SECONDS - t0))
}
has() { grep -qF -- "$1" "$TMPD/out"; }

dead=::ffff:127.0.2.2 # node 2's rail-r1 port
fake a 1 ok
fake b 2 ok
fake c 3 ok
fake da 1 ok --dead $dead
fake db 2 ok --dead $dead
fake dc 3 ok --dead $dead
fake dd 4 ok --dead $dead
fake dies 5 dies
gone5=::ffff:127.0.5.1,::ffff:127.0.5.2 # what the others see of it once it died
fake ea 1 ok --dead $gone5
fake eb 2 ok --dead $gone5
fake ec 3 ok --dead $gone5
fake bad 6 hostile
fake qk 7 qkey
fake late 8 late
for n in a b c da db dc dd dies ea eb ec bad qk late; do
	wait_until 15 ready "$n" || die "fake node $n did not come up"
done

# ---- a clean fabric ----
probe "$(node a)" "$(node b)" "$(node c)"
check "clean: OK, exit 0" [ "$rc" = 0 ]
check "clean: no finding, every node answered" has "fleet probe: OK: 0 findings, 3 of 3 nodes answered"
check "clean: full rail mesh of 2 rails" has "plan: full rail mesh, 2 rails, 24 pairs"
check "clean: per-rail matrix" grep -qE '^r1 +6 +6 +0 +0 +0' "$TMPD/out"

# ---- a dead port: node_rail, critical ----
probe "$(node da)" "$(node db)" "$(node dc)" "$(node dd)"
check "dead port: CRITICAL, exit 2" [ "$rc" = 2 ]
check "dead port: node_rail on rail r1 of the second node" \
	has "CRITICAL node_rail rails r1: 1 node (127.0.0.1:$port_db); do: drain-node"
check "dead port: the evidence quotes the port" has "rail r1 fake1/1: lost with 6 of 6 pairs"
probe -j "$(node da)" "$(node db)" "$(node dc)" "$(node dd)"
check "dead port: JSON findings[] with class, nodes, rails, evidence, action" python3 -c "
import json, sys
d = json.load(open('$TMPD/out'))
f = d['findings']
assert d['status'] == 'CRITICAL', d['status']
assert len(f) == 1 and f[0]['class'] == 'node_rail', f
assert f[0]['nodes'] == ['127.0.0.1:$port_db'] and f[0]['rails'] == ['r1'], f
assert f[0]['action'] == 'drain-node' and 'lost with' in f[0]['evidence'], f
assert d['pairs']['tested'] == 24 and d['pairs']['lost'] == 6, d['pairs']
"

# ---- a node that dies after taking its slice: named, bounded ----
probe "$(node ea)" "$(node eb)" "$(node ec)" "$(node dies)"
check "dies mid-run: CRITICAL (its rails fail), exit 2" [ "$rc" = 2 ]
check "dies mid-run: the node is named with why" \
	has "UNKNOWN 127.0.0.1:$port_dies: no results: "
check "dies mid-run: the others' probes to it locate it" \
	has "no result from the node, and its ports are lost with every peer on all 2 rails"
check "dies mid-run: bounded (under 10 s)" [ "$secs" -lt 10 ]

# ---- a node whose probes were late: its pairs untested, never lost, and the run not OK ----
probe -j "$(node a)" "$(node b)" "$(node late)"
check "late probes: UNKNOWN, exit 3" [ "$rc" = 3 ]
check "late probes: no finding, the node named with its untested pairs" python3 -c "
import json
d = json.load(open('$TMPD/out'))
assert d['status'] == 'UNKNOWN' and d['findings'] == [], d
u = d['unknown']
assert len(u) == 1 and u[0]['node'] == '127.0.0.1:$port_late', u
assert u[0]['error'].startswith('4 of its 8 pairs untested: their probes could not leave'), u
assert d['pairs']['tested'] < d['pairs']['planned'] and d['pairs']['lost'] == 0, d['pairs']
"

# ---- a hostile /api/v1/probe, a foreign Q_Key, a node nobody runs ----
gone=$(free_port)
probe "$(node a)" "$(node b)" "$(node c)" "$(node bad)" "$(node qk)" "127.0.0.1:$gone"
check "hostile: UNKNOWN, exit 3" [ "$rc" = 3 ]
check "hostile: the rail with a newline is refused, naming the port" \
	has "UNKNOWN 127.0.0.1:$port_bad: http://127.0.0.1:$port_bad/api/v1/probe: not rocewatch probe info: port 2: \"rail\": holds a control character"
check "hostile: nothing it sent reaches the report" bash -c "! grep -q 'X-Injected' '$TMPD/out'"
check "foreign Q_Key: named" has "no ACTIVE compute RoCE port with rocewatch's Q_Key (2 listed)"
check "nobody listening: named" has "UNKNOWN 127.0.0.1:$gone: http://127.0.0.1:$gone/api/v1/probe: "
check "the others are still probed" has "3 of 6 nodes answered"
check "hostile: bounded (under 10 s)" [ "$secs" -lt 10 ]

# ---- bad usage ----
rc=0
"$ROCEWATCH" fleet probe --paths 99 x >/dev/null 2>"$TMPD/err" || rc=$?
check "--paths 99: usage error, exit 3" [ "$rc" = 3 ]
check "--paths 99: says so" grep -q "fleet probe: --paths: '99' is not a number of flow labels" "$TMPD/err"

# ---- serve's plan endpoint ----
hash=$(bcrypt_hash 's3cret' 4)
printf 'basic_auth_users:\n  alice: %s\n' "$hash" >"$TMPD/web.yml"
sp=$(free_port)
"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$sp" --interval 200ms --from "$FX" \
	--web.config.file "$TMPD/web.yml" --web.enable-probe-api >"$TMPD/serve.log" 2>&1 &
on_exit "kill $!"
sp2=$(free_port)
"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$sp2" --interval 200ms --from "$FX" \
	>"$TMPD/serve2.log" 2>&1 &
on_exit "kill $!"
up() { curl -s -o /dev/null "http://127.0.0.1:$1/healthz"; }
wait_until 15 up "$sp" || die "serve did not come up: $(cat "$TMPD/serve.log")"
wait_until 15 up "$sp2" || die "serve did not come up: $(cat "$TMPD/serve2.log")"
code() { curl -s -o "$TMPD/body" -w '%{http_code}' "$@"; }
head -c 300000 /dev/zero | tr '\0' 'A' >"$TMPD/big"
check "plan POST without credentials: 401" \
	[ "$(code -X POST --data-binary @"$TMPD/big" "http://127.0.0.1:$sp/api/v1/probe/plan")" = 401 ]
check "plan POST with credentials: the responder is off (404), said in a line" bash -c \
	"[ \"\$(curl -s -o '$TMPD/body' -w '%{http_code}' -u alice:s3cret -X POST --data-binary x \
	  'http://127.0.0.1:$sp/api/v1/probe/plan')\" = 404 ] && grep -q 'start serve with --probe' '$TMPD/body'"
check "plan POST over 16 MiB: 413" bash -c \
	"head -c 17000000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' -u alice:s3cret \
	  -X POST --data-binary @- 'http://127.0.0.1:$sp/api/v1/probe/plan' | grep -qx 413"
check "the probe API off by default: 403" bash -c \
	"[ \"\$(curl -s -o '$TMPD/body' -w '%{http_code}' -X POST --data-binary x \
	  'http://127.0.0.1:$sp2/api/v1/probe/plan')\" = 403 ] && grep -q 'web.enable-probe-api' '$TMPD/body'"
check "results GET without credentials: 401" \
	[ "$(code "http://127.0.0.1:$sp/api/v1/probe/plan?id=0123456789abcdef")" = 401 ]
check "serve still answers" up "$sp"
finish
