#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The wire collector inside `rocewatch serve`, against real packets.  Two
# private namespaces joined by a veth; serve runs in B with
# --collector.wire --netdev-include 'vb|vg' and watches vb.  RoCE v2 packets
# with chosen DSCP/ECN/opcode (CNPs included) go A -> B (ingress at vb) and
# B -> A (egress); non-RoCE and malformed ones go too.  Asserted:
#   - before any traffic the wire.* fields are absent with no_data (rules
#     report unknown), not 0 or an empty set;
#   - /metrics has exactly the expected roce_wire_{packets,bytes}_total series
#     (nothing for the packets that must not count), and the snapshot's
#     wire.* fields are what was sent;
#   - a watched device deleted while serving is detached (tcx links gone,
#     series gone) and serve goes on; SIGTERM detaches the rest: no tcx link,
#     no program, no tc filter, no clsact qdisc left.  The same with the
#     clsact fallback (tcx refused through the no_tcx_preload shim);
#   - the lossless profile's wire rules: unknown (no_data) before traffic,
#     then fail/pass as the marking deserves;
#   - an unprivileged --collector.wire (serve, snapshot, check) exits non-zero
#     with one line naming CAP_BPF and CAP_NET_ADMIN, before starting anything.
# Needs root.  Nothing is sent outside the namespaces made here.
. "$(dirname "$0")/../../lib.sh"
# Keep going after a failed command: every outcome is counted by check.
set +e
need_root
need_cmd ip iproute2
need_cmd tc iproute2
need_cmd curl
need_cmd python3
[ -x "${ROCE_SEND:-}" ] || skip "ROCE_SEND is not set (run through meson test)"
PATH=$PATH:/usr/sbin:/sbin
need_cmd bpftool

A=$(make_netns wsa)
B=$(make_netns wsb)
ip link add va netns "$A" type veth peer name vb netns "$B" || skip "no veth"
ip -n "$A" link set va up
ip -n "$B" link set vb up
A4=192.0.2.1 B4=192.0.2.2 A6=2001:db8:78::1 B6=2001:db8:78::2
ip -n "$A" addr add $A4/24 dev va
ip -n "$B" addr add $B4/24 dev vb
ip -n "$A" addr add $A6/64 dev va nodad
ip -n "$B" addr add $B6/64 dev vb nodad
MACA=$(ip -n "$A" -br link show va | awk '{print $3}')
MACB=$(ip -n "$B" -br link show vb | awk '{print $3}')
# Static neighbours: nothing waits on ARP/ND, nothing queued behind it is lost.
ip -n "$A" neigh replace $B4 lladdr "$MACB" dev va nud permanent
ip -n "$A" neigh replace $B6 lladdr "$MACB" dev va nud permanent
ip -n "$B" neigh replace $A4 lladdr "$MACA" dev vb nud permanent
ip -n "$B" neigh replace $A6 lladdr "$MACA" dev vb nud permanent
VB_IFINDEX=$(ip -n "$B" -o link show vb | cut -d: -f1)
PORT=9479 # B's own loopback: nobody else is there

inA() { ip netns exec "$A" "$@"; }
inB() { ip netns exec "$B" "$@"; }
# A send that fails is a failure: a packet that must not count proves nothing unsent.
sent() {
	T_CHECKS=$((T_CHECKS + 1))
	ip netns exec "$@" >/dev/null && return
	T_FAILS=$((T_FAILS + 1))
	echo "not ok - roce_send in $*"
}
sA() { sent "$A" "$ROCE_SEND" -q "$@"; }
sB() { sent "$B" "$ROCE_SEND" -q "$@"; }
metrics() { inB curl -sf "http://127.0.0.1:$PORT/metrics"; }
no_series() { metrics >"$TMPD/m" && ! grep -q "device=\"$1\"" "$TMPD/m"; }
state() { inB curl -sf "http://127.0.0.1:$PORT/api/v1/state"; }

spid=
# serve_start [ENV=VALUE...]: serve in B with the wire collector; wait until vb is watched.
serve_start() {
	: >"$TMPD/serve.log"
	ip netns exec "$B" env "$@" "$ROCEWATCH" serve --collector.wire --netdev-include 'vb|vg' \
		--web.listen-address "127.0.0.1:$PORT" --interval 100ms --config-interval 200ms \
		>"$TMPD/serve.log" 2>&1 &
	spid=$! # ip netns exec and env exec: this is rocewatch
	on_exit "kill $spid"
	wait_until 10 grep -q 'wire: vb: counting' "$TMPD/serve.log" ||
		die "serve never watched vb: $(cat "$TMPD/serve.log")"
	wait_until 5 watched vb || die "vb has no wire counters in the state: $(cat "$TMPD/serve.log")"
}

