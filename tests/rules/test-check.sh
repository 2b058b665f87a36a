#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocewatch check through the real binary: the shipped profiles against a correctly
# configured node and one snapshot per misconfiguration (exactly the expected rules
# fail, with the expected exit code), DCB unsupported (unknown, not pass or fail),
# counter rules over replayed sequences, bad input (exit 3), rules lint/list.
. "$(dirname "$0")/../lib.sh"

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
export NO_COLOR= # tests decide colour themselves
# whole lines to grep; wrapping at 80 and 160 columns is the goldens' (test-check-golden.sh)
export COLUMNS=250

# expect_check FIXTURE EXIT "rule@device ..." [extra check args]: the failing set is exactly that
expect_check() {
	local fx=$1 want_rc=$2 want=$3 rc=0
	shift 3
	"$ROCEWATCH" check --from "$FX/$fx" --format json "$@" >"$TMPD/out.json" 2>"$TMPD/err" || rc=$?
	if [ "$rc" -ne "$want_rc" ]; then
		echo "  $fx: exit $rc, want $want_rc; stderr: $(cat "$TMPD/err")" >&2
		return 1
	fi
	python3 - "$TMPD/out.json" "$want" "$want_rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = set(sys.argv[2].split())
got = {"%s@%s" % (r["rule"], r["object"].get("device", "node"))
       for r in d["results"] if r["outcome"] == "fail"}
unknown = [(r["rule"], r["reason"]) for r in d["results"] if r["outcome"] == "unknown"]
assert d["schema"] == "rocewatch-check" and d["schema_version"] == 1, d["schema"]
assert d["exit_code"] == int(sys.argv[3]), d["exit_code"]
assert got == want, "failing %s, want %s" % (sorted(got), sorted(want))
assert not unknown, "unexpected unknown: %s" % unknown
PY
}

# issue 41: CRITICAL > UNKNOWN > WARNING > OK wherever one status is derived from many.
# An undecided critical (trust unreadable) beside a failing warning (CNP DSCP 40) is
# UNKNOWN (exit 3: the fail-closed prolog drains), never WARNING (exit 1: it starts the job).
precedence() {
	local rc=0
	"$ROCEWATCH" check --from "$FX/trust-unknown-cnp-40.json" --format json >"$TMPD/p.json" 2>/dev/null || rc=$?
	[ "$rc" -eq 3 ] || { echo "  json: exit $rc, want 3" >&2; return 1; }
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert (d["status"], d["exit_code"]) == ("UNKNOWN", 3), (d["status"], d["exit_code"])' "$TMPD/p.json" || return 1
	rc=0
	"$ROCEWATCH" check --from "$FX/trust-unknown-cnp-40.json" >"$TMPD/p.txt" 2>/dev/null || rc=$?
	[ "$rc" -eq 3 ] && tail -n 1 "$TMPD/p.txt" | grep -q ': UNKNOWN$' || { echo "  text: exit $rc: $(tail -n 1 "$TMPD/p.txt")" >&2; return 1; }
	"$ROCEWATCH" check --from "$FX/trust-unknown-cnp-40.json" --format nfd >"$TMPD/p.nfd" 2>/dev/null || true
	grep -qx 'feature.node.kubernetes.io/rocewatch.roce-ready=false' "$TMPD/p.nfd" &&
		grep -qx 'feature.node.kubernetes.io/rocewatch.status=unknown' "$TMPD/p.nfd" ||
		{ echo "  nfd: $(cat "$TMPD/p.nfd")" >&2; return 1; }
}
check "an unknown critical beside a failing warning: UNKNOWN in text, json and nfd, exit 3" precedence

# issue 41 item 5: a verdict always comes with what to do - every shipped rule that can
# fail has an action, and lint says so of a critical rule that has none
check "the shipped profiles lint without a warning (every critical rule has an action)" bash -c \
	"out=\$('$ROCEWATCH' rules lint '$SOURCE_DIR'/rules/profiles/*.yaml 2>&1) && ! grep -q warning <<<\"\$out\""
printf 'profile: t\nrules:\n  - name: x\n    scope: node\n    expr: memlock > 0\n    severity: critical\n    doc: d\n' >"$TMPD/noaction.yaml"
check "lint: a critical rule without an action is warned about" bash -c \
	"'$ROCEWATCH' rules lint '$TMPD/noaction.yaml' 2>&1 | grep -q \"warning: critical rule 'x' has no action\""
check "a failing shipped rule says what to do: memlock_unlimited -> fix-config" bash -c \
	"'$ROCEWATCH' check --from '$FX/memlock-64k.json' --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"actions\"] == [\"fix-config\"], d[\"actions\"]'"

check "correct node: everything passes, exit 0" expect_check good.json 0 ""
check "8-NIC node: everything passes, exit 0" expect_check good-8nic.json 0 ""
check "PFC on 0 and 3: pfc_only_on_roce_priority, exit 2" \
	expect_check pfc-0-and-3.json 2 "pfc_only_on_roce_priority@eth2"
check "global pause on: global_pause_off, exit 2" \
	expect_check global-pause.json 2 "global_pause_off@eth2"
check "MTU 1500 -> active_mtu 1024: netdev_mtu and active_mtu_4096, exit 2" \
	expect_check mtu-1500.json 2 "netdev_mtu@eth2 active_mtu_4096@mlx5_0"
check "CNP on priority 0: cnp_priority (a warning), exit 1" \
	expect_check cnp-prio-0.json 1 "cnp_priority@eth2"
check "DSCP 26 unmapped: roce_dscp_to_roce_priority, exit 2" \
	expect_check dscp-26-unmapped.json 2 "roce_dscp_to_roce_priority@eth2"
check "no RoCE v2 IPv4 GID: rocev2_ipv4_gid, exit 2" \
	expect_check no-rocev2-gid.json 2 "rocev2_ipv4_gid@mlx5_0"
check "memlock 64 KiB: memlock_unlimited, exit 2" \
	expect_check memlock-64k.json 2 "memlock_unlimited@node"
check "memlock 64 KiB accepted with --param min_memlock=64KiB" \
	expect_check memlock-64k.json 0 "" --param min_memlock=64KiB
# The container profile (an init container's check): device nodes and IPC_LOCK
check "pod given /dev/infiniband and IPC_LOCK: container profile passes, exit 0" \
	expect_check pod-given.json 0 "" --profile lossless-roce --profile container
check "bare pod: uverbs_device_nodes, ipc_lock_capability, memlock_unlimited, exit 2" \
	expect_check pod-bare.json 2 "uverbs_device_nodes@node ipc_lock_capability@node memlock_unlimited@node" \
	--profile lossless-roce --profile container
check "a snapshot without the pod facts: container rules unknown, exit 3" bash -c \
	"'$ROCEWATCH' check --from '$FX/good.json' --profile container --format json | grep -q '\"exit_code\": 3'"
check "pause storm in the window: both storm rules fail, exit 2" \
	expect_check pause-storm.json 2 "no_pause_storm_errors@eth2 no_pause_storm_warnings@eth2"
