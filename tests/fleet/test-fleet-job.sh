#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fleet check --nccl-env: the job's NCCL variables read on every node with the NCCL model
# and compared across nodes (rules nccl_* of the fleet profile).  A fleet of four
# two-rail nodes (tests/fleet/gen-job-fleet.py) with one node changed per scenario:
# device names that do not follow the PCI slots (NCCL's device 0 on another rail), a
# port down, an explicit NCCL_IB_GID_INDEX that is not the IPv4 RoCE v2 GID there - each
# CRITICAL naming that node; and a macvlan node whose IPv4 RoCE v2 GID is at index 4
# while the job sets no index: OK, the index NCCL picks there shown as information.
. "$(dirname "$0")/../lib.sh"

GEN="$SOURCE_DIR/tests/fleet/gen-job-fleet.py"
for s in good swapped missing gid5 macvlan; do
	python3 "$GEN" "$TMPD/$s" "$s"
done
printf 'NCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_IB_TC=106\n' >"$TMPD/job.env"
printf 'export NCCL_IB_HCA="=mlx5_0:1,mlx5_1:1"\nNCCL_IB_GID_INDEX=3\nNCCL_IB_TC=106\n' \
	>"$TMPD/job-gid3.env"

run() { # NAME SCENARIO ENV: fleet check -j of that fleet, its exit code in NAME.rc
	local rc=0
	"$ROCEWATCH" fleet check -j --nccl-env "$3" "$TMPD/$2" >"$TMPD/$1.json" 2>"$TMPD/$1.err" ||
		rc=$?
	echo "$rc" >"$TMPD/$1.rc"
}
run good good "$TMPD/job.env"
run swapped swapped "$TMPD/job.env"
run missing missing "$TMPD/job.env"
run gid5 gid5 "$TMPD/job-gid3.env"
run gid5-unset gid5 "$TMPD/job.env"
run macvlan macvlan "$TMPD/job.env"

# verdict NAME EXIT [RULE NODE VALUE]...: the exit code, and the failing critical rules'
# outliers exactly these (rule, node, value)
verdict() {
	python3 - "$TMPD/$1.json" "$(cat "$TMPD/$1.rc")" "${@:2}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rc, want_rc = int(sys.argv[2]), int(sys.argv[3])
want = sorted(tuple(sys.argv[i:i + 3]) for i in range(4, len(sys.argv), 3))
got = sorted((r["rule"], o["node"], o["value"]) for r in d["results"]
             if r["outcome"] != "pass" and r["severity"] == "critical" for o in r["outliers"])
bad = [(r["rule"], r["outcome"]) for r in d["results"]
       if r["outcome"] == "unknown" and r["severity"] != "info"]
assert rc == want_rc and d["exit_code"] == rc, (rc, want_rc, d["status"])
assert got == want, (got, want)
assert not bad, bad
PY
}
job_node() { # NAME NODE KEY WANT: job.nodes[NODE][KEY] as "a b"
	python3 - "$TMPD/$1.json" "$2" "$3" "$4" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = {x["name"]: x for x in d["job"]["nodes"]}[sys.argv[2]]
got = " ".join(n[sys.argv[3]])
assert got == sys.argv[4], (got, sys.argv[4])
PY
}
check "a good fleet: OK (0), every nccl_* rule passes" verdict good 0
check "  ... JSON job.nodes[].effective_hca: NCCL's devices in its order" \
	job_node good n1 effective_hca "mlx5_0:1 mlx5_1:1"
check "  ... and their rails" job_node good n1 rails "0 1"
check "  ... the job's variables and where they came from" python3 -c "
import json; j = json.load(open('$TMPD/good.json'))['job']
assert j['nccl_env'] == '$TMPD/job.env' and j['variables'] == {'NCCL_IB_HCA': 'mlx5_0,mlx5_1', 'NCCL_IB_TC': '106'}, j
assert j['gid_index_from'] == 'picked by NCCL' and len(j['nodes']) == 4, j"
check "mis-paired NCCL_IB_HCA (n3's names do not follow its slots): CRITICAL naming n3" \
	verdict swapped 2 nccl_hca_rails n3 '"1"' nccl_hca_rails n3 '"0"'
