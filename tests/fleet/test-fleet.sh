#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fleet check on loopback: several `serve --from` instances, each a different node (three
# good ones, one at MTU 1500, one with its RoCE v2 GID at another index), and three that
# misbehave: nobody listening, a node that never answers (past --timeout), a node that
# answers garbage.  fleet check must name exactly those nodes, the right way, with the
# Nagios exit code the verdict calls for; and the other sources (snapshot files and
# directories, --slurm) and client options (basic auth, TLS) must do what --help says.
# The PrologSlurmctld runs as slurmctld runs it, and the job comment it sets names the
# outlier node and its value (a GID index, a link speed), cut to Slurm's 1024 bytes.
. "$(dirname "$0")/../lib.sh"
need_cmd curl

FX="$SOURCE_DIR/tests/fixtures/snapshots/fleet"
# whole lines to grep; the 80-column layout is test-width-golden.sh's
export COLUMNS=250
FAKE="$SOURCE_DIR/tests/fleet/fake-node.py"

serve() { # NAME SNAPSHOT: a serve on a free port; sets port_NAME
	local p
	p=$(free_port)
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$p" --interval 1s --from "$2" \
		>"$TMPD/serve-$1.log" 2>&1 &
	on_exit "kill $!"
	eval "port_$1=$p"
}
fake() { # NAME MODE ARGS...: sets port_NAME, once it listens
	local name=$1
	shift
	spawn_listener "$TMPD/fake-$name.log" python3 "$FAKE" PORT "$@" ||
		die "fake node $name did not come up: $(cat "$TMPD/fake-$name.log")"
	on_exit "kill $SPAWNED_PID"
	eval "port_$name=$SPAWNED_PORT"
}
up() { curl -sf "http://127.0.0.1:$1/healthz" >/dev/null; }
ready() { grep -qx ready "$TMPD/fake-$1.log"; }

serve a "$FX/good.json"
serve b "$FX/good.json"
serve c "$FX/good.json"
serve mtu "$FX/mtu-1500.json"
serve gid "$FX/gid-index-5.json"
serve pfc "$FX/pfc-4.json"
serve fw "$FX/fw-old.json"
# two rails a node: one port trained at 200 Gb/s on rail 1 among two nodes at 400
serve r1 "$FX/rails-good.json"
serve r2 "$FX/rails-good.json"
serve r200 "$FX/rails-200g.json"
port_gone=$(free_port) # nobody listens there
fake slow silent
fake junk garbage
fake bighead bighead
for n in a b c mtu gid pfc fw r1 r2 r200; do
	eval "p=\$port_$n"
	wait_until 20 up "$p" || die "serve $n did not come up: $(cat "$TMPD/serve-$n.log")"
done
for n in slow junk bighead; do
	wait_until 20 ready "$n" || die "fake node $n did not come up"
done
node() { eval "echo 127.0.0.1:\$port_$1"; }

# A slow node must be cut at --timeout; 4 s leaves the good ones (ASan builds, a busy
# machine) plenty of room, and the silent one never answers at all.
fleet() { "$ROCEWATCH" fleet check --timeout 4s "$@"; }

set +e
fleet -j "$(node a)" "$(node b)" "$(node c)" "$(node mtu)" "$(node gid)" "$(node gone)" \
	"$(node slow)" "$(node junk)" >"$TMPD/all.json" 2>"$TMPD/all.err"
rc=$?
fleet "$(node a)" "$(node b)" "$(node c)" "$(node mtu)" "$(node gid)" "$(node gone)" \
	"$(node slow)" "$(node junk)" >"$TMPD/all.txt" 2>&1
rc_text=$?
set -e

check "a critical outlier among unknown nodes: CRITICAL (2)" [ "$rc" -eq 2 ]
check "text and JSON give one verdict" [ "$rc_text" -eq 2 ]
json() { # python assertions over FILE
	local f=$1
	shift
	python3 - "$f" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2], {"d": d, "res": {(r["rule"], r["group"]): r for r in d["results"]}})
PY
}
check "JSON: schema, status and exit code" json "$TMPD/all.json" '
assert d["schema"] == "rocewatch-fleet" and d["schema_version"] == 1
assert d["status"] == "CRITICAL" and d["exit_code"] == 2
assert d["counts"]["nodes"] == 8 and d["counts"]["answered"] == 5 and d["counts"]["unknown"] == 3'
check "exactly the three misbehaving nodes are unknown, each with its reason" json "$TMPD/all.json" "
u = {n['name']: n['reason'] for n in d['nodes'] if n['state'] == 'unknown'}
assert sorted(u) == sorted(['$(node gone)', '$(node slow)', '$(node junk)']), u
assert 'connect' in u['$(node gone)'].lower(), u
assert u['$(node slow)'].startswith('timed out after'), u
assert u['$(node junk)'].startswith('invalid answer: $(node junk):1:1:'), u"
check "netdev_mtu fails: majority 9000 on 4 nodes, the 1500 node named with its value" \
	json "$TMPD/all.json" "
r = res[('netdev_mtu', None)]
assert r['outcome'] == 'fail' and r['severity'] == 'critical'
assert r['majority'] == {'value': '9000', 'units': 4, 'nodes': 4}, r['majority']
assert r['outliers'] == [{'node': '$(node mtu)', 'object': 'eth2', 'value': '1500'}], r['outliers']
assert r['detail'] == '4 nodes 9000, $(node mtu) 1500', r['detail']"
check "active_mtu fails naming the same node (1024)" json "$TMPD/all.json" "
r = res[('active_mtu', None)]
assert r['outcome'] == 'fail' and r['outliers'] == [{'node': '$(node mtu)', 'object': 'mlx5_0/1', 'value': '1024'}], r"
check "rocev2_gid_index (information now) names the node with index 5" json "$TMPD/all.json" "
r = res[('rocev2_gid_index', None)]
assert r['outcome'] == 'fail' and r['severity'] == 'info' and r['majority']['value'] == '3', r
assert r['outliers'] == [{'node': '$(node gid)', 'object': 'mlx5_0/1', 'value': '5'}], r['outliers']"
check "no other rule fails, none is unknown, and only those two nodes are outliers" \
	json "$TMPD/all.json" "
