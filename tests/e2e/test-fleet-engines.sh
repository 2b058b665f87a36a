#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# e2e tier: fleet check against real engines, Prometheus (promtool-backfilled) and
# VictoriaMetrics (imported), both holding the same generated fleet (tests/e2e/fleet-series.py):
# 40 two-rail nodes as `rocewatch serve` exports them, job 4242 on nodes 1-30 (node 7 at MTU
# 1500 on eth2, node 12's mlx5_1 trained at 200 Gb/s, node 20's target down), job 77 on
# nodes 31-40 (node 35 with PFC on priority 4), job 555 on nodes 1-6 (good).  For each job
# and engine: `fleet check --job` finds exactly the job's nodes, and the fleet rules
# compared on the engine reach the verdict the client-side comparison (every series
# fetched) reaches, rule by rule: nodes alike by their fleet digest fetched once (jobs
# 4242, 555), or, for job 77's nodes exported as an older serve does (no digest), the
# rules counted on the engine; the job's NCCL settings judged through the engine too.  VictoriaMetrics is asked under its /prometheus prefix.
. "$(dirname "$0")/../lib.sh"
need_cmd prometheus "apt-get install prometheus"
need_cmd promtool "apt-get install prometheus"
need_cmd victoria-metrics "contrib/install-deps.sh test (Debian's victoria-metrics)"
need_cmd curl

FX="$SOURCE_DIR/tests/fixtures/snapshots/fleet"
mkdir -p "$TMPD/snaps"
python3 - "$FX/rails-good.json" "$TMPD/snaps" <<'PY'
import copy, json, sys
base = json.load(open(sys.argv[1]))
def nd(s, n): return next(x for x in s["netdevs"] if x["name"] == n)["fields"]
def pt(s, d): return next(x for x in s["rdma_ports"] if x["device"] == d)["fields"]
out = {"good": base}
s = copy.deepcopy(base); nd(s, "eth2")["mtu"] = 1500; pt(s, "mlx5_0")["active_mtu"] = 1024; out["mtu"] = s
s = copy.deepcopy(base); pt(s, "mlx5_1")["rate"] = 200000; nd(s, "eth3")["speed"] = 200000; out["rate"] = s
s = copy.deepcopy(base); nd(s, "eth2")["pfc.enabled"] = [4]; out["pfc"] = s
for k, v in out.items():
    json.dump(v, open("%s/%s.json" % (sys.argv[2], k), "w"))
PY
expos=""
for v in good mtu rate pfc; do
	p=$(free_port)
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$p" --from "$TMPD/snaps/$v.json" \
		>"$TMPD/serve-$v.log" 2>&1 &
	pid=$!
	wait_until 20 curl -sf "http://127.0.0.1:$p/healthz" || die "serve $v did not come up"
	curl -sf "http://127.0.0.1:$p/metrics" >"$TMPD/$v.prom"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	expos="$expos\"$v\": \"$TMPD/$v.prom\","
done
# job 77's other nodes as an older serve exports them: no fleet digest, so the engine counts
grep -v '^roce_fleet_digest_info' "$TMPD/good.prom" >"$TMPD/old.prom"
grep -q '^roce_fleet_digest_info{schema=' "$TMPD/good.prom" || die "serve exports no roce_fleet_digest_info"
expos="$expos\"old\": \"$TMPD/old.prom\","
old='"31": "old", "32": "old", "33": "old", "34": "old", "36": "old", "37": "old", "38": "old", "39": "old", "40": "old"'
cat >"$TMPD/plan.json" <<JSON
{"expositions": {${expos%,}}, "nodes": 40, "instance": "node%05d:9479",
 "variant": {"7": "mtu", "12": "rate", "35": "pfc", $old}, "down": [20],
 "jobs": {"4242": [1, 30], "77": [31, 40], "555": [1, 6]}, "ts": $(($(date +%s) - 60))}
JSON
python3 "$SOURCE_DIR/tests/e2e/fleet-series.py" "$TMPD/plan.json" "$TMPD/fleet.om" "$TMPD/fleet.prom"

# ---- Prometheus: backfilled ----
promtool tsdb create-blocks-from openmetrics "$TMPD/fleet.om" "$TMPD/tsdb" >"$TMPD/promtool.log" 2>&1 ||
	die "promtool: $(tail -3 "$TMPD/promtool.log")"
printf 'global:\n  scrape_interval: 1h\nscrape_configs: []\n' >"$TMPD/prometheus.yml"
pport=$(free_port)
prometheus --config.file "$TMPD/prometheus.yml" --storage.tsdb.path "$TMPD/tsdb" \
	--web.listen-address "127.0.0.1:$pport" >"$TMPD/prom.log" 2>&1 &
stop_at_exit $!
prom="http://127.0.0.1:$pport"
# ---- VictoriaMetrics: imported, asked under its /prometheus prefix ----
vport=$(free_port)
victoria-metrics -storageDataPath "$TMPD/vmdata" -httpListenAddr "127.0.0.1:$vport" \
	-retentionPeriod 1 -search.latencyOffset 0s >"$TMPD/vm.log" 2>&1 &
stop_at_exit $!
vm="http://127.0.0.1:$vport"
wait_until 60 curl -sf "$prom/-/ready" || die "Prometheus did not start: $(tail -3 "$TMPD/prom.log")"
wait_until 60 curl -sf "$vm/health" || die "VictoriaMetrics did not start: $(tail -3 "$TMPD/vm.log")"
curl -sf --data-binary "@$TMPD/fleet.prom" "$vm/api/v1/import/prometheus" || die "import failed"
curl -sf "$vm/internal/force_flush" >/dev/null
has_all() { # URL: every node's up and the jobs visible
	curl -sf --get "$1/api/v1/query" --data-urlencode 'query=count(up) == 40 and count(roce_job_info) == 46' |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)'
}
wait_until 60 has_all "$prom" || die "Prometheus does not hold the fleet"
wait_until 60 has_all "$vm" || die "VictoriaMetrics does not hold the fleet"

