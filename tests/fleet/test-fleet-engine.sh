#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fleet check --prometheus against what distributed engines do (tests/fleet/fake-engine.py
# on loopback, holding one real node's /metrics for 300 nodes with long FQDNs): a path
# prefix, a tenant header and a bearer token it insists on, a store that is down (its
# nodes missing, the answer saying so in "warnings" or VictoriaMetrics' "isPartial"), an
# HA pair nothing deduplicates, and a bound on the query's length (VictoriaMetrics'
# -search.maxQueryLen); --job selecting the nodes through roce_job_info.
. "$(dirname "$0")/../lib.sh"
need_cmd curl

FX="$SOURCE_DIR/tests/fixtures/snapshots/fleet"
ENGINE="$SOURCE_DIR/tests/fleet/fake-engine.py"
NODES="gpu-node-[0001-0300].rack07.cluster.example.org:9479"
p=$(free_port)
"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$p" --from "$FX/rails-good.json" \
	>"$TMPD/serve.log" 2>&1 &
stop_at_exit $!
wait_until 20 curl -sf "http://127.0.0.1:$p/healthz" || die "serve did not come up"
curl -sf "http://127.0.0.1:$p/metrics" >"$TMPD/node.prom"

engine() { # NAME ARGS...: a fake engine on a free port; sets url_NAME, logs to NAME.log
	local name=$1 port
	shift
	port=$(free_port)
	python3 "$ENGINE" "$port" "$TMPD/node.prom" 300 --log "$TMPD/$name.log" "$@" \
		>"$TMPD/engine-$name.out" 2>&1 &
	stop_at_exit $!
	eval "url_$name=http://127.0.0.1:$port"
	wait_until 30 grep -qx ready "$TMPD/engine-$name.out" || die "engine $name did not come up"
}
run() { # NAME ARGS...: fleet check -j ARGS, its JSON in NAME.json and exit code in NAME.rc
	local name=$1 rc=0
	shift
	"$ROCEWATCH" fleet check -j "$@" >"$TMPD/$name.json" 2>"$TMPD/$name.err" || rc=$?
	echo "$rc" >"$TMPD/$name.rc"
}
result() { # NAME RC ANSWERED: the exit code and how many nodes answered
	python3 - "$TMPD/$1.json" "$(cat "$TMPD/$1.rc")" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert int(sys.argv[2]) == int(sys.argv[3]), ("exit", sys.argv[2], d["status"])
assert d["counts"]["answered"] == int(sys.argv[4]), d["counts"]
PY
}
reasons() { # NAME: each UNKNOWN node's reason, once each, with a count
	python3 -c "
import json, collections, sys
d = json.load(open(sys.argv[1]))
for r, n in collections.Counter(x['reason'] for x in d['nodes'] if x['state'] != 'ok').items():
    print(n, r)" "$TMPD/$1.json"
}
longest() { sort -n "$TMPD/$1.log" | tail -1 | cut -d' ' -f1; }

# ---- a path prefix, a tenant and a token ----
printf 'eyJhbGciOiJIUzI1NiJ9.e30.sig\n' >"$TMPD/token"
engine mimir --prefix /prometheus --require 'X-Scope-OrgID: tenant-a' \
	--require 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig'
run mimir --prometheus "$url_mimir/prometheus" --prometheus.header 'X-Scope-OrgID: tenant-a' \
	--prometheus.bearer-token-file "$TMPD/token" "$NODES"
check "Mimir-like: path prefix, tenant header, bearer token: all 300 nodes, OK (0)" result mimir 0 300
run notenant --prometheus "$url_mimir/prometheus" --prometheus.bearer-token-file "$TMPD/token" "$NODES"
check "  ... without the tenant: every node UNKNOWN (3), the engine's 401 said" bash -c "
	$(declare -f result reasons); TMPD='$TMPD'; result notenant 3 0 && reasons notenant | grep -q 'HTTP 401'"
run vmcluster --prometheus "$url_mimir/select/0/prometheus" "$NODES"
check "  ... another prefix is another API: UNKNOWN (3), not a pass" result vmcluster 3 0
check "a header that is not 'Name: value' is refused (3), naming it" bash -c "
	rc=0; '$ROCEWATCH' fleet check --prometheus '$url_mimir' --prometheus.header 'X-Scope-OrgID tenant' n1 2>'$TMPD/badh.err' || rc=\$?
	[ \$rc -eq 3 ] && grep -q \"prometheus.header: 'X-Scope-OrgID tenant' is not 'Name: value'\" '$TMPD/badh.err'"