# serve_stop: SIGTERM, exit status 0.
serve_stop() {
	kill -TERM "$spid"
	wait "$spid"
	local rc=$?
	check "serve exits 0 on SIGTERM (rc $rc)" [ $rc = 0 ]
	spid=
}

# watched DEV: the state shows DEV with wire counters.
watched() {
	state | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if any(n["name"] == sys.argv[1] and "wire" in n for n in d["netdevs"]) else 1)' "$1"
}

# The lossless profile's wire rules on vb, from /api/v1/checks: "rule=outcome ..." by name.
rule_outcomes() {
	inB curl -sf "http://127.0.0.1:$PORT/api/v1/checks" | python3 -c '
import json, sys
d = json.load(sys.stdin)
rs = sorted((r for r in d["results"]
             if r["rule"].startswith("wire_") and r["object"].get("device") == "vb"),
            key=lambda r: r["rule"])
print(" ".join("%s=%s" % (r["rule"], r["outcome"]) for r in rs))
if sys.argv[1:]:
    for r in rs:
        print("%s: %s" % (r["rule"], r["reason"]))' "$@"
}
rules_are() { [ "$(rule_outcomes)" = "$1" ]; }

# tcx links held by serve, as "ifindex prog_id" lines (its fdinfo says so).
tcx_links() {
	local f
	for f in /proc/$spid/fdinfo/*; do
		grep -q '^link_type:.*tcx' "$f" 2>/dev/null || continue
		awk '/^ifindex:/ {i = $2} /^prog_id:/ {p = $2} END {print i, p}' "$f"
	done
}
n_tcx() { tcx_links | wc -l; }

bpf_filters() {
	{ inB tc filter show dev "$1" ingress; inB tc filter show dev "$1" egress; } 2>/dev/null |
		grep -c ' bpf .*handle '
}
has_clsact() { inB tc qdisc show dev "$1" | grep -q clsact; }
no_clsact() { ! has_clsact "$1"; }

# --- expected counters: "direction dscp ecn class" -> "packets bytes" --------------------

declare -A exp=()
expect() {
	local k="$1 $2 $3 $4" p b
	read -r p b <<<"${exp[$k]:-0 0}"
	exp[$k]="$((p + $5)) $((b + $5 * $6))"
}
exp_file() {
	local k
	for k in "${!exp[@]}"; do echo "$k ${exp[$k]}"; done | sort >"$1"
}

# metrics_match FILE: the roce_wire_* series of vb are exactly those of FILE.
metrics_match() {
	metrics | python3 -c '
import re, sys
want = {}
for line in open(sys.argv[1]):
    d, s, e, c, p, b = line.split()
    want[(d, s, e, c)] = (int(p), int(b))
got = {}
pat = re.compile(r"^roce_wire_(packets|bytes)_total\{device=\"vb\",direction=\"(\w+)\",dscp=\"(\d+)\",ecn=\"(\d)\",class=\"(\w+)\"\} (\d+)$")
for line in sys.stdin:
    m = pat.match(line.strip())
    if m:
        k = m.group(2, 3, 4, 5)
        p, b = got.get(k, (None, None))
        got[k] = (int(m.group(6)), b) if m.group(1) == "packets" else (p, int(m.group(6)))
if got != want:
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            print("  %s: expected %s, got %s" % (" ".join(k), want.get(k), got.get(k)), file=sys.stderr)
    sys.exit(1)' "$1"
}

# --- pass 1: tcx (the kernel's choice here), counts and fields ---------------------------

echo "# pass 1: serve --collector.wire (automatic attach mode)"
serve_start
kind=tcx
[ "$(n_tcx)" = 0 ] && kind=clsact
echo "# vb attached via $kind"
if [ $kind = tcx ]; then
	check "two tcx links, both on vb" \
		[ "$(tcx_links | awk -v i="$VB_IFINDEX" '$1 == i' | wc -l)" = 2 -a "$(n_tcx)" = 2 ]
fi
metrics >"$TMPD/metrics0"
check "wire collector reports success" \
	grep -qx 'rocewatch_collector_success{collector="wire"} 1' "$TMPD/metrics0"

# No traffic yet: the rule fields are absent with no_data, the counts are 0.
state >"$TMPD/state0.json"
check "no traffic: wire.* fields absent with no_data, packet counts 0" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
vb = [n for n in d["netdevs"] if n["name"] == "vb"][0]
f, a = vb["fields"], vb["absent"]
assert f["wire.data_packets"] == 0 and f["wire.cnp_packets"] == 0, f
for k in ("wire.data_dscp", "wire.cnp_dscp", "wire.data_not_ect_packets", "wire.ce_ratio"):
    assert a[k]["reason"] == "no_data", (k, a.get(k))
assert vb["wire"] == [], vb["wire"]' "$TMPD/state0.json"
check "no traffic: the three wire rules are unknown, not pass" wait_until 5 rules_are \
	"wire_cnp_dscp=unknown wire_roce_data_dscp=unknown wire_roce_data_ecn_capable=unknown"
rule_outcomes reasons >"$TMPD/rules0"
check "no traffic: unknown because of no_data" bash -c "
	grep -qx 'wire_roce_data_dscp: wire.data_dscp absent: no_data' $TMPD/rules0 &&
	grep -qx 'wire_cnp_dscp: wire.cnp_dscp absent: no_data' $TMPD/rules0 &&
	grep -qx 'wire_roce_data_ecn_capable: wire.data_not_ect_packets absent: no_data' $TMPD/rules0"
check "no traffic: no roce_wire_* samples, no CE ratio" \
	bash -c "! grep -E '^roce_wire_(packets_total|bytes_total|ce_ratio)[{]' $TMPD/metrics0"

# Ethernet 14 + IPv4 20 / IPv6 40 + UDP 8 + payload (BTH included).
L4=42 L6=62
sA -n 50 --dscp 26 --ecn 2 -o 0x04 -l 48 $B4
expect ingress 26 2 data 50 $((L4 + 48))
sA -n 9 --dscp 26 --ecn 3 -o 0x04 -l 48 $B4
expect ingress 26 3 data 9 $((L4 + 48))
sA -n 4 --dscp 10 --ecn 0 -o 0x0a -l 48 $B4
expect ingress 10 0 data 4 $((L4 + 48))
sA -n 6 --dscp 34 --ecn 2 -o 0x0a -l 48 $B6
expect ingress 34 2 data 6 $((L6 + 48))
sA -n 7 --dscp 48 --ecn 1 -o 0x81 -l 32 $B4
expect ingress 48 1 cnp 7 $((L4 + 32))
sA -n 5 --dscp 26 --ecn 2 -o 0x11 -l 20 $B4
expect ingress 26 2 ack 5 $((L4 + 20))
sB -n 3 --dscp 48 --ecn 1 -o 0x81 -l 32 $A4
expect egress 48 1 cnp 3 $((L4 + 32))
sB -n 2 --dscp 26 --ecn 2 -o 0x04 -l 48 $A6
expect egress 26 2 data 2 $((L6 + 48))
# Not RoCE v2, or too short to be: DSCP 40 and 44 must not show up anywhere.
sA -n 5 --dscp 40 -p 4792 $B4
sB -n 5 --dscp 40 -p 4792 $A4
sA --tcp --dscp 40 $B4
sA --raw va --src $A4 --dst-mac "$MACB" --proto 6 --dscp 40 $B4
for l in 0 1 5 11; do
	sA -n 1 --dscp 44 -l $l $B4
	sA -n 1 --dscp 44 -l $l $B6
done
sA --raw va --src $A4 --dst-mac "$MACB" --dscp 44 -l 5 --pad-to 60 $B4
sA --raw va --src $A4 --dst-mac "$MACB" --dscp 44 --frag-off 10 $B4
sA --raw va --src $A4 --dst-mac "$MACB" --dscp 44 --mf $B4

exp_file "$TMPD/expected"
# Counted in the fast loop (100 ms): wait for it, then compare once more.
wait_until 5 metrics_match "$TMPD/expected"
check "/metrics: exactly ${#exp[@]} wire series per family, packets and bytes as sent" \
	metrics_match "$TMPD/expected"
metrics >"$TMPD/metrics"
check "/metrics: HELP and TYPE of both wire families" bash -c "
	grep -q '^# TYPE roce_wire_packets_total counter' $TMPD/metrics &&
	grep -q '^# TYPE roce_wire_bytes_total counter' $TMPD/metrics &&
	grep -q '^# HELP roce_wire_bytes_total .*frame length without FCS' $TMPD/metrics"
if command -v promtool >/dev/null; then
	check "promtool check metrics" bash -c "promtool check metrics <$TMPD/metrics"
fi

state >"$TMPD/state1.json"
check "snapshot: wire.* fields are what was sent" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
vb = [n for n in d["netdevs"] if n["name"] == "vb"][0]
f = vb["fields"]
want = {"wire.data_packets": 50 + 9 + 4 + 6 + 2, "wire.data_dscp": [10, 26, 34],
        "wire.cnp_packets": 10, "wire.cnp_dscp": [48], "wire.data_not_ect_packets": 4}
for k, v in want.items():
    assert f.get(k) == v, (k, f.get(k), v)
assert abs(f["wire.ce_ratio"] - 9 / 71) < 1e-9, f["wire.ce_ratio"]
assert not any(k.startswith("wire.") for k in vb["absent"]), vb["absent"]
assert len(vb["wire"]) == 8 and not any(e["dscp"] in (40, 44) for e in vb["wire"]), vb["wire"]
' "$TMPD/state1.json"
check "/metrics: CE ratio 9/71" bash -c "grep -q '^roce_wire_ce_ratio{device=\"vb\"} 0.1267' $TMPD/metrics"
# Data on DSCP 10 and 34 besides 26, 4 of them not-ECT; CNPs all on 48.
check "rules: data DSCP fails, CNP DSCP passes, ECN-capable fails" wait_until 5 rules_are \
	"wire_cnp_dscp=pass wire_roce_data_dscp=fail wire_roce_data_ecn_capable=fail"

# --- a watched device deleted while serving ------------------------------------------------

ip -n "$B" link add vg type veth peer name vgp
ip -n "$B" link set vg up
ip -n "$B" link set vgp up
check "a new device matching --netdev-include is watched" \
	wait_until 5 grep -q 'wire: vg: counting' "$TMPD/serve.log"
VG_IFINDEX=$(ip -n "$B" -o link show vg | cut -d: -f1)
if [ $kind = tcx ]; then
	check "vg got its two tcx links" \
		[ "$(tcx_links | awk -v i="$VG_IFINDEX" '$1 == i' | wc -l)" = 2 ]
fi
ip -n "$B" link del vg
check "deleted device detached" wait_until 5 grep -q 'wire: vg: detached' "$TMPD/serve.log"
if [ $kind = tcx ]; then
	check "its tcx links are closed, vb's two stay" [ "$(n_tcx)" = 2 ]
fi
check "deleted device has no series left" \
	wait_until 3 no_series vg
sA -n 3 --dscp 26 --ecn 2 -o 0x04 -l 48 $B4
expect ingress 26 2 data 3 $((L4 + 48))
exp_file "$TMPD/expected"
wait_until 5 metrics_match "$TMPD/expected"
check "serve keeps counting on vb after vg went away" metrics_match "$TMPD/expected"

# --- SIGTERM: nothing left ---------------------------------------------------------------

progs=$(tcx_links | awk '{print $2}' | sort -u)
serve_stop
check "after SIGTERM: detach logged" grep -q 'wire: vb: detached' "$TMPD/serve.log"
check "after SIGTERM: no tc filter on vb" [ "$(bpf_filters vb)" = 0 ]
check "after SIGTERM: no clsact qdisc on vb" no_clsact vb
for p in $progs; do
	check "after SIGTERM: program $p is gone" bash -c "! bpftool prog show id $p >/dev/null 2>&1"
done
if grep -qE 'Sanitizer|runtime error|level=error' "$TMPD/serve.log"; then
	check "serve log has no errors or sanitizer reports" false
	sed 's/^/#   /' "$TMPD/serve.log"
fi

# --- pass 2: the clsact fallback (tcx refused as on Linux < 6.6) ---------------------------

if [ -f "${NO_TCX_PRELOAD:-}" ]; then
	echo "# pass 2: clsact fallback"
	# An ASan build refuses a preload ahead of its runtime; the order does not matter here.
	serve_start "LD_PRELOAD=$NO_TCX_PRELOAD" \
		"ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	check "clsact: fallback logged" grep -q 'refuses tcx links' "$TMPD/serve.log"
	check "clsact: two bpf filters on vb" [ "$(bpf_filters vb)" = 2 ]
	check "clsact: under a clsact qdisc" has_clsact vb
	check "clsact: no tcx link" [ "$(n_tcx)" = 0 ]
	exp=()
	sA -n 11 --dscp 26 --ecn 2 -o 0x04 -l 48 $B4
	expect ingress 26 2 data 11 $((L4 + 48))
	sB -n 2 --dscp 48 --ecn 1 -o 0x81 -l 32 $A4
	expect egress 48 1 cnp 2 $((L4 + 32))
	sA -n 5 --dscp 40 -p 4792 $B4
	exp_file "$TMPD/expected"
	wait_until 5 metrics_match "$TMPD/expected"
	check "clsact: counts exactly what was sent (a new serve starts from 0)" \
		metrics_match "$TMPD/expected"
	check "clsact: well-marked traffic passes the three wire rules" wait_until 5 rules_are \
		"wire_cnp_dscp=pass wire_roce_data_dscp=pass wire_roce_data_ecn_capable=pass"

	ip -n "$B" link add vg type veth peer name vgp
	ip -n "$B" link set vg up
	check "clsact: vg watched" wait_until 5 grep -q 'wire: vg: counting' "$TMPD/serve.log"
	check "clsact: vg has two bpf filters" [ "$(bpf_filters vg)" = 2 ]
	ip -n "$B" link del vg
	check "clsact: deleted device detached" wait_until 5 grep -q 'wire: vg: detached' "$TMPD/serve.log"
	check "clsact: vb's filters untouched" [ "$(bpf_filters vb)" = 2 ]
	serve_stop
	check "clsact, after SIGTERM: no tc filter on vb" [ "$(bpf_filters vb)" = 0 ]
	check "clsact, after SIGTERM: our clsact qdisc removed" no_clsact vb
	if grep -qE 'Sanitizer|runtime error|level=error' "$TMPD/serve.log"; then
		check "clsact: serve log has no errors or sanitizer reports" false
		sed 's/^/#   /' "$TMPD/serve.log"
	fi
else
	echo "# pass 2 skipped: no NO_TCX_PRELOAD"
fi

# --- unprivileged ------------------------------------------------------------------------

if command -v setpriv >/dev/null; then
	# nobody may not reach the checkout (a clone under /root): a world-readable copy
	# of the binary and the profiles it reads
	unpriv="$TMPD/unpriv"
	mkdir -p "$unpriv"
	cp "$ROCEWATCH" "$unpriv/rocewatch"
	cp -r "$SOURCE_DIR/rules/profiles" "$unpriv/profiles"
	chmod 0755 "$TMPD"
	chmod -R a+rX "$unpriv"
	export ROCEWATCH_PROFILE_DIR="$unpriv/profiles"
	for cmd in serve snapshot check; do
		# It must exit by itself, not serve: timeout says 124 if it did not.
		timeout 10 ip netns exec "$B" setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all --bounding-set=-all "$unpriv/rocewatch" $cmd --collector.wire \
			--netdev-include vb \
			$([ $cmd = serve ] && echo --web.listen-address 127.0.0.1:$((PORT + 1))) \
			>"$TMPD/unpriv.out" 2>"$TMPD/unpriv.err" </dev/null
		rc=$?
		echo "# unprivileged $cmd: rc $rc: $(cat "$TMPD/unpriv.err")"
		want=1
		[ $cmd = check ] && want=3 # Nagios UNKNOWN
		check "unprivileged $cmd --collector.wire: exit status $want" [ $rc = $want ]
		check "unprivileged $cmd --collector.wire: exactly one line, naming CAP_BPF and CAP_NET_ADMIN" \
			bash -c "[ \$(wc -l <$TMPD/unpriv.err) = 1 ] && grep -q \"^rocewatch $cmd: wire: cannot start: .*CAP_BPF and CAP_NET_ADMIN\" $TMPD/unpriv.err"
		check "unprivileged $cmd --collector.wire: nothing on stdout" [ ! -s "$TMPD/unpriv.out" ]
	done
	# Default collectors keep starting unprivileged: wire is off unless asked for.
	check "unprivileged snapshot without --collector.wire still works" \
		inB setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$unpriv/rocewatch" snapshot --netdev-include vb -o /dev/null
fi

finish