check "pause storm older than the 5m window: passes" expect_check pause-storm-expired.json 0 ""
check "counter reset in the middle: 50 + 5 + 15 out-of-sequence, exit 1" \
	expect_check counter-reset.json 1 "no_out_of_sequence@mlx5_0"
check "lossy profile on an ECN-only node: exit 0" \
	expect_check lossy-good.json 0 "" --profile lossy-roce
check "lossy profile on the lossless node: pfc_disabled, exit 1" \
	expect_check good.json 1 "pfc_disabled@eth2 pfc_disabled@eth3" --profile lossy-roce
check "RoCE on priority 5 via --param: PFC, DSCP and ECN rules fail on the priority-3 node" \
	expect_check good.json 2 "pfc_only_on_roce_priority@eth2 pfc_only_on_roce_priority@eth3 roce_dscp_to_roce_priority@eth2 roce_dscp_to_roce_priority@eth3 ecn_np_on_roce_priority@eth2 ecn_np_on_roce_priority@eth3 ecn_rp_on_roce_priority@eth2 ecn_rp_on_roce_priority@eth3" \
	--param roce_priority=5

# --netdev-include/--exclude filter a replayed snapshot as they filter the machine
netdev_filter() {
	"$ROCEWATCH" check --from "$FX/good.json" --netdev-include 'eth2' --format json >"$TMPD/f.json" || true
	"$ROCEWATCH" check --from "$FX/good.json" --netdev-exclude 'eth.*' --format json >"$TMPD/x.json" || true
	python3 - "$TMPD/f.json" "$TMPD/x.json" <<'PY'
import json, sys
inc, exc = (json.load(open(p)) for p in sys.argv[1:3])
nd = lambda d: sorted({r["object"]["device"] for r in d["results"] if r["object"]["kind"] == "netdev"})
assert nd(inc) == ["eth2"], nd(inc)
assert nd(exc) == ["eno1"], nd(exc)
PY
}
check "check --from with --netdev-include/--netdev-exclude: applied, not ignored" netdev_filter

# summaries carry the numbers
summary_is() { # FIXTURE RULE DEVICE EXPECTED
	local got
	got=$("$ROCEWATCH" check --from "$FX/$1" --format json 2>/dev/null |
		python3 -c "import json,sys; d=json.load(sys.stdin); print([r['summary'] for r in d['results'] if r['rule']=='$2' and r['object'].get('device')=='$3'][0])")
	[ "$got" = "$4" ] || { echo "  $2 on $3: '$got'" >&2; return 1; }
}
check "counter reset: rebaselined, not counted: the summary says 65 and why" \
	summary_is counter-reset.json no_out_of_sequence mlx5_0 "65 packets out of sequence (counter reset 150 -> 5 in the window: rebaselined, not counted) (only 30s of the 5m window observed)"
check "a counter that only resets counts nothing" \
	summary_is counter-reset.json no_local_ack_timeouts mlx5_0 "0 ACK timeouts (counter reset 500 -> 0 in the window: rebaselined, not counted) (only 30s of the 5m window observed)"
check "link_downed 1000 -> 999: 0 link down events, the check passes" \
	expect_check link-downed-decrease.json 0 ""
check "link_downed 1000 -> 999: the summary says the counter was reset" \
	summary_is link-downed-decrease.json link_not_downed mlx5_0 "0 link down events (counter reset 1000 -> 999 in the window: rebaselined, not counted) (only 30s of the 5m window observed)"
check "pause storm: 2 error events" \
	summary_is pause-storm.json no_pause_storm_errors eth2 "2 pause storm error events (only 30s of the 5m window observed)"

summary_node_is() { # FIXTURE RULE EXPECTED (a node rule)
	local got
	got=$("$ROCEWATCH" check --from "$FX/$1" --format json 2>/dev/null |
		python3 -c "import json,sys; d=json.load(sys.stdin); print([r['summary'] for r in d['results'] if r['rule']=='$2'][0])")
	[ "$got" = "$3" ] || { echo "  $2: '$got'" >&2; return 1; }
}
check "memlock unlimited: the summary says unlimited (not 'limit=absent (unsupported) bytes')" \
	summary_node_is good.json memlock_unlimited "RLIMIT_MEMLOCK (bytes): unlimited"
check "memlock 64 KiB: the summary gives the limit" \
	summary_node_is memlock-64k.json memlock_unlimited "RLIMIT_MEMLOCK (bytes): 65536"
check "no RoCE v2 IPv4 GID: NCCL_IB_GID_INDEX=none (not 'absent (unsupported)')" \
	summary_is no-rocev2-gid.json rocev2_ipv4_gid mlx5_0 "0 RoCE v2 IPv4 GIDs for eth2; NCCL_IB_GID_INDEX=none"
check "a window fully covered by the samples says so" \
	summary_is pause-storm-expired.json no_pause_storm_errors eth2 "0 pause storm error events (over the last 5m)"
# never claim a window that was not observed: the JSON says which span the verdict rests on
window_json() {
	"$ROCEWATCH" check --from "$FX/counter-reset.json" --format json >"$TMPD/w.json" || [ $? -eq 1 ]
	python3 - "$TMPD/w.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["results"] if x["rule"] == "no_out_of_sequence"][0]
assert r["window_seconds"] == 300 and r["observed_seconds"] == 30, r
m = [x for x in d["results"] if x["rule"] == "netdev_mtu"][0]
assert m["window_seconds"] is None and m["observed_seconds"] is None, m
PY
}
check "JSON: window_seconds and observed_seconds of counter rules (null for the others)" window_json

# DCB unsupported: the PFC rules are unknown with the reason, nothing fails, exit 3
dcb_unknown() {
	local rc=0
	"$ROCEWATCH" check --from "$FX/dcb-unsupported.json" --format json >"$TMPD/dcb.json" || rc=$?
	[ "$rc" -eq 3 ] || { echo "  exit $rc" >&2; return 1; }
	python3 - "$TMPD/dcb.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = {(x["rule"], x["object"].get("device")): x for x in d["results"]}
for dev in ("eth2", "eth3"):
    x = r[("pfc_only_on_roce_priority", dev)]
    assert x["outcome"] == "unknown" and x["reason"] == "pfc.enabled absent: unsupported", x
    x = r[("no_pause_on_non_pfc_priorities", dev)]
    assert x["outcome"] == "unknown" and x["reason"].endswith("absent: unsupported"), x
    assert r[("dcbx_host_managed", dev)]["outcome"] == "unknown"
assert not [x for x in d["results"] if x["outcome"] == "fail"]
assert d["status"] == "UNKNOWN"
# the management NIC has no RDMA: skipped, with the guard as the reason
x = r[("pfc_only_on_roce_priority", "eno1")]
assert x["outcome"] == "skip" and x["reason"] == "guard false: rdma", x
PY
}
check "DCB unsupported: PFC rules unknown with the reason, exit 3" dcb_unknown