printf 'two words\n' >"$TMPD/badtoken"
check "a token file whose first line is not one token is refused (3), naming the file" bash -c "
	rc=0; '$ROCEWATCH' fleet check --prometheus '$url_mimir' --prometheus.bearer-token-file '$TMPD/badtoken' n1 2>'$TMPD/badt.err' || rc=\$?
	[ \$rc -eq 3 ] && grep -q '$TMPD/badtoken: the first line is not one token' '$TMPD/badt.err'"
check "a base URL with a query string is refused (3)" bash -c "
	rc=0; '$ROCEWATCH' fleet check --prometheus '$url_mimir/prometheus?x=1' n1 2>/dev/null || rc=\$?; [ \$rc -eq 3 ]"

# ---- a store down: partial answers ----
engine thanos --drop-from 201 --warning 'store 10.0.0.7:10901 is unavailable'
run thanos --prometheus "$url_thanos" "$NODES"
check "partial answers (warnings): the 200 nodes it has answer, the rest UNKNOWN (3)" result thanos 3 200
check "  ... with the engine's warning as the reason, never 'no series'" bash -c "
	$(declare -f reasons); TMPD='$TMPD'; r=\$(reasons thanos)
	[ \"\$(echo \"\$r\" | awk '/store 10.0.0.7:10901 is unavailable/ { n += \$1 } END { print n }')\" -eq 100 ] &&
	! echo \"\$r\" | grep -q 'no series for this instance (not scraped' || { echo \"\$r\" >&2; false; }"
engine vm --drop-from 291 --is-partial
run vm --prometheus "$url_vm" "$NODES"
check "VictoriaMetrics' isPartial: the 10 nodes behind it UNKNOWN (3), said so" bash -c "
	$(declare -f result reasons); TMPD='$TMPD'; result vm 3 290 && reasons vm | grep -q '^10 .*isPartial: true'"

# ---- an HA pair nothing deduplicates ----
engine ha --replica replica
run ha --prometheus "$url_ha" "$NODES"
check "every series twice (replica=a, replica=b): counted once, all 300 OK (0)" result ha 0 300
check "  ... as HA replicas, silently: no 'two scrape jobs' note" bash -c "! grep -q 'two scrape jobs' '$TMPD/ha.err'"
check "  ... the same verdict, rule by rule, as the single copy" python3 -c "
import json
a, b = (json.load(open('$TMPD/%s.json' % n))['results'] for n in ('mimir', 'ha'))
k = lambda rs: [(r['rule'], r['group'], r['outcome'], r['units'], r['nodes'], r['majority']) for r in rs]
assert k(a) == k(b), (k(a), k(b))"
engine hadc --replica dc_replica
run hadc-default --prometheus "$url_hadc" "$NODES"
run hadc --prometheus "$url_hadc" --prometheus.replica-label dc_replica "$NODES"
check "another replica label: taken once, but said (not a known replica label)" bash -c "
	$(declare -f result); TMPD='$TMPD'; result hadc-default 0 300 && grep -q 'two scrape jobs or HA replicas' '$TMPD/hadc-default.err'"
check "  ... --prometheus.replica-label dc_replica: silently" bash -c "
	$(declare -f result); TMPD='$TMPD'; result hadc 0 300 && ! grep -q 'two scrape jobs' '$TMPD/hadc.err'"
engine hadiff --replica replica --replica-diff 7
run hadiff --prometheus "$url_hadiff" "$NODES"
check "replicas that disagree (gpu-node-0007's MTU): that node UNKNOWN (3), both values named" bash -c "
	$(declare -f result reasons); TMPD='$TMPD'; result hadiff 3 299 &&
	reasons hadiff | grep -q '^1 .*HA replicas disagree, 9000 and 1500'"

# ---- the length of a query ----
engine vmlimit --max-query 16384
run vmlimit --prometheus "$url_vmlimit" "$NODES"
check "-search.maxQueryLen 16 KiB: all 300 nodes answer (0), rounds sized by bytes" result vmlimit 0 300
check "  ... no query over 16 KiB was sent" bash -c "[ \$($(declare -f longest); TMPD='$TMPD'; longest vmlimit) -le 16384 ]"
engine small --max-query 4096
run small-default --prometheus "$url_small" "$NODES"
check "an engine bound below --prometheus.max-query: UNKNOWN (3), the engine's words said" bash -c "
	$(declare -f result reasons); TMPD='$TMPD'; result small-default 3 0 && reasons small-default | grep -q 'too long query.*HTTP 422'"
: >"$TMPD/small.log"
run small --prometheus "$url_small" --prometheus.max-query 4KiB "$NODES"
check "  ... --prometheus.max-query 4KiB: all 300 answer (0), every query within it" bash -c "
	$(declare -f result longest); TMPD='$TMPD'; result small 0 300 && [ \$(longest small) -le 4096 ]"
run tiny --prometheus "$url_small" --prometheus.max-query 1KiB "$NODES"
check "  ... a bound no query fits: UNKNOWN (3), saying so, nothing sent over it" bash -c "
	$(declare -f result reasons longest); TMPD='$TMPD'; result tiny 3 0 &&
	reasons tiny | grep -q 'before any instance is in it, over --prometheus.max-query (1 KiB)'"

# ---- --job: the nodes through roce_job_info ----
engine job --job 4242:120 --max-query 16384
run job --prometheus "$url_job" --job 4242
check "--job 4242: exactly the job's 120 nodes, OK (0)" bash -c "
	$(declare -f result); TMPD='$TMPD'; result job 0 120 &&
	python3 -c \"import json; d = json.load(open('$TMPD/job.json')); assert d['counts']['nodes'] == 120\""
check "  ... asked by joining on roce_job_info, no instance listed" bash -c "
	grep -q 'and on (instance) group by (instance) (roce_job_info{job_id=\"4242\"})' '$TMPD/job.log' &&
	! grep -q 'instance=~\"gpu' '$TMPD/job.log'"
run nojob --prometheus "$url_job" --job 99
check "--job with no node running it: UNKNOWN (3), saying why" bash -c "
	[ \$(cat '$TMPD/nojob.rc') -eq 3 ] && grep -q 'no node runs job 99: no roce_job_info{job_id=\"99\"}' '$TMPD/nojob.err'"
check "--job without --prometheus: UNKNOWN (3)" bash -c "
	rc=0; '$ROCEWATCH' fleet check --job 1 n1 2>/dev/null || rc=\$?; [ \$rc -eq 3 ]"
# ---- --job on the engine, nodes alike by their fleet digest: one fetched for all ----
engine digest --job 4242:120 --digests
run digest --prometheus "$url_digest" --job 4242
check "--job, every node of one digest: OK (0), the 120 alike in one group" bash -c "
	$(declare -f result); TMPD='$TMPD'; result digest 0 120 &&
	python3 -c \"import json; c = json.load(open('$TMPD/digest.json'))['compare']; assert (c['digest_groups'], c['digest_nodes']) == (1, 120), c\""
check "  ... the digests asked once, one node's series fetched by name, no other" bash -c "
	[ \$(grep -c 'roce_fleet_digest_info{schema=' '$TMPD/digest.log') -eq 1 ] &&
	grep -q 'gpu-node-0001' '$TMPD/digest.log' &&
	! grep -q 'gpu-node-0002' '$TMPD/digest.log'"
engine lie --job 4242:120 --digests --digest-lie 1
run lie --prometheus "$url_lie" --job 4242
run lie-client --prometheus "$url_lie" --job 4242 --prometheus.compare client
check "--job, the node fetched for a group holds other facts than its digest: said, fetched one by one" bash -c "
	grep -q 'holds other facts than its digest says' '$TMPD/lie.err' &&
	python3 -c \"import json; c = json.load(open('$TMPD/lie.json'))['compare']; assert c['digest_groups'] == 0, c\""
check "  ... and the verdict is the client's: netdev_mtu CRITICAL (2) naming gpu-node-0001" python3 -c "
import json
e, c = (json.load(open('$TMPD/%s.json' % n)) for n in ('lie', 'lie-client'))
assert e['exit_code'] == c['exit_code'] == 2, (e['exit_code'], c['exit_code'])
f = lambda d: sorted((r['rule'], r['group'], r['outcome'], o['node'], o['value']) for r in d['results'] for o in r['outliers'])
assert f(e) == f(c) and any(x[0] == 'netdev_mtu' and x[3].startswith('gpu-node-0001.') for x in f(e)), (f(e), f(c))"
engine jobpart --job 4242:120 --drop-from 101
run jobpart --prometheus "$url_jobpart" --job 4242
check "--job from a partial answer: the 100 it names answer, the job UNKNOWN (3) with the warning" bash -c "
	$(declare -f result reasons); TMPD='$TMPD'; result jobpart 3 100 &&
	reasons jobpart | grep -q '^1 Prometheus answered partially (store 10.0.0.7:10901 is unavailable): the job may have nodes'"
finish