bad = sorted(r['rule'] for r in d['results'] if r['outcome'] in ('fail', 'unknown'))
assert bad == ['active_mtu', 'netdev_mtu', 'rocev2_gid_index'], bad
named = {o['node'] for r in d['results'] for o in r['outliers']}
assert named == {'$(node mtu)', '$(node gid)'}, named"
check "text: the netdev_mtu line names majority and outlier" \
	grep -Eq "^  fail +critical +netdev_mtu +4 nodes 9000, $(node mtu) 1500$" "$TMPD/all.txt"
check "text: the silent node is unknown, by name" \
	grep -Eq "^  unknown +$(node slow) +timed out after" "$TMPD/all.txt"
check "text: verdict line, last and short" bash -c "tail -1 '$TMPD/all.txt' | grep -qx '8 nodes, 3 unknown: CRITICAL'"

# ---- exit codes ----
rc_of() { set +e; fleet "$@" >"$TMPD/out" 2>&1; echo $?; set -e; }
check "all good: OK (0)" [ "$(rc_of "$(node a)" "$(node b)" "$(node c)")" -eq 0 ]
check "a good set with one node unreachable: UNKNOWN (3), not skipped" \
	[ "$(rc_of "$(node a)" "$(node b)" "$(node gone)")" -eq 3 ]
check "  ... and the unreachable node is named" grep -q "unknown  $(node gone)" "$TMPD/out"
check "firmware differs on one node: WARNING (1)" \
	[ "$(rc_of "$(node a)" "$(node b)" "$(node fw)")" -eq 1 ]
check "a warning and an unreachable node: UNKNOWN (3) outranks WARNING" \
	[ "$(rc_of "$(node a)" "$(node b)" "$(node fw)" "$(node gone)")" -eq 3 ]
check "a node that answers garbage alone: UNKNOWN (3)" [ "$(rc_of "$(node junk)")" -eq 3 ]
check "a node that answers a 10 MB header: UNKNOWN (3)" [ "$(rc_of "$(node bighead)")" -eq 3 ]
check "  ... named as the answer's header, not curl's 'Out of memory'" \
	grep -q "unknown  $(node bighead)  an HTTP header of the answer is too large (libcurl's limit is 100 KB)" "$TMPD/out"
check "no nodes: UNKNOWN (3) with a message" [ "$(rc_of)" -eq 3 ]
check "  ... saying so" grep -q "no nodes given" "$TMPD/out"
check "a bad hostlist: UNKNOWN (3)" [ "$(rc_of 'gpu[3-1]')" -eq 3 ]
check "  ... naming it" grep -q "hostlist 'gpu\[3-1\]': range runs backwards" "$TMPD/out"
check "a bad flag: UNKNOWN (3)" [ "$(rc_of --nope "$(node a)")" -eq 3 ]
check "--help: exit 0, and it documents the exit codes" bash -c \
	"'$ROCEWATCH' fleet check --help | grep -q '3 UNKNOWN   a node did not answer'"

# ---- per-node rules: the whole pre-flight in one command ----
set +e
fleet -j --profile lossless-roce "$(node a)" "$(node b)" "$(node mtu)" >"$TMPD/pn.json" 2>&1
rc=$?
set -e
check "--profile: CRITICAL (2)" [ "$rc" -eq 2 ]
check "--profile: the 1500 node's own rules fail, the others are OK" json "$TMPD/pn.json" "
st = {n['name']: (n['status'], n['outcome']) for n in d['nodes']}
assert st['$(node a)'] == ('OK', 'OK'), st
assert st['$(node mtu)'][0] == 'CRITICAL', st
assert 'netdev_mtu' in st['$(node mtu)'][1] and 'active_mtu_4096' in st['$(node mtu)'][1], st
fails = {(r['rule'], r['object']) for n in d['nodes'] if n['name'] == '$(node mtu)' for r in n['results']}
assert ('netdev_mtu', 'eth2') in fails, fails
# counter rules are skipped on one sample, never unknown
assert all(n['counts']['unknown'] == 0 for n in d['nodes']), [n['counts'] for n in d['nodes']]"
check "--profile: profile_outcome names the odd node out" json "$TMPD/pn.json" "
r = res[('profile_outcome', None)]
assert r['outcome'] == 'fail' and r['majority']['value'] == '\"OK\"', r
assert [o['node'] for o in r['outliers']] == ['$(node mtu)'], r['outliers']"

# ---- snapshot files and directories, named by their host ----
mkdir "$TMPD/snaps"
for h in gpu002 gpu003; do
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['host']=sys.argv[2]; json.dump(d, open(sys.argv[3],'w'))" \
		"$FX/good.json" "$h" "$TMPD/snaps/$h.json"
done
cp "$FX/good.json" "$FX/mtu-1500.json" "$TMPD/snaps/"
echo '{"schema": "rocewatch-snapshot", "schema_version": 2' >"$TMPD/snaps/broken.json"
set +e
fleet "$TMPD/snaps" >"$TMPD/dir.txt" 2>&1
rc=$?
set -e
check "a directory of snapshots: a broken file is UNKNOWN, the MTU outlier CRITICAL (2)" [ "$rc" -eq 2 ]
check "  ... nodes named by their snapshot's host" \
	grep -Eq "^  fail +critical +netdev_mtu +3 nodes 9000, gpu017 1500$" "$TMPD/dir.txt"
check "  ... the broken file named, with the place of the error" \
	grep -Eq "^  unknown +$TMPD/snaps/broken.json +$TMPD/snaps/broken.json:2:0: " "$TMPD/dir.txt"
check "files and nodes mixed" [ "$(rc_of "$FX/good.json" "$(node a)" "$(node b)")" -eq 0 ]
check "a file that is not there: UNKNOWN (3), named" [ "$(rc_of "$(node a)" ./nosuch.json)" -eq 3 ]

# ---- --format reason: the verdict as one line (the prolog's job comment) ----
reason() { "$ROCEWATCH" fleet check --format reason "$@" 2>&1; }
for h in gpu101 gpu102; do
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['host']=sys.argv[2]; json.dump(d, open(sys.argv[3],'w'))" \
		"$FX/good.json" "$h" "$TMPD/$h.json"