# one snapshot (the README's `check --from snapshot.json`): counter rules cannot be decided,
# so they are skipped with that reason, as fleet check does, and a healthy node is OK
single_sample() {
	local rc=0
	"$ROCEWATCH" check --from "$FX/good-single.json" --format json >"$TMPD/one.json" || rc=$?
	[ "$rc" -eq 0 ] || { echo "  exit $rc, want 0" >&2; return 1; }
	python3 - "$TMPD/one.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "OK", j["status"]
res = j["results"]
assert not [x for x in res if x["outcome"] in ("unknown", "fail")], "unknown or fail left"
skipped = [x for x in res if x["rule"] == "no_pause_storm_errors"]
assert skipped and all(x["outcome"] == "skip" and "single sample" in x["reason"] for x in skipped), skipped
assert "one snapshot has no counter history" in j["history"]["note"], j["history"]
PY
}
check "one snapshot: counter rules skipped with the reason, a healthy node OK (exit 0)" single_sample
single_sample_text() {
	local rc=0
	"$ROCEWATCH" check --color never --from "$FX/good-single.json" >"$TMPD/one.txt" || rc=$?
	[ "$rc" -eq 0 ] && grep -q '^rocewatch check on gpu-node-07: OK$' "$TMPD/one.txt" &&
		grep -q '^counter rules: skipped, one snapshot has no counter history' "$TMPD/one.txt" &&
		tail -1 "$TMPD/one.txt" | grep -q ', 0 unknown, [0-9]* skipped: OK$'
}
check "one snapshot, text: OK, and the second line says the counter rules were skipped" \
	single_sample_text
# a single snapshot still fails what it shows: the first sample of mtu-1500
single_sample_fail() {
	local rc=0
	python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))[0]))' \
		"$FX/mtu-1500.json" >"$TMPD/mtu-one.json"
	"$ROCEWATCH" check --color never --from "$TMPD/mtu-one.json" >"$TMPD/t" || rc=$?
	[ "$rc" -eq 2 ] && grep -q 'fail     critical  netdev_mtu' "$TMPD/t"
}
check "one snapshot with MTU 1500: CRITICAL (exit 2)" single_sample_fail

# a --param value the rules cannot take is the flag's error, said once, at the flag
param_at_flag() {
	local rc=0
	"$ROCEWATCH" check --from "$FX/good-single.json" --param roce_priority=9 >/dev/null 2>"$TMPD/p9.err" || rc=$?
	[ "$rc" -eq 3 ] && [ "$(wc -l <"$TMPD/p9.err")" -eq 1 ] &&
		grep -Eq '^rocewatch check: error: --param roce_priority=9: index 9 is out of range 0-7 \(where .*lossless-roce.yaml:[0-9]+:[0-9]+ uses it in expr\)$' "$TMPD/p9.err" ||
		{ cat "$TMPD/p9.err" >&2; return 1; }
}
check "--param roce_priority=9: one error, at the flag (naming where it is used)" param_at_flag

# an incident (incident.json): a critical pause storm on eth2, warnings on the node, netdevs
# and ports, two node facts unreadable.  Worst first whatever the object: the critical
# failure is the first row, every failure comes before every unknown.
worst_first() {
	local rc=0 rows
	COLUMNS=80 "$ROCEWATCH" check --color never --from "$FX/incident.json" >"$TMPD/inc.txt" || rc=$?
	[ "$rc" -eq 2 ] || { echo "  exit $rc, want 2" >&2; return 1; }
	rows=$(grep -E '^  (fail|unknown) ' "$TMPD/inc.txt" | awk '{ print $1 "-" $2 }' | uniq | tr '\n' ' ')
	[ "$rows" = "fail-critical fail-warning unknown-critical unknown-warning " ] ||
		{ echo "  row order: $rows" >&2; return 1; }
	# the critical row is within the first screen (80x24)
	head -24 "$TMPD/inc.txt" | grep -q '^  fail     critical  no_pause_storm_errors'
}
check "check is worst-first across objects (critical fail first, unknowns last)" worst_first
# issue 41 item 8: -q names each object once, objects by their worst row, rows worst first
quiet_by_object() {
	local rc=0
	COLUMNS=80 "$ROCEWATCH" check -q --color never --from "$FX/incident.json" >"$TMPD/q.txt" || rc=$?
	[ "$rc" -eq 2 ] || { echo "  exit $rc, want 2" >&2; return 1; }
	heads=$(grep -E '^(node|netdev|rdma_port) ' "$TMPD/q.txt" | tr '\n' '|')
	[ "$heads" = "netdev eth2|node gpu-node-07|netdev eth3|rdma_port mlx5_0/1 (eth2)|rdma_port mlx5_1/1 (eth3)|" ] ||
		{ echo "  headers: $heads" >&2; return 1; }
	[ "$(sed -n '/^node gpu-node-07/,/^$/p' "$TMPD/q.txt" | grep -E '^  (fail|unknown) ' | awk '{ print $1 "-" $2 }' | tr '\n' ' ')" = \
		"fail-warning fail-warning unknown-critical unknown-warning " ]
}
check "check -q: each object once, worst first" quiet_by_object
# issue 41 item 8: a port bound to no netdev reads no literal `ip link show IF`
no_netdev_fix() {
	python3 - "$FX/good.json" "$TMPD/nonet.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d:
    p = s["rdma_ports"][0]
    p.pop("netdev", None); p.pop("ifindex", None); p["fields"].pop("netdev_name", None)
    p["fields"].update(state="DOWN", phys_state="Disabled")
    for g in p["fields"].get("gids", []):
        g["netdev"] = ""
json.dump(d, open(sys.argv[2], "w"))
PY
	COLUMNS=250 "$ROCEWATCH" check --color never --from "$TMPD/nonet.json" >"$TMPD/nonet.txt" || true
	tr -s ' \n' '  ' <"$TMPD/nonet.txt" >"$TMPD/nonet.one" # the fix text is wrapped
	grep -qF '(`ip link show <netdev>`, cable' "$TMPD/nonet.one" &&
		grep -qF '(mlx5_0/1 is bound to no netdev: `rdma link show mlx5_0/1` says which it should be)' "$TMPD/nonet.one" &&
		! grep -q 'ip link show IF' "$TMPD/nonet.one"
}
check "a port with no netdev: its fix names a placeholder and why, never a literal IF" no_netdev_fix
# issue 41 item 6: a driver without the PMA link_downed (bnxt_re) is watched through its
# netdev's ethtool link-down count (bnxt_en link_down_events), and coverage counts it
netdev_link_down() {
	python3 - "$FX/good.json" "$TMPD/bnxtlike.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k, s in enumerate(d):
    for p in s["rdma_ports"]:
        p["counters"].get("port", {}).pop("link_downed", None)
    for n in s["netdevs"]:
        if n["name"] in ("eth2", "eth3"):
            n["fields"]["port.link_down_events"] = 5 + 2 * k * (n["name"] == "eth2")
json.dump(d, open(sys.argv[2], "w"))
PY
	"$ROCEWATCH" check --from "$TMPD/bnxtlike.json" -j >"$TMPD/bnxtlike.out" || true
	python3 - "$TMPD/bnxtlike.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["object"].get("device"): x for x in d["results"] if x["rule"] == "link_not_downed"}
assert r["mlx5_0"]["outcome"] == "fail" and r["mlx5_0"]["summary"].startswith("2 link down events"), r["mlx5_0"]
assert r["mlx5_1"]["outcome"] == "pass", r["mlx5_1"]
for c in d["coverage"]:
    assert "link_not_downed" not in c["missing"], c
PY
}
check "no PMA link_downed: link_not_downed reads the netdev's link-down count, and coverage counts it" netdev_link_down
# an unknown says what could not be read and how to let rocewatch read it, never the fix
unknown_no_fix() {
	COLUMNS=250 "$ROCEWATCH" check --color never --from "$FX/incident.json" >"$TMPD/inc.txt"
	# the hint wraps at 100 columns: one line to grep
	grep -A3 'unknown  warning   pcie_acs_redirect_off' "$TMPD/inc.txt" | tr -s ' \n' '  ' >"$TMPD/acs.txt"
	grep -q 'rocewatch was not allowed to read pcie.acs_redirect_gpus' "$TMPD/acs.txt" &&
		grep -q 'Run it as root' "$TMPD/acs.txt" && ! grep -qi 'setpci\|disable ACS' "$TMPD/inc.txt" &&
		"$ROCEWATCH" check -j --from "$FX/incident.json" >"$TMPD/inc.json"
	python3 - "$TMPD/inc.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for x in j["results"]:
    if x["outcome"] == "unknown":
        assert x["doc"].startswith("Not decided"), x
        assert "setpci" not in x["doc"] and "Fix:" not in x["doc"], x
PY
}
check "unknown: what could not be read and how to read it, never the failure's fix (text, JSON)" \
	unknown_no_fix