check "  ... n3's NCCL device 0 is rail 1" job_node swapped n3 rails "1 0"
check "a port down on n2: CRITICAL naming n2 (one device fewer, the port named)" \
	verdict missing 2 nccl_hca_count n2 1 nccl_hca_ports n2 '"mlx5_1:1 is DOWN"'
check "  ... n2's NCCL uses mlx5_0 alone" job_node missing n2 effective_hca "mlx5_0:1"
check "an explicit NCCL_IB_GID_INDEX=3 that is IPv6 on n4: CRITICAL naming n4" \
	verdict gid5 2 nccl_gid n4 '"mlx5_0:1 GID 3 is not IPv4"'
check "  ... the same fleet with the index unset: OK, NCCL picks 5 there" verdict gid5-unset 0
check "  ... shown per node" job_node gid5-unset n4 gid_index "mlx5_0:1=5 mlx5_1:1=5"
check "a macvlan fleet (n2 at index 4), NCCL_IB_GID_INDEX unset: OK (0)" verdict macvlan 0
check "  ... the per-node index shown as information (info rule, its outliers)" python3 -c "
import json; d = json.load(open('$TMPD/macvlan.json'))
r = [r for r in d['results'] if r['rule'] == 'nccl_gid_index_picked' and r['group'] == 'position 0'][0]
assert r['severity'] == 'info' and r['outcome'] == 'pass', r
assert r['majority']['value'] == '3' and [(o['node'], o['value']) for o in r['outliers']] == [('n2', '4')], r
g = [r for r in d['results'] if r['rule'] == 'rocev2_gid_index' and r['group'] == 'rail 0'][0]
assert g['severity'] == 'info', g"
check "  ... and in the text report" bash -c \
	"COLUMNS=200 '$ROCEWATCH' fleet check --nccl-env '$TMPD/job.env' '$TMPD/macvlan' |
	 grep -E 'pass +info +nccl_gid_index_picked \\(position 0\\) +3 nodes 3, n2 4'"
check "without --nccl-env the nccl_* rules are skipped, and differing GID indexes alone pass" \
	bash -c "'$ROCEWATCH' fleet check -v '$TMPD/macvlan' | grep -Eq '^  skip +critical +nccl_gid( |\$)' &&
	 '$ROCEWATCH' fleet check '$TMPD/macvlan' >/dev/null"

# the job's environment, as fleet check sees it run inside an allocation
check "--slurm: the NCCL_* variables of the job's own environment" bash -c "
	env SLURM_JOB_NODELIST=none NCCL_IB_HCA=mlx5_0 '$ROCEWATCH' fleet check -j --slurm --prometheus http://127.0.0.1:1 --connect-timeout 100ms '$TMPD/good' >'$TMPD/slurm.json' 2>/dev/null
	python3 -c \"import json; j = json.load(open('$TMPD/slurm.json'))['job']; assert j['nccl_env'] == 'the environment' and j['variables'] == {'NCCL_IB_HCA': 'mlx5_0'}, j\""
check "  ... and none judged where the environment has none (a PrologSlurmctld's)" bash -c "
	env -u NCCL_IB_HCA SLURM_JOB_NODELIST=none '$ROCEWATCH' fleet check -j --slurm --prometheus http://127.0.0.1:1 --connect-timeout 100ms '$TMPD/good' >'$TMPD/slurm0.json' 2>/dev/null
	python3 -c \"import json; assert 'job' not in json.load(open('$TMPD/slurm0.json'))\""
printf 'NCCL_IB_HCA=mlx5_0\nnot a line\n' >"$TMPD/bad.env"
check "a malformed --nccl-env file: UNKNOWN (3), the file and line named" bash -c "
	rc=0; '$ROCEWATCH' fleet check --nccl-env '$TMPD/bad.env' '$TMPD/good' >/dev/null 2>'$TMPD/bad.err' || rc=\$?
	[ \$rc -eq 3 ] && grep -q '$TMPD/bad.env:2: expected KEY=VALUE' '$TMPD/bad.err'"
check "a missing --nccl-env file: UNKNOWN (3), named" bash -c "
	rc=0; '$ROCEWATCH' fleet check --nccl-env '$TMPD/none.env' '$TMPD/good' >/dev/null 2>'$TMPD/none.err' || rc=\$?
	[ \$rc -eq 3 ] && grep -q '$TMPD/none.env' '$TMPD/none.err'"
finish