done
check "reason: nothing wrong reads OK" [ "$(reason "$TMPD/gpu101.json" "$TMPD/gpu102.json")" = OK ]
# a GID index that differs is no finding by itself (NCCL picks it per node, issue 38); the
# job's explicit NCCL_IB_GID_INDEX=3, the IPv6 GID there, is one, naming the host
printf 'NCCL_IB_GID_INDEX=3\n' >"$TMPD/gid3.env"
check "reason: a GID-index outlier alone reads OK (NCCL picks the index on each node)" \
	[ "$(reason "$TMPD/gpu101.json" "$TMPD/gpu102.json" "$FX/gid-index-5.json")" = OK ]
check "reason: the job's NCCL_IB_GID_INDEX wrong on one snapshot, named by host" \
	[ "$(reason --nccl-env "$TMPD/gid3.env" "$TMPD/gpu101.json" "$TMPD/gpu102.json" "$FX/gid-index-5.json")" = \
	'CRITICAL nccl_gid: gpu022="mlx5_0:1 GID 3 is not IPv4" (fleet "")' ]
check "reason: a DSCP map outlier reads where it differs" bash -c "
	'$ROCEWATCH' fleet check --format reason '$FX/good.json' '$FX/rails-good.json' '$FX/dscp-26-to-0.json' |
	grep -qF 'CRITICAL dscp_map (rail 0): gpu032 differs at {26:0} (fleet {0:0,'"
check "reason: --profile adds the node rules as profile/rule, node/object and why" bash -c "
	'$ROCEWATCH' fleet check --format reason --profile lossless-roce '$TMPD/gpu101.json' '$TMPD/gpu102.json' '$FX/mtu-1500.json' |
	grep -qF '; CRITICAL lossless-roce/netdev_mtu: gpu017/eth2 (MTU 1500, need at least 4200'"
check "reason: every budget holds, cut after an item, what is left out counted" python3 - \
	"$ROCEWATCH" "$FX" <<'PY'
import glob, re, subprocess, sys
rw, fx = sys.argv[1:]
files = sorted(glob.glob(fx + "/*.json"))
full = subprocess.run([rw, "fleet", "check", "--format", "reason"] + files,
                      capture_output=True, text=True).stdout.rstrip("\n")
rules = full.split("; ")
assert len(rules) == 8 and "\n" not in full, full
for b in (64, 65, 80, 100, 140, 200, 400, 600, len(full) - 1, len(full)):
    line = subprocess.run([rw, "fleet", "check", "--format", "reason", "--max-bytes", str(b)]
                          + files, capture_output=True, text=True).stdout
    assert line.endswith("\n") and line.count("\n") == 1, (b, line)
    line = line[:-1]
    assert len(line.encode()) <= b, (b, len(line), line)
    if b >= len(full):
        assert line == full, (b, line)
        continue
    m = re.search(r"(?:^|; )\+(\d+) more rules$", line)
    shown = line.split("; ")[:-1] if m else line.split("; ")
    # every rule shown is a prefix of the full one's, and the count makes up the rest
    assert len(shown) + (int(m.group(1)) if m else 0) == len(rules), (b, line)
    for got, want in zip(shown, rules):
        head, _, items = got.partition(": ")
        assert want.startswith(head + ": "), (b, got, want)
        all_items = want.partition(": ")[2].split(", ")
        items = items.split(", ")
        if re.fullmatch(r"\+\d+ more", items[-1]):
            n = int(items.pop()[1:].split()[0])
            assert len(items) + n == len(all_items), (b, got)
        assert items == all_items[:len(items)], (b, got, want)
PY
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['host']='bad\nhost\x1b[2J'; json.dump(d, open(sys.argv[2],'w'))" \
	"$FX/pfc-4.json" "$TMPD/ctl.json"
check "reason: control bytes in a name never break the line" \
	[ "$(reason "$TMPD/gpu101.json" "$TMPD/gpu102.json" "$TMPD/ctl.json")" = \
	"CRITICAL pfc_priorities: bad?host?[2J={4} (fleet {3})" ]