no_rdma() {
	local rc=0
	"$ROCEWATCH" check --from "$SOURCE_DIR/tests/fixtures/snapshots/seq-ok.json" >"$TMPD/t" 2>&1 || rc=$?
	[ "$rc" -eq 3 ] && grep -q "requires an rdma_port where link_layer == \"Ethernet\", and this node has none" "$TMPD/t"
}
check "no RDMA device with a profile that requires one: exit 3" no_rdma

# text output: the verdict first, what is not OK grouped by object with its fix, one line for
# what passed; colour only when asked or on a terminal
text_out() {
	"$ROCEWATCH" check --from "$FX/pfc-0-and-3.json" >"$TMPD/t.txt" || [ $? -eq 2 ]
	head -n 1 "$TMPD/t.txt" | grep -q '^rocewatch check on gpu-node-07: CRITICAL$' &&
		grep -q '^netdev eth2$' "$TMPD/t.txt" &&
		! grep -q '^rdma_port mlx5_0/1 (eth2)$' "$TMPD/t.txt" &&
		! grep -q '^  pass  .*critical' "$TMPD/t.txt" &&
		grep -q "^  pass     74 rules on the node, 2 netdevs, 2 RDMA ports (-v lists them)$" "$TMPD/t.txt" &&
		grep -Eq '^  fail +critical +pfc_only_on_roce_priority +PFC enabled on \{0,3\}, expected only \{3\}$' "$TMPD/t.txt" &&
		grep -q 'mlnx_qos -i eth2 --pfc' "$TMPD/t.txt" &&
		! grep -qw 'IF' "$TMPD/t.txt" &&
		grep -q 'CRITICAL$' "$TMPD/t.txt" &&
		! grep -q $'\033' "$TMPD/t.txt"
}
check "text report: verdict first, failures by object with the fix, passes in one line, no colour in a pipe" text_out
# fix hints name the object: IF the netdev, DEV the RDMA device, PORT the port
hints() {
	"$ROCEWATCH" check --from "$FX/good.json" --format json >"$TMPD/h.json"
	python3 - "$TMPD/h.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
doc = {(r["rule"], r["object"].get("device")): r["doc"] for r in d["results"]}
assert "mlxconfig -d mlx5_0 set CNP_802P_PRIO_P1=6" in doc[("cnp_priority", "eth2")], doc[("cnp_priority", "eth2")]
assert "/sys/class/net/eth3/ecn/roce_np/cnp_802p_prio" in doc[("cnp_priority", "eth3")]
t = doc[("rdma_cm_tos", "mlx5_1")]
assert "cma_roce_tos -d mlx5_1 -t 106" in t and "rdma_cm/mlx5_1/ports/1/default_roce_tos" in t, t
assert "ip link show eth2" in doc[("port_active", "mlx5_0")], doc[("port_active", "mlx5_0")]
PY
}
check "fix hints say the device (eth2, mlx5_0, port 1), not IF and DEV" hints

# native InfiniBand ports are not RoCE ports: skipped, with the reason
ib_port() {
	expect_check ib-port.json 0 "" || return 1
	python3 - "$TMPD/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ib = [r for r in d["results"] if r["object"].get("device") == "mlx5_1"]
assert ib and all(r["outcome"] == "skip" for r in ib), [(r["rule"], r["outcome"]) for r in ib]
want = 'outside the profile: it applies to rdma_port where link_layer == "Ethernet" (here link_layer=InfiniBand)'
assert all(r["reason"] == want for r in ib), ib[0]["reason"]
roce = [r for r in d["results"] if r["object"].get("device") == "mlx5_0" and r["rule"] == "rocev2_ipv4_gid"]
assert roce[0]["outcome"] == "pass", roce
PY
}
check "an IB port next to a RoCE port: its RoCE rules skipped with the reason, exit 0" ib_port
check "the IB port is one line in the text report" bash -c \
	"'$ROCEWATCH' check --from '$FX/ib-port.json' | grep -q '^  skip     rdma_port mlx5_1/1: outside the profile: it applies to rdma_port where link_layer == \"Ethernet\" (here link_layer=InfiniBand)\$'"
ib_only() {
	local rc=0
	"$ROCEWATCH" check --from "$FX/ib-only.json" >"$TMPD/ib.txt" || rc=$?
	[ "$rc" -eq 3 ] && grep -q 'profile lossless-roce requires an rdma_port where link_layer == "Ethernet", and this node has none' "$TMPD/ib.txt"
}
check "an InfiniBand-only node: no RoCE port, UNKNOWN (exit 3), not OK" ib_only
check "--color always colours" bash -c "'$ROCEWATCH' check --from '$FX/good.json' --color always | grep -q $'\033\\[32mpass'"
if command -v script >/dev/null; then
	check "a terminal gets colour" bash -c "NO_COLOR= script -qec \"'$ROCEWATCH' check --from '$FX/good.json'\" /dev/null | grep -q $'\033\\['"
	check "NO_COLOR turns it off on a terminal" bash -c "! NO_COLOR=1 script -qec \"'$ROCEWATCH' check --from '$FX/good.json'\" /dev/null | grep -q $'\033\\['"
fi
check "-v lists skipped rules" bash -c "'$ROCEWATCH' check -v --from '$FX/good.json' | grep -Eq '^  skip .*guard false: rdma'"