run() { # NAME ARGS...: fleet check -j, its exit code in NAME.rc
	local rc=0 name=$1
	shift
	"$ROCEWATCH" fleet check -j --timeout 60s "$@" >"$TMPD/$name.json" 2>"$TMPD/$name.err" || rc=$?
	echo "$rc" >"$TMPD/$name.rc"
}
verdict() { # NAME: exit code, counts, every node's state, every result
	python3 - "$TMPD/$1.json" "$(cat "$TMPD/$1.rc")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("exit", sys.argv[2], d["status"], json.dumps(d["counts"], sort_keys=True))
for n in sorted(d["nodes"], key=lambda n: n["name"]):
    print("node", n["name"], n["state"], n["reason"])
for r in d["results"]:
    print(r["rule"], r["group"], r["outcome"], r["units"], r["nodes"], r["majority"],
          sorted((o["node"], o["object"] or "", o["value"]) for o in r["outliers"]),
          sorted((u["node"], u["object"] or "", u["reason"]) for u in r["unknown"]), r["detail"])
PY
}
compared() { # NAME [KEY]: how many fleet rules the engine counted (or compare.KEY)
	python3 -c "import json; print(json.load(open('$TMPD/$1.json')).get('compare', {}).get('${2:-engine}', 0))"
}
for e in prom vm; do
	url=$prom
	[ $e = vm ] && url=$vm/prometheus
	for job in 4242 77 555; do
		run "$e-$job-engine" --prometheus "$url" --job "$job" --prometheus.compare engine
		run "$e-$job-client" --prometheus "$url" --job "$job" --prometheus.compare client
		echo "$e job $job: $(python3 -c "import json; print(json.load(open('$TMPD/$e-$job-engine.json')).get('compare'))") $(cat "$TMPD/$e-$job-engine.err")" >&2
		check "$e job $job: compared on the engine, the verdict the client reaches, rule by rule" \
			diff -u <(verdict "$e-$job-client") <(verdict "$e-$job-engine")
	done
	check "$e: job 4242: exactly its 30 nodes, node 20 (down) UNKNOWN, the MTU and speed outliers CRITICAL (2)" python3 -c "
import json; d = json.load(open('$TMPD/$e-4242-engine.json'))
assert d['exit_code'] == 2 and d['counts']['nodes'] == 30 and d['counts']['answered'] == 29, d['counts']
assert sorted(n['name'] for n in d['nodes']) == ['node%05d:9479' % i for i in range(1, 31)]
u = [n for n in d['nodes'] if n['state'] != 'ok']
assert [n['name'] for n in u] == ['node00020:9479'] and 'down (up == 0)' in u[0]['reason'], u
bad = sorted((r['rule'], o['node'], o['value']) for r in d['results'] if r['outcome'] == 'fail' and r['severity'] == 'critical' for o in r['outliers'])
assert bad == [('active_mtu', 'node00007:9479', '1024'), ('link_speed_per_rail', 'node00012:9479', '400000' if False else '200000'), ('netdev_mtu', 'node00007:9479', '1500')], bad"
	check "$e: job 77: its 10 nodes, the PFC outlier CRITICAL, nothing of job 4242's" python3 -c "
import json; d = json.load(open('$TMPD/$e-77-engine.json'))
assert d['exit_code'] == 2 and d['counts']['nodes'] == 10 and d['counts']['answered'] == 10, d['counts']
bad = sorted((r['rule'], o['node'], o['value']) for r in d['results'] if r['outcome'] == 'fail' for o in r['outliers'])
assert bad == [('pfc_priorities', 'node00035:9479', '{4}')], bad"
	check "$e: job 555 (good): OK (0), its 6 nodes alike by their digest, one fetched" bash -c "
		[ \$(cat '$TMPD/$e-555-engine.rc') -eq 0 ] &&
		[ \$($(declare -f compared); TMPD='$TMPD'; compared $e-555-engine digest_groups) -eq 1 ] &&
		[ \$($(declare -f compared); TMPD='$TMPD'; compared $e-555-engine digest_nodes) -eq 6 ]"
	check "$e: job 4242: the 27 good nodes up alike, the outliers fetched on their own" bash -c "
		[ \$($(declare -f compared); TMPD='$TMPD'; compared $e-4242-engine digest_nodes) -eq 27 ]"
	check "$e: job 77 (an older serve: no digest): every countable rule counted on the engine" bash -c "
		[ \$($(declare -f compared); TMPD='$TMPD'; compared $e-77-engine digest_groups) -eq 0 ] &&
		[ \$($(declare -f compared); TMPD='$TMPD'; compared $e-77-engine) -ge 15 ]"
done
printf 'NCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_IB_TC=106\n' >"$TMPD/job.env"
for e in prom vm; do
	url=$prom
	[ $e = vm ] && url=$vm/prometheus
	run "$e-nccl" --prometheus "$url" --job 555 --nccl-env "$TMPD/job.env"
	check "$e: --nccl-env through the engine: every node's NCCL devices, OK (0)" python3 -c "
import json; d = json.load(open('$TMPD/$e-nccl.json'))
assert d['exit_code'] == 0, d['status']
assert [n['effective_hca'] for n in d['job']['nodes']] == [['mlx5_0:1', 'mlx5_1:1']] * 6, d['job']"
done
finish