check "reason: --report-file - writes the text report first, the reason line last" bash -c "
	'$ROCEWATCH' fleet check --format reason --report-file - '$TMPD/gpu101.json' '$TMPD/gpu102.json' '$FX/pfc-4.json' >'$TMPD/both.txt'
	[ \$? -eq 2 ] && head -1 '$TMPD/both.txt' | grep -q '^rocewatch fleet check: 3 nodes' &&
	[ \"\$(tail -1 '$TMPD/both.txt')\" = 'CRITICAL pfc_priorities: gpu030={4} (fleet {3})' ]"
check "reason: a report file that cannot be written is UNKNOWN (3), nothing on stdout" bash -c "
	'$ROCEWATCH' fleet check --format reason --report-file /proc/nope/r.txt '$FX/good.json' >'$TMPD/nope.out' 2>'$TMPD/nope.err'
	[ \$? -eq 3 ] && [ ! -s '$TMPD/nope.out' ] && grep -q '/proc/nope/r.txt' '$TMPD/nope.err'"
check "reason: --max-bytes below 64 is refused (3)" bash -c \
	"'$ROCEWATCH' fleet check --format reason --max-bytes 63 '$FX/good.json' >/dev/null 2>&1; [ \$? -eq 3 ]"

# ---- --slurm: SLURM_JOB_NODELIST as PrologSlurmctld sees it ----
check "--slurm without SLURM_JOB_NODELIST: UNKNOWN (3)" bash -c \
	"env -u SLURM_JOB_NODELIST -u SLURM_NODELIST '$ROCEWATCH' fleet check --slurm >/dev/null 2>&1; [ \$? -eq 3 ]"
check "--slurm expands the hostlist, with --port for names without one" bash -c "
	SLURM_JOB_NODELIST='127.0.0.[1],localhost' '$ROCEWATCH' fleet check --slurm --port $port_a -j \
		>'$TMPD/slurm.json' 2>&1; [ \$? -eq 0 ] &&
	python3 -c \"import json; d=json.load(open('$TMPD/slurm.json')); assert [n['name'] for n in d['nodes']] == ['127.0.0.1', 'localhost'] and d['counts']['answered'] == 2\""

# ---- contrib/slurm: the PrologSlurmctld example fails closed ----
# Run as slurmctld runs it: env -i (no search path of its own), a stub scontrol on the
# PATH given that records its arguments one a line, a stub logger (no syslog from tests).
prolog="$SOURCE_DIR/contrib/slurm/prologslurmctld-rocewatch-fleet.sh"
mkdir -p "$TMPD/bin"
cat >"$TMPD/bin/scontrol" <<SH
#!/bin/sh
for a in "\$@"; do printf '%s\n' "\$a"; done >>"$TMPD/scontrol"
echo -- >>"$TMPD/scontrol"
SH
printf '#!/bin/sh\nexit 0\n' >"$TMPD/bin/logger"
chmod +x "$TMPD/bin/scontrol" "$TMPD/bin/logger"
prolog_rc() { # NODELIST [ENV...]: the prolog's exit code
	local nl=$1
	shift
	rm -f "$TMPD/scontrol"
	set +e
	env -i PATH="$TMPD/bin:/usr/bin:/bin" SLURM_JOB_ID=42 SLURM_JOB_NODELIST="$nl" \
		ROCEWATCH="$ROCEWATCH" ROCEWATCH_FLEET_LOG="$TMPD/prolog" \
		ROCEWATCH_PROFILE_DIR="$ROCEWATCH_PROFILE_DIR" ASAN_OPTIONS="${ASAN_OPTIONS:-}" \
		UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" "$@" /bin/sh "$prolog" >"$TMPD/prolog.out" 2>&1
	echo $?
	set -e
}
comment() { sed -n 's/^Comment=//p' "$TMPD/scontrol" 2>/dev/null; }
comment_is() { # WANT: scontrol was called once, setting job 42's comment to WANT
	local want
	want=$(printf '%s\n' update JobId=42 "Comment=$1" --)
	[ "$(cat "$TMPD/scontrol" 2>/dev/null)" = "$want" ] ||
		{ echo "  scontrol: $(cat "$TMPD/scontrol" 2>/dev/null || echo 'not called')" >&2; return 1; }
}
no_comment() { [ ! -e "$TMPD/scontrol" ] || { echo "  scontrol: $(cat "$TMPD/scontrol")" >&2; return 1; }; }
check "prolog: good nodes start the job (0)" [ "$(prolog_rc "$(node a),$(node b)")" -eq 0 ]
check "  ... and leave the job's comment alone" no_comment
check "prolog: the MTU outlier stops it (1)" [ "$(prolog_rc "$(node a),$(node b),$(node mtu)")" -eq 1 ]
check "  ... and the report is kept for the job" grep -q "netdev_mtu" "$TMPD/prolog/fleet-42.txt"
check "  ... the text report, with the verdict" grep -qx "3 nodes, 0 unknown: CRITICAL" "$TMPD/prolog/fleet-42.txt"
check "  ... the comment names both rules, the node and its values, worst first" comment_is \
	"rocewatch fleet: CRITICAL netdev_mtu: $(node mtu)=1500 (fleet 9000); CRITICAL active_mtu: $(node mtu)=1024 (fleet 4096)"
# issue 41: the outliers wrapped onto the next line of the text were lost, and the comment
# read "rocewatch fleet: fail critical rocev2_gid_index;", naming no node
check "prolog: a GID-index outlier alone starts the job (0): NCCL picks the index per node" \
	[ "$(prolog_rc "$(node a),$(node b),$(node gid)")" -eq 0 ]
check "prolog: the job's NCCL_IB_GID_INDEX (ROCEWATCH_FLEET_NCCL_ENV, %j) wrong on one node stops it (1)" \
	[ "$(cp "$TMPD/gid3.env" "$TMPD/job-42.env"
	     prolog_rc "$(node a),$(node b),$(node gid)" ROCEWATCH_FLEET_NCCL_ENV="$TMPD/job-%j.env")" -eq 1 ]
check "  ... the comment names the node and what its GID 3 is" comment_is \
	"rocewatch fleet: CRITICAL nccl_gid: $(node gid)=\"mlx5_0:1 GID 3 is not IPv4\" (fleet \"\")"
check "prolog: a link speed outlier stops it (1)" \
	[ "$(prolog_rc "$(node r1),$(node r2),$(node r200)")" -eq 1 ]
check "  ... the comment names the rail, the node and its speed" comment_is \
	"rocewatch fleet: CRITICAL link_speed_per_rail (rail 192.168.11.0/24): $(node r200)=200000 (fleet 400000)"
check "prolog: an unreachable node stops it (1)" [ "$(prolog_rc "$(node a),$(node gone)")" -eq 1 ]
check "  ... the comment names the node and why" bash -c \
	"$(declare -f comment); TMPD='$TMPD'; comment | grep -q '^rocewatch fleet: UNKNOWN no answer: $(node gone) (.*connect'"
check "prolog: a warning lets it start (0)" [ "$(prolog_rc "$(node a),$(node b),$(node fw)")" -eq 0 ]
check "  ... with no comment" no_comment
check "prolog: ... unless ROCEWATCH_FLEET_STRICT=1 (1)" \
	[ "$(prolog_rc "$(node a),$(node b),$(node fw)" ROCEWATCH_FLEET_STRICT=1)" -eq 1 ]
check "  ... the comment names the rail, the node and its firmware" comment_is \
	"rocewatch fleet: WARNING firmware_per_rail (rail 192.168.10.0/24): $(node fw)=\"28.36.1010\" (fleet \"28.39.1002\")"
check "prolog: rocewatch not installed stops it (1)" \
	[ "$(prolog_rc "$(node a)" ROCEWATCH=/nonexistent/rocewatch)" -eq 1 ]
check "  ... saying so" grep -q "rocewatch not found" "$TMPD/prolog.out"
check "  ... in the comment too" comment_is \
	"rocewatch fleet: rocewatch not found (/nonexistent/rocewatch): the job was not started unchecked"
check "prolog: a bad flag in ROCEWATCH_FLEET_ARGS stops it (1), the error in the comment" bash -c "
	[ \"\$($(declare -f prolog_rc); TMPD='$TMPD' ROCEWATCH='$ROCEWATCH' prolog='$prolog'
		prolog_rc '$(node a)' ROCEWATCH_FLEET_ARGS=--nope)\" -eq 1 ] &&
	grep -q '^Comment=rocewatch fleet: unknown option' '$TMPD/scontrol'"
check "prolog: ROCEWATCH_FLEET_ARGS reach fleet check (--profile: per-node rules too)" \
	[ "$(prolog_rc "$(node a),$(node b)" ROCEWATCH_FLEET_ARGS="--profile lossless-roce")" -eq 0 ]
check "  ... they ran" grep -q "per-node: 2 OK" "$TMPD/prolog/fleet-42.txt"
check "prolog: a log directory that cannot be made is skipped, the verdict stands (1)" \
	[ "$(prolog_rc "$(node a),$(node b),$(node pfc)" ROCEWATCH_FLEET_LOG=/proc/nope)" -eq 1 ]
check "  ... and the comment still names the outlier" comment_is \
	"rocewatch fleet: CRITICAL pfc_priorities: $(node pfc)={4} (fleet {3})"
# A big job with a bad rack: 120 good nodes, 60 with PFC on priority 4 and 40 at MTU 1500
# (snapshots beside the job's one node, through ROCEWATCH_FLEET_ARGS), with long names.
# The comment holds Slurm's 1024 bytes: every failing rule with its first outlier, then as
# many of the worst rule's as fit, each rule counting those it leaves out.
mkdir "$TMPD/rack"
python3 - "$FX" "$TMPD/rack" <<'PY'
import json, sys
fx, out = sys.argv[1:]
for i in range(220):
    kind = "good" if i < 120 else "pfc-4" if i < 180 else "mtu-1500"
    d = json.load(open("%s/%s.json" % (fx, kind)))
    d["host"] = "gpu-node-%04d.rack07.cluster.example.org" % i
    json.dump(d, open("%s/n%04d.json" % (out, i), "w"))
PY
check "prolog: 100 outliers among 221 nodes stop the job (1)" \
	[ "$(prolog_rc "$(node a)" ROCEWATCH_FLEET_ARGS="$TMPD/rack")" -eq 1 ]
check "  ... the comment fits 1024 bytes, names every rule and counts what it leaves out" python3 - \
	"$(comment)" <<'PY'
import re, sys
c = sys.argv[1]
print("  comment (%d bytes): %s" % (len(c.encode()), c), file=sys.stderr)
assert len(c.encode()) <= 1024 and len(c.encode()) > 900, len(c.encode())
assert c.startswith("rocewatch fleet: CRITICAL netdev_mtu: "), c
parts = c[len("rocewatch fleet: "):].split("; ")
want = {"netdev_mtu": ("1500", 40, "9000"), "active_mtu": ("1024", 40, "4096"),
        "pfc_priorities": ("{4}", 60, "{3}")}
assert sorted(p.split(":")[0] for p in parts) == sorted("CRITICAL " + r for r in want), parts
for p in parts:
    rule, items = p[len("CRITICAL "):].split(": ", 1)
    value, total, fleet = want[rule]
    items = items.split(", ")
    more = re.fullmatch(r"\+(\d+) more", items[-1])
    assert more, p
    shown = items[:-1]
    assert shown and len(shown) + int(more.group(1)) == total, p
    assert shown[0] == "gpu-node-%04d.rack07.cluster.example.org=%s (fleet %s)" % (
        180 if value in ("1500", "1024") else 120, value, fleet), p
    for s in shown[1:]:
        assert re.fullmatch(r"gpu-node-\d{4}\.rack07\.cluster\.example\.org=" + value, s), p
# the worst rule first gets the room left
assert len(parts[0].split(", ")) > 10, parts[0]
PY

# ---- client options: basic auth and TLS ----
printf 's3cret\n' >"$TMPD/pass"
fake auth auth fleetuser s3cret "$FX/good.json"
wait_until 20 ready auth || die "auth node did not come up"
check "basic auth: without credentials the node is UNKNOWN, the reason says 401" bash -c "
	'$ROCEWATCH' fleet check '$(node auth)' >'$TMPD/auth.txt' 2>&1; [ \$? -eq 3 ] &&
	grep -q 'HTTP 401 (unauthorized' '$TMPD/auth.txt'"
check "basic auth: --user and --password-file" \
	[ "$(rc_of --user fleetuser --password-file "$TMPD/pass" "$(node auth)" "$(node a)")" -eq 0 ]
cat >"$TMPD/client.yml" <<YML
basic_auth:
  username: fleetuser
  password_file: $TMPD/pass
YML
check "basic auth: --client-config (Prometheus scrape config keys)" \
	[ "$(rc_of --client-config "$TMPD/client.yml" "$(node auth)")" -eq 0 ]
printf 'basic_auth:\n  username: u\n  password: inline\n' >"$TMPD/bad.yml"
check "--client-config refuses an inline password, naming the place" bash -c "
	'$ROCEWATCH' fleet check --client-config '$TMPD/bad.yml' x >'$TMPD/bad.txt' 2>&1; [ \$? -eq 3 ] &&
	grep -q '$TMPD/bad.yml:3:13: basic_auth.password: use password_file' '$TMPD/bad.txt'"
# --prometheus reads answers series by series with its own decoder: JSON escapes in
# label values, keys in any order, and an answer that ends early
fake prom prom
fake promcut prom cut
fake prombad prom badenc
fake promcompact prom badcompact
fake promnolist prom nolist
fake promcutlist prom cutlist
fake promdscp prom
for f in prom promcut prombad promcompact promnolist promcutlist promdscp; do
	wait_until 20 ready "$f" || die "fake Prometheus ($f) did not come up"
done
check "--prometheus: escaped labels decoded (n\\u0031 is n1), both nodes answered" bash -c "
	'$ROCEWATCH' fleet check -j --prometheus http://\$(echo $(node prom)) n1 n2 >'$TMPD/prom.json'
	python3 -c \"import json; d=json.load(open('$TMPD/prom.json')); assert d['counts']['answered'] == 2, d['counts']\""
# DSCP maps and PFC sets are asked for encoded (fleet_prom.c): decoded digit by digit, an
# unmapped DSCP stays unmapped, and a value the encoding cannot give is an error, not a map
check "--prometheus: encoded DSCP maps and PFC sets decoded exactly (n2: 48 -> 5, 63 unmapped, PFC {4})" python3 -c "
import json
d = json.load(open('$TMPD/prom.json'))
r = {x['rule']: {o['node']: o['value'] for o in x['outliers']} for x in d['results']}
m = {k: k // 8 for k in range(64)}
enc = lambda m: '{' + ','.join('%d:%d' % kv for kv in sorted(m.items())) + '}'
n1 = enc(m)
m[48] = 5
del m[63]
assert r['dscp_map'] == {'n1': n1, 'n2': enc(m)}, r['dscp_map']
assert r['pfc_priorities'] == {'n1': '{3}', 'n2': '{4}'}, r['pfc_priorities']"
check "--prometheus: an encoded value that does not decode is an error naming its query (exit 3)" bash -c "
	'$ROCEWATCH' fleet check --prometheus http://\$(echo $(node prombad)) n1 n2 >'$TMPD/prombad.txt' 2>&1
	[ \$? -eq 3 ] && tr -s ' \n' ' ' <'$TMPD/prombad.txt' | grep -q 'query roce_dscp_priority (DSCP map, encoded): n2:9479 device eth0 group 0: 0.5[0-9]* is not a value the query gives'"
# A node's compact DSCP map and PFC set (one series each) are asked for first, of exactly
# the instances Prometheus lists for the nodes; only a node without them (n2, an older
# rocewatch) is asked again for the per-element series, encoded, by its own instance.
check "--prometheus: listed instances asked by name, not by pattern (n1's other exporter too, not other:9479)" bash -c "
	grep -q '^roce_dscp_map_info{instance=~\"n1:9100|n1:9479|n2:9479\"}\$' '$TMPD/fake-prom.log' &&
	! grep -q -e '(:\[0-9\]+)?' -e other: '$TMPD/fake-prom.log'"
check "--prometheus: only the node without compact series is asked for the encoded DSCP map and PFC set" bash -c "
	[ \$(grep -c 'rocewatch_dscp_group' '$TMPD/fake-prom.log') -eq 4 ] &&
	[ \$(grep -c 'sum without (priority)' '$TMPD/fake-prom.log') -eq 1 ] &&
	! grep -e 'rocewatch_dscp_group' -e 'sum without' '$TMPD/fake-prom.log' | grep -v -q 'instance=~\"n2:9479\"'"
check "--prometheus: a compact map that is not one is an error naming its query, printable (exit 3)" bash -c "
	'$ROCEWATCH' fleet check --prometheus http://\$(echo $(node promcompact)) n1 n2 >'$TMPD/promcompact.txt' 2>&1
	[ \$? -eq 3 ] && tr -s ' \n' ' ' <'$TMPD/promcompact.txt' | grep -q 'query roce_dscp_map_info: n1:9479 device eth0: map=\"00000000111111112222?\[2J2223333333344444444555555556666666677777777\" is not 64 characters 0-7 or -: not decoded'"
check "--prometheus: without /api/v1/label/instance/values, instances matched by pattern, the same verdicts" bash -c "
	'$ROCEWATCH' fleet check -j --prometheus http://\$(echo $(node promnolist)) n1 n2 >'$TMPD/promnolist.json'
	grep -q '^roce_dscp_map_info{instance=~\"n1(:\[0-9\]+)?|n2(:\[0-9\]+)?\"}\$' '$TMPD/fake-promnolist.log' &&
	python3 -c \"import json; a, b = (json.load(open(f)) for f in ('$TMPD/prom.json', '$TMPD/promnolist.json')); assert a['results'] == b['results'] and a['status'] == b['status'], (a, b)\""
check "--prometheus: an instance list cut short: instances matched by pattern, the same verdicts" bash -c "
	'$ROCEWATCH' fleet check -j --prometheus http://\$(echo $(node promcutlist)) n1 n2 >'$TMPD/promcutlist.json'
	grep -q '^roce_dscp_map_info{instance=~\"n1(:\[0-9\]+)?|n2(:\[0-9\]+)?\"}\$' '$TMPD/fake-promcutlist.log' &&
	python3 -c \"import json; a, b = (json.load(open(f)) for f in ('$TMPD/prom.json', '$TMPD/promcutlist.json')); assert a['results'] == b['results'] and a['status'] == b['status'], (a, b)\""
# rules that read only the DSCP map: n2 (no compact series) answers nothing but up at first
printf 'profile: dscponly\nrules:\n  - name: dscp_map\n    scope: fleet\n    each: netdev\n    expr: distinct(dscp2prio) == 1\n    severity: critical\n    doc: the DSCP map alone\n' >"$TMPD/dscponly.yaml"
check "--prometheus: a node with no compact series and nothing else asked is still asked for its map, encoded" bash -c "
	'$ROCEWATCH' fleet check -j --fleet-profile '$TMPD/dscponly.yaml' --prometheus http://\$(echo $(node promdscp)) n1 n2 >'$TMPD/promdscp.json'
	grep -q 'roce_dscp_priority{instance=~\"n2:9479\",dscp' '$TMPD/fake-promdscp.log' &&
	python3 -c \"
import json
d = json.load(open('$TMPD/promdscp.json'))
assert d['counts']['answered'] == 2, d['nodes']
r = {x['rule']: sorted(o['node'] for o in x['outliers']) for x in d['results']}
assert r['dscp_map'] == ['n1', 'n2'], r  # one against one: a tie names both\""
# a name with a backslash and a quote: escaped for RE2, then for the PromQL string
check "--prometheus: a node name's backslash and quote escaped for RE2 and for PromQL" bash -c "
	'$ROCEWATCH' fleet check --prometheus http://\$(echo $(node promnolist)) 'a\\b\"c' >/dev/null 2>&1
	grep -F -q 'instance=~\"a\\\\\\\\b\\\"c(:[0-9]+)?\"}' '$TMPD/fake-promnolist.log'"
# (generous timeouts: on a loaded machine the fake's answer must not time out instead)
check "--prometheus: an answer that ends early is an error naming its query (exit 3)" bash -c "
	'$ROCEWATCH' fleet check --connect-timeout 20s --timeout 60s --prometheus http://\$(echo $(node promcut)) n1 n2 >'$TMPD/promcut.txt' 2>&1
	[ \$? -eq 3 ] && grep -q 'query roce_netdev_mtu_bytes: invalid JSON' '$TMPD/promcut.txt' || { cat '$TMPD/promcut.txt' >&2; false; }"
# ---- --prometheus: what an answer may cost (issue 42 item 7) ----
# Each answer is read series by series as it arrives and nothing of it is kept: an answer
# refused at --max-body, and a 20 MB label value, cost a few KiB, not a body per query.
fake promhuge prom huge 12000000
fake promhugemtu prom huge 12000000 roce_netdev_mtu_bytes
fake promlabel prom hugelabel
fake promlabelall prom hugelabelall 12000000
fake promendless prom endlesslist
fake promstall prom stalllist
fake promhex prom hex
fake promdupsame prom dupsame
fake promdupdiff prom dupdiff
for f in promhuge promhugemtu promlabel promlabelall promendless promstall promhex promdupsame \
	promdupdiff; do
	wait_until 20 ready "$f" || die "fake Prometheus ($f) did not come up"
done
prom_reasons() { # NAME [ARGS...]: "rc=N", then "node: state: reason" of n1 and n2
	local name=$1 rc=0
	shift
	"$ROCEWATCH" fleet check -j "$@" --prometheus "http://$(node "$name")" n1 n2 \
		>"$TMPD/pr-$name.json" 2>"$TMPD/pr-$name.err" || rc=$?
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("rc=%s" % sys.argv[2])
for n in d["nodes"]:
    print("%s: %s: %s" % (n["name"], n["state"], (n["reason"] or "").replace(sys.argv[3], "URL")))
' "$TMPD/pr-$name.json" "$rc" "http://$(node "$name")"
}
expect_reasons() { # NAME WANT [ARGS...]: n1 and n2 both unknown with reason WANT, exit 3
	local name=$1 want=$2 got
	shift 2
	got=$(prom_reasons "$name" "$@")
	[ "$got" = "$(printf 'rc=3\nn1: unknown: %s\nn2: unknown: %s' "$want" "$want")" ] ||
		{ printf 'got:\n%s\nwant: %s\n' "$got" "$want" >&2; return 1; }
}
check "--prometheus: an answer past --max-body is named as such (exit 3)" expect_reasons promhugemtu \
	"Prometheus URL: query roce_netdev_mtu_bytes: the answer is larger than 8 MiB (--max-body)" --max-body 8MiB
check "--prometheus: a 20 MB label value is refused naming the query and the label (exit 3)" \
	expect_reasons promlabel "Prometheus: query roce_netdev_mtu_bytes: a series at byte 60 (instance n1:9479): label x is longer than 4 KiB (no label rocewatch reads is): refused"
# A sample value is a number as Prometheus writes it (strconv 'f'/'e', +Inf, -Inf, NaN):
# strtod read "0x2328" as 9000, the MTU every other node has.
check "--prometheus: a hex sample value is not a number: refused naming it (exit 3)" expect_reasons promhex \
	'Prometheus: query roce_netdev_mtu_bytes: n1:9479 device eth0: the value "0x2328" is not a number as Prometheus writes one: refused'
# n1's MTU in two series (a second scrape job): alike, it is taken once and said once on
# stderr, the verdicts those of one series; 9000 and 1500, n1 is UNKNOWN naming both.
dup_same() {
	local want
	prom_reasons promdupsame >"$TMPD/dupsame.txt"
	want="rocewatch fleet: Prometheus http://$(node promdupsame): query roce_netdev_mtu_bytes: n1:9479 device eth0: 9000 in two series (two scrape jobs or HA replicas of one target?): the same value, taken once; 1 such series on 1 node"
	[ "$(cat "$TMPD/pr-promdupsame.err")" = "$want" ] &&
		[ "$(head -1 "$TMPD/dupsame.txt")" = "rc=2" ] &&
		python3 -c "import json; a, b = (json.load(open(f)) for f in ('$TMPD/prom.json', '$TMPD/pr-promdupsame.json')); assert a['results'] == b['results'], (a, b)" ||
		{ cat "$TMPD/dupsame.txt" "$TMPD/pr-promdupsame.err" >&2; return 1; }
}
check "--prometheus: a series repeated with the same value: taken once, said once, same verdicts" dup_same
dup_diff() {
	local got
	got=$(prom_reasons promdupdiff)
	[ "$got" = "$(printf '%s\n' 'rc=3' "n1: unknown: Prometheus: query roce_netdev_mtu_bytes: n1:9479 device eth0: two series disagree, 9000 and 1500 (two scrape jobs or HA replicas of one target?): which is this node's cannot be told" 'n2: ok: ')" ] ||
		{ printf '%s\n' "$got" >&2; return 1; }
}
check "--prometheus: a series repeated with another value: that node UNKNOWN naming both (exit 3)" dup_diff
# An instance list that never ends is named as such, and then nothing more is asked: asked
# by pattern, Prometheus would try every one of those instances on each node's name.
check "--prometheus: an endless instance list: larger than --max-body, named (exit 3)" expect_reasons \
	promendless "Prometheus URL: GET /api/v1/label/instance/values: the label values answer is larger than 4 MiB (--max-body)" --max-body 4MiB
check "  ... and no query asked after it" bash -c "! grep -q instance '$TMPD/fake-promendless.log'"
check "--prometheus: an instance list that stops half-way: did not end within --timeout, named (exit 3)" \
	expect_reasons promstall "Prometheus URL: GET /api/v1/label/instance/values: the label values answer did not end within 2 s (--timeout)" --timeout 2s
if [ -x /usr/bin/time ]; then
	peak() { # NAME: peak RSS in KiB of fleet check --max-body 8MiB against it
		/usr/bin/time -f %M -o "$TMPD/peak" "$ROCEWATCH" fleet check --max-body 8MiB \
			--prometheus "http://$(node "$1")" n1 n2 >/dev/null 2>&1 || :
		tail -n 1 "$TMPD/peak"
	}
	within() { # NAME: its peak RSS within 2 x --max-body of a small answer's
		local base big
		base=$(peak prom)
		big=$(peak "$1")
		echo "# peak RSS: small answers $base KiB, $1 $big KiB"
		[ $((big - base)) -lt $((16 << 10)) ]
	}
	check "--prometheus: every answer past --max-body: peak RSS within 2 x --max-body of a small answer's" \
		within promhuge
	check "--prometheus: a 12 MB label value in every answer: peak RSS within 2 x --max-body likewise" \
		within promlabelall
else
	echo "# peak RSS checks not run: no /usr/bin/time (contrib/install-deps.sh test)"
fi
# ---- like with like (issue 42 item 17): identical nodes never fail a fleet rule ----
# Four nodes built from rails-good.json, each with the same second port unused (down, MTU
# 1500, no PFC, trust pcp, no IPv4 GID), then with it disabled (its QoS facts unsupported).
mkdir -p "$TMPD/like/unused" "$TMPD/like/disabled" "$TMPD/like/outlier"
python3 - "$FX/rails-good.json" "$TMPD/like" <<'PY'
import copy, json, sys
base, out = json.load(open(sys.argv[1])), sys.argv[2]
def parts(s):
    return ([p for p in s["rdma_ports"] if p["device"] == "mlx5_1"][0],
            [n for n in s["netdevs"] if n["name"] == "eth3"][0])
def unused(s):
    p, n = parts(s)
    p["fields"].update(state="DOWN", phys_state="Disabled", active_mtu=1024, rate=0)
    p["fields"]["gids"] = p["fields"]["gids"][:2]
    del p["fields"]["gid.rocev2_ipv4_index"]
    p["absent"]["gid.rocev2_ipv4_index"] = {"reason": "unsupported", "errno": 61}
    n["fields"].update(mtu=1500, operstate="down", carrier=False, speed=0, trust="pcp")
    n["fields"]["pfc.enabled"] = []
def disabled(s):
    unused(s)
    n = parts(s)[1]
    for k in ("pfc.enabled", "trust", "dscp2prio", "mtu"):
        del n["fields"][k]
        n["absent"][k] = {"reason": "unsupported", "errno": 95}
for kind, f in (("unused", unused), ("disabled", disabled), ("outlier", unused)):
    for i in range(1, 5):
        s = copy.deepcopy(base)
        s["host"] = "gpu%02d" % i
        f(s)
        if kind == "outlier" and i == 3:
            parts(s)[1]["fields"]["mtu"] = 9000  # the one node whose second port differs
        json.dump(s, open("%s/%s/gpu%02d.json" % (out, kind, i), "w"))
PY
like() { # DIR: "rc=N STATUS" then the results that did not pass, in $TMPD/like-DIR.txt
	local rc=0
	"$ROCEWATCH" fleet check -j "$TMPD/like/$1" >"$TMPD/like-$1.json" 2>"$TMPD/like-$1.err" || rc=$?
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("rc=%s %s" % (sys.argv[2], d["status"]))
for r in d["results"]:
    if r["outcome"] != "pass" and r["rule"] != "profile_outcome" and not r["rule"].startswith("nccl_"):
        print(r["rule"], r["group"], r["outcome"], r["reason"], [(o["node"], o["value"]) for o in r.get("outliers", [])])
' "$TMPD/like-$1.json" "$rc" >"$TMPD/like-$1.txt"
}
like_unused() {
	like unused
	# (files from before rails: the rail rules skip, their facts absent on every node)
	[ "$(head -1 "$TMPD/like-unused.txt")" = "rc=0 OK" ] &&
		[ "$(sed 1d "$TMPD/like-unused.txt" | grep -v ' skip guard false on every ')" = "rocev2_gid_index rail 1 skip nothing to compare: gid.rocev2_ipv4_index absent: unsupported on all 4 nodes []" ] ||
		{ cat "$TMPD/like-unused.txt" >&2; return 1; }
}
like_disabled() {
	like disabled
	[ "$(head -1 "$TMPD/like-disabled.txt")" = "rc=0 OK" ] &&
		grep -qx 'pfc_priorities rail 1 skip nothing to compare: pfc.enabled absent: unsupported on all 4 nodes \[\]' "$TMPD/like-disabled.txt" &&
		! grep -q ' unknown ' "$TMPD/like-disabled.txt" || { cat "$TMPD/like-disabled.txt" >&2; return 1; }
}
like_outlier() {
	like outlier
	[ "$(head -1 "$TMPD/like-outlier.txt")" = "rc=2 CRITICAL" ] &&
		grep -qxF "netdev_mtu rail 1 fail None [('gpu03', '9000')]" "$TMPD/like-outlier.txt" ||
		{ cat "$TMPD/like-outlier.txt" >&2; return 1; }
}
check "four identical nodes with the same unused port: OK (0), nothing fails or is unknown" like_unused
check "... with the same disabled port: OK, its rules skipped as nothing to compare, no unknown" like_disabled
check "one node whose second port differs: CRITICAL, naming that node on its rail" like_outlier

if command -v openssl >/dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$TMPD/key.pem" -out "$TMPD/cert.pem" \
		>/dev/null 2>&1
	fake tls tls "$TMPD/cert.pem" "$TMPD/key.pem" "$FX/good.json"
	wait_until 20 ready tls || die "TLS node did not come up"
	check "TLS: an unknown CA makes the node UNKNOWN" \
		[ "$(rc_of --scheme https "$(node tls)")" -eq 3 ]
	check "  ... and says why" grep -qi "certificate" "$TMPD/out"
	check "TLS: --ca-file verifies it" \
		[ "$(rc_of --scheme https --ca-file "$TMPD/cert.pem" "$(node tls)")" -eq 0 ]
	check "TLS: --insecure-skip-verify" \
		[ "$(rc_of --scheme https --insecure-skip-verify "$(node tls)")" -eq 0 ]
else
	echo "# TLS checks not run: no openssl to make a certificate (contrib/install-deps.sh test)"
fi
finish