# bad input: one clear line, exit 3 (UNKNOWN)
expect_unknown() { # PATTERN ARGS...
	local pattern=$1 rc=0
	shift
	timeout 10 "$ROCEWATCH" check "$@" >"$TMPD/o" 2>"$TMPD/e" || rc=$?
	[ "$rc" -eq 3 ] || { echo "  check $*: exit $rc" >&2; return 1; }
	grep -q -- "$pattern" "$TMPD/e" || { echo "  check $*: stderr: $(cat "$TMPD/e")" >&2; return 1; }
}
cat >"$TMPD/bad.yaml" <<'EOF'
profile: bad
rules:
  - name: r
    scope: netdev
    severity: warning
    expr: pfc.enabled == 3
EOF
check "bad rules: file:line:col, exit 3" expect_unknown \
	"bad.yaml:6:23: error: expr: type mismatch: '==' cannot compare set with number" \
	--profile "$TMPD/bad.yaml" --from "$FX/good.json"
check "unknown flag: exit 3" expect_unknown "'--bogus'" --bogus
check "bad --format: exit 3" expect_unknown "--format: 'xml' is not text, json or nfd" --format xml
check "bad --param: exit 3" expect_unknown "--param 'roce_priority': expected KEY=VALUE" --param roce_priority
check "unknown --param: exit 3" expect_unknown "no loaded profile declares a parameter 'nope'" --param nope=1 --from "$FX/good.json"
check "--param of the wrong type: exit 3" expect_unknown "expected a number" --param roce_priority=three --from "$FX/good.json"
check "unknown profile: exit 3" expect_unknown "profile 'nope' not found (looked in " --profile nope
check "unreadable snapshot: exit 3, the path named once" expect_unknown \
	"^rocewatch check: /nonexistent.json: No such file or directory$" --from /nonexistent.json
check "--from DIR: exit 3, 'is a directory' (not a JSON parse error)" expect_unknown \
	"^rocewatch check: $FX: is a directory, not a snapshot file" --from "$FX"
check "--help exits 0" bash -c "'$ROCEWATCH' check --help | grep -q 'Usage: rocewatch check'"

# The job's NCCL settings (check --nccl-env FILE) against the correct node: one case per
# nccl_* rule, each failing exactly that rule; a sound job passes them all.
nccl_env() { # NAME KEY=VALUE...: a job file $TMPD/NAME.env
	local name=$1
	shift
	# NCCL sends TC 0 when NCCL_IB_TC is unset (nccl_ib_tc fails): a sound TC unless the case sets one
	printf '%s\n' "# job $name" NCCL_IB_TC=106 "$@" >"$TMPD/$name.env"
}
nccl_env sound 'export NCCL_IB_HCA="=mlx5_0:1,mlx5_1:1"' NCCL_SOCKET_IFNAME==eth2,eth3 \
	NCCL_IB_GID_INDEX=3 NCCL_IB_TC=106 NCCL_NET_GDR_LEVEL=PXB NCCL_CROSS_NIC=0 NCCL_DEBUG=WARN
check "--nccl-env, a sound job: every nccl_* rule passes, exit 0" \
	expect_check good.json 0 "" --nccl-env "$TMPD/sound.env"
nccl_env hca-typo NCCL_IB_HCA==mlx5_0:1,mlx5_9:1
check "NCCL_IB_HCA naming a device the node lacks: nccl_ib_hca, exit 2" \
	expect_check good.json 2 "nccl_ib_hca@node" --nccl-env "$TMPD/hca-typo.env"
nccl_env hca-none 'NCCL_IB_HCA=^mlx5'
check "NCCL_IB_HCA excluding every device: nccl_ib_hca, exit 2" \
	expect_check good.json 2 "nccl_ib_hca@node" --nccl-env "$TMPD/hca-none.env"
nccl_env ifname-down NCCL_SOCKET_IFNAME=eno
check "NCCL_SOCKET_IFNAME matching no interface with an address: nccl_socket_ifname, exit 2" \
	expect_check good.json 2 "nccl_socket_ifname@node" --nccl-env "$TMPD/ifname-down.env"
nccl_env ifname-docker NCCL_SOCKET_IFNAME=eth2,docker0
check "NCCL_SOCKET_IFNAME naming docker0: nccl_socket_ifname_virtual, exit 1" \
	expect_check good.json 1 "nccl_socket_ifname_virtual@node" --nccl-env "$TMPD/ifname-docker.env"
nccl_env gid-v1 NCCL_IB_GID_INDEX=1
check "NCCL_IB_GID_INDEX at a link-local GID: nccl_ib_gid_index, exit 1" \
	expect_check good.json 1 "nccl_ib_gid_index@node" --nccl-env "$TMPD/gid-v1.env"
nccl_env tc-no-ect NCCL_IB_TC=104
check "NCCL_IB_TC=104 (DSCP 26 without ECT): nccl_ib_tc, exit 1" \
	expect_check good.json 1 "nccl_ib_tc@node" --nccl-env "$TMPD/tc-no-ect.env"
nccl_env ib-off NCCL_IB_DISABLE=1
check "NCCL_IB_DISABLE=1: nccl_ib_disable, exit 2" \
	expect_check good.json 2 "nccl_ib_disable@node" --nccl-env "$TMPD/ib-off.env"
# issue 42 item 15: with a net plugin NCCL's IB code is not used, so the IB rules do not judge
nccl_env net-plugin 'NCCL_NET="AWS Libfabric"' NCCL_IB_HCA==mlx5_9:1 NCCL_IB_TC=0
check "NCCL_NET naming a plugin's net: the IB rules are skipped, a bad NCCL_IB_HCA does not fail, exit 0" \
	expect_check good.json 0 "" --nccl-env "$TMPD/net-plugin.env"
nccl_env net-plugin-lib NCCL_NET_PLUGIN=aws-ofi-nccl NCCL_IB_DISABLE=1
check "NCCL_NET_PLUGIN: nccl_ib_disable and the IB rules are skipped, exit 0" \
	expect_check good.json 0 "" --nccl-env "$TMPD/net-plugin-lib.env"
nccl_env net-socket NCCL_NET=Socket
check "NCCL_NET=Socket: TCP sockets, nccl_ib_disable, exit 2" \
	expect_check good.json 2 "nccl_ib_disable@node" --nccl-env "$TMPD/net-socket.env"
check "the job's net in the JSON report: job.net and the IB rules skipped" bash -c \
	"'$ROCEWATCH' check --from '$FX/good.json' --nccl-env '$TMPD/net-plugin.env' -j | python3 -c 'import json,sys
