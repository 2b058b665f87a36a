#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# e2e tier: a real Prometheus scrapes six `rocewatch serve --from` instances (a good node,
# one at MTU 1500, one with its RoCE v2 GID at another index, one with PFC on priority 4,
# one whose DSCP 48 maps to priority 5, one whose DSCP map holds only DSCP 26 and 48) and
# one target that is down.  DSCP maps and PFC sets come back encoded (fleet_prom.c): a map
# that differs in one entry of 64, or lacks entries, must be named as it is.
# `fleet check --prometheus` must reach the same verdict as asking the nodes themselves: the
# same status, and for every rule the same outcome, majority and outliers.  A node Prometheus
# does not scrape, and the target that is down, are UNKNOWN by name.
. "$(dirname "$0")/../lib.sh"
need_cmd prometheus "apt-get install prometheus"
need_cmd curl

FX="$SOURCE_DIR/tests/fixtures/snapshots/fleet"
ports=()
files=(good mtu-1500 gid-index-5 pfc-4 dscp/dscp-48-to-5 dscp/dscp-app-only)
for f in "${files[@]}"; do
	p=$(free_port)
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$p" --interval 1s --from "$FX/$f.json" \
		>"$TMPD/serve-${f##*/}.log" 2>&1 &
	on_exit "kill $!"
	ports+=("$p")
	wait_until 20 curl -sf "http://127.0.0.1:$p/healthz" || die "serve $f did not come up"
done
down=$(free_port) # scraped, but nobody listens
pport=$(free_port)
cat >"$TMPD/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rocewatch
    static_configs:
      - targets: [$(printf "'127.0.0.1:%s', " "${ports[@]}")'127.0.0.1:$down']
YML
prometheus --config.file "$TMPD/prometheus.yml" --storage.tsdb.path "$TMPD/tsdb" \
	--web.listen-address "127.0.0.1:$pport" >"$TMPD/prom.log" 2>&1 &
stop_at_exit $!
prom="http://127.0.0.1:$pport"

scraped() { # every rocewatch target up with its MTU in, and the dead one known to be down
	curl -sf --get "$prom/api/v1/query" --data-urlencode 'query=count(up == 1) == 6 and count(up == 0) == 1 and count(count by (instance) (roce_netdev_mtu_bytes)) == 6 and count(count by (instance) (roce_dscp_priority)) == 6' |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)'
}
wait_until 90 scraped || die "Prometheus did not scrape the nodes: $(tail -5 "$TMPD/prom.log")"

nodes=()
for p in "${ports[@]}"; do nodes+=("127.0.0.1:$p"); done
set +e
"$ROCEWATCH" fleet check -j "${nodes[@]}" >"$TMPD/http.json" 2>"$TMPD/http.err"
rc_http=$?
"$ROCEWATCH" fleet check -j --prometheus "$prom" "${nodes[@]}" >"$TMPD/prom.json" 2>"$TMPD/prom.err"
rc_prom=$?
"$ROCEWATCH" fleet check -j --prometheus "$prom/" "${nodes[@]}" "127.0.0.1:$down" 127.0.0.9 \
	>"$TMPD/prom-unk.json" 2>"$TMPD/prom-unk.err"
rc_unk=$?
"$ROCEWATCH" fleet check --prometheus "http://127.0.0.1:$down" "${nodes[@]}" >"$TMPD/noprom.txt" 2>&1
rc_noprom=$?
set -e

verdict() { # FILE: status and, per rule, outcome, majority and outliers
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(d["status"], d["exit_code"])
for r in d["results"]:
    out = sorted((o["node"], o["object"] or "", o["value"]) for o in r["outliers"])
    print(r["rule"], r["group"], r["outcome"], (r["majority"] or {}).get("value"), out)
PY
}
check "asking the nodes: CRITICAL (2)" [ "$rc_http" -eq 2 ]
check "--prometheus: the same exit code" [ "$rc_prom" -eq "$rc_http" ]
check "--prometheus: the same verdict, rule by rule" \
	diff -u <(verdict "$TMPD/http.json") <(verdict "$TMPD/prom.json")
check "the verdict is the expected one (MTU, GID index, PFC and DSCP map outliers named)" python3 -c "
import json, sys
d = json.load(open('$TMPD/prom.json'))
got = sorted((r['rule'], o['node'], o['value']) for r in d['results'] for o in r['outliers'])
n = sys.argv[1:]
m = {x: x // 8 for x in range(64)}
m[48] = 5  # one entry of 64 differs: its digit in group 3 of the encoded map
one_off = '{' + ','.join('%d:%d' % (k, v) for k, v in sorted(m.items())) + '}'
want = sorted([('active_mtu', n[1], '1024'), ('netdev_mtu', n[1], '1500'),
               ('rocev2_gid_index', n[2], '5'), ('pfc_priorities', n[3], '{4}'),
               ('dscp_map', n[4], one_off),
               # absent entries stay absent (digit 0), not priority 0
               ('dscp_map', n[5], '{26:3,48:6}')])
assert got == want, (got, want)" "${nodes[@]}"
check "--prometheus: nodes answered from their series" python3 -c "
import json; d = json.load(open('$TMPD/prom.json'))
assert d['counts']['answered'] == 6, d['counts']
assert all(n['source'] == 'prometheus' for n in d['nodes'])"
check "--prometheus: a target that is down and a node not scraped are UNKNOWN by name" python3 -c "
import json; d = json.load(open('$TMPD/prom-unk.json'))
u = {n['name']: n['reason'] for n in d['nodes'] if n['state'] == 'unknown'}
assert sorted(u) == ['127.0.0.1:$down', '127.0.0.9'], u
assert 'down (up == 0)' in u['127.0.0.1:$down'], u
assert 'no series for this instance' in u['127.0.0.9'], u
assert d['counts']['answered'] == 6"
check "  ... and the critical outliers still win (CRITICAL 2)" [ "$rc_unk" -eq 2 ]
check "a Prometheus that is not there: every node UNKNOWN (3)" [ "$rc_noprom" -eq 3 ]
check "  ... saying why, once for all nodes" bash -c "tr -s ' \n' ' ' <'$TMPD/noprom.txt' |
	grep -q 'Prometheus http://127.0.0.1:$down: GET /api/v1/label/instance/values: .*connect'"
finish