j = json.load(sys.stdin)[\"job\"]
assert j[\"facts\"][\"net\"] == \"plugin\", j[\"facts\"]
assert j[\"variables\"][\"NCCL_NET\"][\"effective\"] == \"plugin\", j[\"variables\"]
v = {x[\"rule\"]: x[\"outcome\"] for x in j[\"results\"]}
assert all(v[r] == \"skip\" for r in (\"nccl_ib_hca\", \"nccl_ib_gid_index\", \"nccl_ib_tc\", \"nccl_ib_disable\")), v
assert v[\"nccl_socket_ifname\"] == \"pass\", v
assert any(\"NCCL_NETDEVS_POLICY\" in x for x in j[\"not_judged\"]), j[\"not_judged\"]'"
check "the text report names what it does not judge, after the variables" bash -c \
	"'$ROCEWATCH' check --from '$FX/good.json' --nccl-env '$TMPD/net-plugin.env' | sed -n '/^job (NCCL settings on gpu-node-07)$/,/^$/p' | grep -q '^  not judged: .*NCCL_IB_DATA_DIRECT'"
nccl_env gdr-loc NCCL_NET_GDR_LEVEL=LOC
check "NCCL_NET_GDR_LEVEL=LOC on GPUs at PIX: nccl_net_gdr_level, exit 1" \
	expect_check good.json 1 "nccl_net_gdr_level@node" --nccl-env "$TMPD/gdr-loc.env"
nccl_env cross NCCL_CROSS_NIC=1
check "NCCL_CROSS_NIC=1: nccl_cross_nic, exit 1" \
	expect_check good.json 1 "nccl_cross_nic@node" --nccl-env "$TMPD/cross.env"
nccl_env debug NCCL_DEBUG=INFO NCCL_PROTO=Simple
check "NCCL_DEBUG=INFO and NCCL_PROTO left set: nccl_debug_tuning, exit 1" \
	expect_check good.json 1 "nccl_debug_tuning@node" --nccl-env "$TMPD/debug.env"
check "lossy-roce judges the job too: NCCL_IB_TC=104, exit 1" \
	expect_check lossy-good.json 1 "nccl_ib_tc@node" --profile lossy-roce --nccl-env "$TMPD/tc-no-ect.env"
nccl_env tc-unset
sed -i '/^NCCL_IB_TC=/d' "$TMPD/tc-unset.env"
check "NCCL_IB_TC unset: NCCL sends TC 0 (DSCP 0), nccl_ib_tc, exit 1" \
	expect_check good.json 1 "nccl_ib_tc@node" --nccl-env "$TMPD/tc-unset.env"
nccl_env tc-octal NCCL_IB_TC=0152
check "NCCL_IB_TC=0152 is octal 106: the TC passes, nccl_reading warns, exit 1" \
	expect_check good.json 1 "nccl_reading@node" --nccl-env "$TMPD/tc-octal.env"
nccl_env tc-byte NCCL_IB_TC=362
check "NCCL_IB_TC=362 sends its low byte, 106: nccl_reading, exit 1" \
	expect_check good.json 1 "nccl_reading@node" --nccl-env "$TMPD/tc-byte.env"
nccl_env hca-caret 'NCCL_IB_HCA=^'
check "NCCL_IB_HCA=^ selects nothing in NCCL: nccl_ib_hca, exit 2" \
	expect_check good.json 2 "nccl_ib_hca@node" --nccl-env "$TMPD/hca-caret.env"
nccl_env hca-commas 'NCCL_IB_HCA==mlx5_0:1,,mlx5_1:1,'
check "NCCL_IB_HCA with doubled and trailing commas: NCCL accepts it, exit 0" \
	expect_check good.json 0 "" --nccl-env "$TMPD/hca-commas.env"
nccl_env hca-odd 'NCCL_IB_HCA==mlx5_0:+1,mlx5_1:1x'
check "NCCL_IB_HCA ports read by atoi (+1, 1x): selected, nccl_reading warns, exit 1" \
	expect_check good.json 1 "nccl_reading@node" --nccl-env "$TMPD/hca-odd.env"
nccl_env ifname-one NCCL_SOCKET_IFNAME=e
check "NCCL_SOCKET_IFNAME of one character: ignored by NCCL, nccl_reading, exit 1" \
	expect_check good.json 1 "nccl_reading@node" --nccl-env "$TMPD/ifname-one.env"
nccl_env gdr-case NCCL_NET_GDR_LEVEL=pxb
check "NCCL_NET_GDR_LEVEL=pxb (names are case-sensitive): ignored, nccl_reading, exit 1" \
	expect_check good.json 1 "nccl_reading@node" --nccl-env "$TMPD/gdr-case.env"
nccl_env gid-range NCCL_IB_ADDR_RANGE=10.0.0.0/8
check "NCCL_IB_ADDR_RANGE matching no GID: NCCL falls back to GID 0, nccl_ib_gid_index, exit 1" \
	expect_check good.json 1 "nccl_ib_gid_index@node" --nccl-env "$TMPD/gid-range.env"
check "the job's variables in the JSON report: raw value and NCCL's reading" bash -c \
	"'$ROCEWATCH' check --from '$FX/good.json' --nccl-env '$TMPD/hca-odd.env' -j | python3 -c 'import json,sys
v = json.load(sys.stdin)[\"job\"][\"variables\"]
assert v[\"NCCL_IB_HCA\"][\"value\"] == \"=mlx5_0:+1,mlx5_1:1x\", v
assert v[\"NCCL_IB_HCA\"][\"effective\"] == [\"mlx5_0:1\", \"mlx5_1:1\"], v
assert v[\"NCCL_IB_TC\"] == {\"value\": \"106\", \"effective\": 106, \"note\": v[\"NCCL_IB_TC\"][\"note\"], \"warning\": False}, v
assert v[\"NCCL_SOCKET_IFNAME\"][\"value\"] is None and v[\"NCCL_SOCKET_IFNAME\"][\"effective\"], v
assert v[\"NCCL_IB_GID_INDEX\"][\"effective\"] == [\"mlx5_0:1=3\", \"mlx5_1:1=3\"], v
assert v[\"NCCL_CROSS_NIC\"][\"effective\"] == 2 and v[\"NCCL_NET_GDR_LEVEL\"][\"effective\"] is None, v'"
check "--nccl reads the environment: NCCL_IB_DISABLE=1 fails nccl_ib_disable" \
	env NCCL_IB_DISABLE=1 bash -c "rc=0; '$ROCEWATCH' check --from '$FX/good.json' --nccl -j >'$TMPD/env.json' || rc=\$?; [ \$rc -eq 2 ] && grep -q '\"nccl_ib_disable\"' '$TMPD/env.json'"
check "without --nccl the nccl_* rules are skipped, with the reason" bash -c \
	"'$ROCEWATCH' check --from '$FX/good.json' -j | python3 -c 'import json,sys
d = json.load(sys.stdin)
r = [x for x in d[\"results\"] if x[\"rule\"].startswith(\"nccl_\")]
assert len(r) == 10 and all(x[\"outcome\"] == \"skip\" for x in r), r
assert \"job\" not in d'"
check "the job object of the JSON report: its facts and its rules' verdicts" bash -c \
	"'$ROCEWATCH' check --from '$FX/good.json' --nccl-env '$TMPD/tc-no-ect.env' -j | python3 -c 'import json,sys
d = json.load(sys.stdin)
j = d[\"job\"]
assert j[\"facts\"][\"ib_tc\"] == 104 and j[\"facts\"][\"ib_tc_dscp\"] == 26 and j[\"facts\"][\"ib_tc_ecn\"] == 0, j
v = {x[\"rule\"]: x[\"outcome\"] for x in j[\"results\"]}
assert v[\"nccl_ib_tc\"] == \"fail\" and v[\"nccl_ib_hca\"] == \"pass\" and len(v) == 10, v'"
check "the text report: one line per variable, then the job's rules, in a section of their own" bash -c \
	"'$ROCEWATCH' check --from '$FX/good.json' --nccl-env '$TMPD/cross.env' | sed -n '/^job (NCCL settings on gpu-node-07)$/,/^$/p' >'$TMPD/job.txt' &&
	grep -q '^  NCCL_CROSS_NIC=1: 1$' '$TMPD/job.txt' && grep -q '^  NCCL_IB_TC=106: 106' '$TMPD/job.txt' &&
	grep -q '^  NCCL_IB_HCA unset: mlx5_0:1 mlx5_1:1$' '$TMPD/job.txt' && grep -q 'nccl_cross_nic' '$TMPD/job.txt'"
nccl_env tc-bad NCCL_IB_TC=lots
check "NCCL_IB_TC not a number: NCCL reads 0, nccl_ib_tc and nccl_reading fail, exit 1" \
	expect_check good.json 1 "nccl_ib_tc@node nccl_reading@node" --nccl-env "$TMPD/tc-bad.env"
printf 'NCCL_IB_HCA=mlx5_0\nnot an assignment\n' >"$TMPD/bad.env"
check "--nccl-env with a bad line: exit 3, FILE:LINE" expect_unknown \
	"^rocewatch check: --nccl-env $TMPD/bad.env:2: expected KEY=VALUE" --from "$FX/good.json" --nccl-env "$TMPD/bad.env"
check "--nccl-env of a missing file: exit 3, the path named" expect_unknown \
	"^rocewatch check: --nccl-env $TMPD/none.env: No such file or directory" --from "$FX/good.json" --nccl-env "$TMPD/none.env"
check "--nccl and --nccl-env: exit 3" expect_unknown "one or the other" --from "$FX/good.json" --nccl --nccl-env "$TMPD/sound.env"

# GPUDirect host facts from sysfs/procfs trees (tests/fixtures/sysfs/gen-pcie.py): each
# broken tree fails exactly its rule on top of what the healthy tree already gives (a
# fixture tree has no verbs, and mlx5_1 no IPv4 RoCE v2 GID of its own)
PCIE_FX="$SOURCE_DIR/tests/fixtures"
pcie_results() { # TREE PROCFS: "rule@object=outcome" lines of fail and unknown, sorted
	"$ROCEWATCH" check --sysfs-root "$1" --procfs-root "$2" --netdev-include no-such-netdev \
		--serve none --format json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in sorted(d["results"], key=lambda r: (r["rule"], r["object"].get("device", "node"))):
    if r["outcome"] in ("fail", "unknown"):
        print("%s@%s=%s" % (r["rule"], r["object"].get("device", "node"), r["outcome"]))'
}
pcie_case() { # TREE PROCFS "rule@object=outcome ..." (beyond the healthy tree's)
	local got want
	got=$(pcie_results "$1" "$2" | grep -vxF -f "$TMPD/pcie-base" || true)
	want=$(printf '%s\n' $3 | sort)
	[ "$got" = "$want" ] || { echo "  $1: got [$got], want [$want]" >&2; return 1; }
}
pcie_results "$PCIE_FX/sysfs/pcie-healthy" "$PCIE_FX/procfs/gpu-node" >"$TMPD/pcie-base"
check "healthy GPU node: no PCIe/IOMMU rule fails or is unknown" \
	bash -c "! grep -Eq '^(pcie_acs_redirect_off|iommu_passthrough|gpu_pcie_link_width|nic_pcie_link)@' '$TMPD/pcie-base'"
check "ACS P2P redirect on the NIC's switch port: pcie_acs_redirect_off only" \
	pcie_case "$PCIE_FX/sysfs/pcie-acs" "$PCIE_FX/procfs/gpu-node" "pcie_acs_redirect_off@node=fail"
check "IOMMU groups DMA-FQ, no iommu=pt: iommu_passthrough only" \
	pcie_case "$PCIE_FX/sysfs/pcie-iommu-dma" "$PCIE_FX/procfs/gpu-node-iommu-dma" "iommu_passthrough@node=fail"
check "NIC at x8 of x16: nic_pcie_link on both of its functions only" \
	pcie_case "$PCIE_FX/sysfs/pcie-nic-x8" "$PCIE_FX/procfs/gpu-node" \
	"nic_pcie_link@mlx5_0=fail nic_pcie_link@mlx5_1=fail"
no_gpu() { # the GPUDirect rules skip a node without GPU: nothing to judge, not a pass
	"$ROCEWATCH" check --sysfs-root "$PCIE_FX/sysfs/mlx5-roce" --procfs-root "$PCIE_FX/procfs/gpu-node" \
		--netdev-include no-such-netdev --serve none --format json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = {x["rule"]: x["outcome"] for x in d["results"] if x["object"]["kind"] == "node"}
for n in ("pcie_acs_redirect_off", "iommu_passthrough", "gpu_pcie_link_width", "gpu_nic_affinity"):
    assert r[n] == "skip", (n, r[n])'
}
check "no GPU: pcie_acs_redirect_off, iommu_passthrough, gpu_pcie_link_width skipped" no_gpu
cp -a "$PCIE_FX/sysfs/pcie-healthy" "$TMPD/pcie-noroot"
truncate -s 64 "$TMPD/pcie-noroot/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:01.0/config"
check "config space unreadable without root: pcie_acs_redirect_off unknown, not pass" \
	pcie_case "$TMPD/pcie-noroot" "$PCIE_FX/procfs/gpu-node" "pcie_acs_redirect_off@node=unknown"
check "... and the reason says permission" bash -c "'$ROCEWATCH' check --sysfs-root '$TMPD/pcie-noroot' \
	--procfs-root '$PCIE_FX/procfs/gpu-node' --netdev-include no-such-netdev --serve none --format json |
	grep -q 'pcie.acs_redirect_gpus absent: permission (Operation not permitted)'"

# --serve: a pre-flight sees the minutes a serve on the node has watched, not its own
# 100 ms.  Serve and check read one copy of the mlx5 fixture tree; the retries happen
# while only serve is watching.
need_cmd curl
cp -a "$SOURCE_DIR/tests/fixtures/sysfs/mlx5-roce" "$TMPD/tree"
oos=$(find "$TMPD/tree" -path '*mlx5_0/ports/1/hw_counters/out_of_sequence')
TREE=(--sysfs-root "$TMPD/tree" --procfs-root "$SOURCE_DIR/tests/fixtures/procfs/gpu-node" --netdev-include no-such-netdev)
sport=$(free_port)
"$ROCEWATCH" serve "${TREE[@]}" --interval 100ms --web.listen-address "127.0.0.1:$sport" \
	>"$TMPD/serve.log" 2>&1 &
spid=$!
on_exit "kill $spid"
wait_until 20 curl -sf "http://127.0.0.1:$sport/healthz" || die "serve did not start: $(cat "$TMPD/serve.log")"
serve_sees() { # RULE OUTCOME: serve's result for mlx5_0
	curl -sf "http://127.0.0.1:$sport/api/v1/checks" | python3 -c "import json,sys
d = json.load(sys.stdin)
r = [x for x in d['results'] if x['rule'] == '$1' and x['object'].get('device') == 'mlx5_0']
sys.exit(0 if r and r[0]['outcome'] == '$2' else 1)"
}
wait_until 20 serve_sees no_out_of_sequence pass || die "serve never decided no_out_of_sequence"
echo $(( $(cat "$oos") + 946 )) >"$oos"
wait_until 20 serve_sees no_out_of_sequence fail || die "serve did not see the retries"
# the check below must find serve's history longer than its own two samples: wait for
# serve to have watched 1 s (on a fast machine it may get here within half a second)
serve_watched() {
	curl -sf "http://127.0.0.1:$sport/api/v1/checks" | python3 -c "import json,sys
d = json.load(sys.stdin)
r = [x for x in d['results'] if x['rule'] == 'no_out_of_sequence' and x['object'].get('device') == 'mlx5_0']
sys.exit(0 if r and (r[0]['observed_seconds'] or 0) >= 1 else 1)"
}
wait_until 30 serve_watched || die "serve's history did not reach 1 s"
from_serve() {
	local rc=0
	"$ROCEWATCH" check "${TREE[@]}" --serve "http://127.0.0.1:$sport" --format json >"$TMPD/s.json" || rc=$?
	# 2: mlx5_1 has no IPv4 RoCE v2 GID in the fixture, whoever decides the counters
	[ "$rc" -eq 2 ] || { echo "  exit $rc" >&2; return 1; }
	python3 - "$TMPD/s.json" "http://127.0.0.1:$sport" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d["history"]
assert h["source"] == "serve" and h["serve_url"] == sys.argv[2], h
assert h["from_serve"] == h["counter_results"] > 0, h
assert h["note"].startswith("counter rules: %d of %d from rocewatch serve at %s, decided on its "
                            % (h["from_serve"], h["counter_results"], sys.argv[2])), h
r = [x for x in d["results"] if x["rule"] == "no_out_of_sequence" and x["object"]["device"] == "mlx5_0"][0]
assert r["outcome"] == "fail" and r["summary"].startswith("946 packets out of sequence (only "), r
# serve has watched longer than the check's own two samples 100 ms apart
assert r["observed_seconds"] > 0.5 and r["window_seconds"] == 300, r
# configuration is check's own: a fixture has no verbs, so active_mtu stays unknown here
m = [x for x in d["results"] if x["rule"] == "active_mtu_4096"][0]
assert m["outcome"] == "unknown" and m["window_seconds"] is None, m
PY
}
check "--serve: counter rules from serve's history (the retries check did not see)" from_serve
check "--serve: the text report says what the counter rules rest on" bash -c \
	"'$ROCEWATCH' check ${TREE[*]} --serve http://127.0.0.1:$sport | grep -Eq '^counter rules: [0-9]+ of [0-9]+ from rocewatch serve at http://127.0.0.1:$sport, decided on its '"
local_only() {
	local rc=0
	"$ROCEWATCH" check "${TREE[@]}" --serve none --format json >"$TMPD/l.json" || rc=$?
	[ "$rc" -eq 2 ] || { echo "  exit $rc" >&2; return 1; }
	python3 - "$TMPD/l.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d["history"]
assert h["source"] == "local" and h["from_serve"] == 0, h
assert h["note"].startswith("counter rules: decided on 0.") and h["note"].endswith(
    "of samples (this check's), less than their 1h window; --serve none"), h
r = [x for x in d["results"] if x["rule"] == "no_out_of_sequence" and x["object"]["device"] == "mlx5_0"][0]
assert r["outcome"] == "pass" and r["observed_seconds"] < 1 and "of the 5m window observed)" in r["summary"], r
PY
}
check "--serve none: decided on this check's 100 ms, and it says so" local_only
nport=$(free_port)
check "--serve unreachable: falls back to this check's samples with a clear note" bash -c \
	"'$ROCEWATCH' check ${TREE[*]} --serve http://127.0.0.1:$nport | grep -q '^counter rules: decided on .* of samples (this check.s), less than their 1h window; no usable rocewatch serve at http://127.0.0.1:$nport (Couldn.t connect to server)\$'"
check "--serve with --from is refused (another node's snapshot), exit 3" expect_unknown \
	"--serve and --from: serve's history is of the machine it runs on" --serve "http://127.0.0.1:$sport" --from "$FX/good.json"
check "--serve: not a URL, exit 3" expect_unknown "--serve: 'localhost:9479' is not an http:// or https:// URL, or none" --serve localhost:9479
kill "$spid"

# ROCEWATCH_PROFILE_DIR overrides the built-in profile directory
mkdir -p "$TMPD/profiles"
sed 's/^  min_mtu: 4200 /  min_mtu: 10000/' "$SOURCE_DIR/rules/profiles/lossless-roce.yaml" >"$TMPD/profiles/lossless-roce.yaml"
check "ROCEWATCH_PROFILE_DIR: a site's own lossless-roce" bash -c \
	"ROCEWATCH_PROFILE_DIR='$TMPD/profiles' '$ROCEWATCH' check --from '$FX/good.json' --format json | grep -q '\"exit_code\": 2'"

# rules lint / list
check "lint: shipped profiles are clean" bash -c \
	"'$ROCEWATCH' rules lint '$SOURCE_DIR/rules/profiles/lossless-roce.yaml' '$SOURCE_DIR/rules/profiles/lossy-roce.yaml' | grep -c ': ok (profile' | grep -qx 2"
lint_bad() {
	local rc=0
	"$ROCEWATCH" rules lint "$TMPD/bad.yaml" >"$TMPD/o" 2>"$TMPD/e" || rc=$?
	[ "$rc" -eq 1 ] && grep -q "bad.yaml:6:23: error: expr: type mismatch" "$TMPD/e"
}
check "lint: a bad file, file:line:col, exit 1" lint_bad
check "lint --format json" bash -c "'$ROCEWATCH' rules lint --format json '$TMPD/bad.yaml' | python3 -c 'import json,sys; d=json.load(sys.stdin); e=[x for x in d[0][\"diagnostics\"] if x[\"severity\"]==\"error\"]; assert d[0][\"ok\"] is False and e[0][\"line\"]==6 and e[0][\"column\"]==23, d'"
check "lint: no file, exit 2" bash -c "'$ROCEWATCH' rules lint 2>/dev/null; [ \$? -eq 2 ]"
check "list: the default profile's rules" bash -c "'$ROCEWATCH' rules list | grep -Eq '^  pfc_only_on_roce_priority +netdev +critical'"
check "list --format json with a param" bash -c "'$ROCEWATCH' rules list --profile lossy-roce --param roce_priority=5 --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); p=d[\"profiles\"][0]; assert p[\"name\"]==\"lossy-roce\" and p[\"params\"][\"roce_priority\"]==\"5\" and len(p[\"rules\"]) > 10, p'"

finish
