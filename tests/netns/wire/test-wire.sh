#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The wire view against real packets.  Two private network namespaces joined
# by a veth; the programs hang on the receiving end (vb, in namespace B).
# Traffic from A counts as ingress, traffic B sends counts as egress.  Every
# counter is asserted exactly, packets and bytes, and every key not expected
# (non-RoCE, malformed, too short) fails the test.  Then: detach leaves
# nothing behind, the clsact fallback counts the same, the port setting
# works, an unprivileged load fails with a clear message, and packets/s
# through the veth with and without the programs are printed.
#
# Needs root.  Exit 0 pass, 1 fail, 77 skip.
# Tools: $WIRE_DUMP, $ROCE_SEND and $NO_TCX_PRELOAD, else built into
# $WIRE_BUILD (default: build-wire at the top of the tree) from standalone/.
# Nothing is sent outside the namespaces made here.

set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)

skip() {
	echo "SKIP: $*"
	exit 77
}

[ "$(id -u)" = 0 ] || skip "needs root"
for t in ip tc bpftool; do
	command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || skip "no $t"
done
PATH=$PATH:/usr/sbin:/sbin

if [ -z "${WIRE_DUMP:-}" ] || [ -z "${ROCE_SEND:-}" ]; then
	for t in meson ninja clang pkg-config; do
		command -v "$t" >/dev/null 2>&1 || skip "no $t to build the tools"
	done
	pkg-config --exists libbpf || skip "no libbpf development files"
	bdir=${WIRE_BUILD:-$top/build-wire}
	if [ ! -f "$bdir/build.ninja" ]; then
		meson setup "$bdir" "$here/standalone" >/dev/null || { echo "FAIL: meson setup"; exit 1; }
	fi
	ninja -C "$bdir" >/dev/null || { echo "FAIL: build"; exit 1; }
	WIRE_DUMP=$bdir/tools/wire_dump
	ROCE_SEND=$bdir/tools/roce_send
	NO_TCX_PRELOAD=$bdir/tools/no_tcx_preload.so
fi

id=$$
NA=rw-wire-a-$id
NB=rw-wire-b-$id
VA=wa$id
VB=wb$id
A4=192.0.2.1
B4=192.0.2.2
A6=2001:db8:77::1
B6=2001:db8:77::2
tmp=$(mktemp -d /tmp/test-wire.XXXXXX)
fails=0
checks=0
wd_pid=

cleanup() {
	[ -z "$wd_pid" ] || wd_stop
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() {
	checks=$((checks + 1))
	echo "ok: $*"
}

fail() {
	checks=$((checks + 1))
	fails=$((fails + 1))
	echo "FAIL: $*"
}

inA() { ip netns exec "$NA" "$@"; }
inB() { ip netns exec "$NB" "$@"; }

# --- the namespaces -----------------------------------------------------------

ip netns add "$NA" || skip "cannot create network namespaces"
ip netns add "$NB" || skip "cannot create network namespaces"
ip link add "$VA" netns "$NA" type veth peer name "$VB" netns "$NB" || skip "no veth"
for ns in "$NA" "$NB"; do
	ip -n "$ns" link set lo up
done
ip -n "$NA" link set "$VA" up
ip -n "$NB" link set "$VB" up
ip -n "$NA" addr add $A4/24 dev "$VA"
ip -n "$NB" addr add $B4/24 dev "$VB"
ip -n "$NA" addr add $A6/64 dev "$VA" nodad
ip -n "$NB" addr add $B6/64 dev "$VB" nodad
MACA=$(ip -n "$NA" -br link show "$VA" | awk '{print $3}')
MACB=$(ip -n "$NB" -br link show "$VB" | awk '{print $3}')
# Static neighbours: nothing waits on ARP/ND, nothing queued behind it is lost.
ip -n "$NA" neigh replace $B4 lladdr "$MACB" dev "$VA" nud permanent
ip -n "$NA" neigh replace $B6 lladdr "$MACB" dev "$VA" nud permanent
ip -n "$NB" neigh replace $A4 lladdr "$MACA" dev "$VB" nud permanent
ip -n "$NB" neigh replace $A6 lladdr "$MACA" dev "$VB" nud permanent

# Can this kernel and this process load BPF at all?
inB "$WIRE_DUMP" -q -d 0.01 lo >/dev/null 2>"$tmp/probe"
rc=$?
if [ $rc = 3 ]; then
	skip "cannot load BPF here: $(cat "$tmp/probe")"
elif [ $rc != 0 ]; then
	if ! bpftool prog show >/dev/null 2>&1; then
		skip "no BPF: $(cat "$tmp/probe")"
	fi
	echo "FAIL: loading the wire view:"
	cat "$tmp/probe"
	exit 1
fi

# --- wire_dump as a coprocess ---------------------------------------------------

# wd_start MODE [ARGS...]: attach to vb inside B, wait for "ready".
wd_start() {
	local mode=$1 line
	shift
	# WD_ENV: extra environment for wire_dump only, not for ip(8).
	coproc WD {
		exec ip netns exec "$NB" env ${WD_ENV:-} "$WIRE_DUMP" -c -m "$mode" "$@" "$VB" \
			2>>"$tmp/wd.log"
	}
	wd_pid=$WD_PID
	if ! read -r -t 20 -u "${WD[0]}" line || [ "$line" != ready ]; then
		echo "FAIL: wire_dump did not start:"
		cat "$tmp/wd.log"
		exit 1
	fi
}

# wd CMD: run a command; its answer lines (without the final ok) go to stdout.
wd() {
	local line
	echo "$*" >&"${WD[1]}"
	while read -r -t 20 -u "${WD[0]}" line; do
		case $line in
		ok) return 0 ;;
		error:*)
			echo "$line" >&2
			return 1
			;;
		*) echo "$line" ;;
		esac
	done
	echo "wire_dump: no answer to '$*'" >&2
	return 1
}

wd_stop() {
	[ -n "$wd_pid" ] || return 0
	echo quit 2>/dev/null >&"${WD[1]}"
	wait "$wd_pid" 2>/dev/null
	wd_pid=
}

# --- expected counters --------------------------------------------------------

declare -A exp

# expect DIR DSCP ECN CLASS PACKETS BYTES_EACH
expect() {
	local k="$1 $2 $3 $4" p b
	read -r p b <<<"${exp[$k]:-0 0}"
	exp[$k]="$((p + $5)) $((b + $5 * $6))"
}

# check_table WHAT: the wire_dump table must be exactly the expected one.
check_table() {
	local what=$1 ifn dir dscp ecn class p b k bad=0
	declare -A got=()
	wd read >"$tmp/table" || { fail "$what: read"; return; }
	while read -r ifn dir dscp ecn class p b; do
		[ "$ifn" = "$VB" ] || continue
		got["$dir $dscp $ecn $class"]="$p $b"
	done <"$tmp/table"
	for k in "${!exp[@]}"; do
		if [ "${got[$k]:-none}" != "${exp[$k]}" ]; then
			echo "  $k: expected ${exp[$k]}, got ${got[$k]:-none}"
			bad=1
		fi
	done
	for k in "${!got[@]}"; do
		if [ -z "${exp[$k]:-}" ]; then
			echo "  $k: not expected, got ${got[$k]}"
			bad=1
		fi
	done
	if [ $bad = 0 ]; then
		ok "$what: ${#exp[@]} counters exact"
	else
		fail "$what: counters differ (table above, full dump below)"
		sed 's/^/    /' "$tmp/table"
	fi
}

sA() { ip netns exec "$NA" "$ROCE_SEND" -q "$@" || fail "roce_send in A: $*"; }
sB() { ip netns exec "$NB" "$ROCE_SEND" -q "$@" || fail "roce_send in B: $*"; }

# Ethernet 14 + IPv4 20 / IPv6 40 + UDP 8 + payload.
L4=42
L6=62

send_traffic() {
	exp=()
	# -- ingress, from A --
	sA -n 50 --dscp 26 --ecn 2 -o 0x04 -l 48 $B4
	expect ingress 26 2 data 50 $((L4 + 48))
	sA -n 7 --dscp 48 --ecn 1 -o 0x81 -l 32 $B4
	expect ingress 48 1 cnp 7 $((L4 + 32))
	sA -n 2 --dscp 48 --ecn 1 -o 0x81 -l 32 $B6
	expect ingress 48 1 cnp 2 $((L6 + 32))
	# ACK, ATOMIC ACK, and their XRC and RD forms; UC 0x31 and UD 0x64 are data.
	sA -n 5 --dscp 26 --ecn 2 -o 0x11 -l 20 $B4
	expect ingress 26 2 ack 5 $((L4 + 20))
	sA -n 2 --dscp 26 --ecn 2 -o 0x12 -l 28 $B4
	expect ingress 26 2 ack 2 $((L4 + 28))
	sA -n 1 --dscp 26 --ecn 2 -o 0xb1 -l 20 $B4
	sA -n 1 --dscp 26 --ecn 2 -o 0xb2 -l 20 $B4
	sA -n 1 --dscp 26 --ecn 2 -o 0x51 -l 20 $B4
	expect ingress 26 2 ack 3 $((L4 + 20))
	sA -n 1 --dscp 26 --ecn 2 -o 0x31 -l 20 $B4
	sA -n 1 --dscp 26 --ecn 2 -o 0x64 -l 20 $B4
	expect ingress 26 2 data 2 $((L4 + 20))
	# CE
	sA -n 9 --dscp 26 --ecn 3 -o 0x04 -l 48 $B4
	expect ingress 26 3 data 9 $((L4 + 48))
	# IPv6
	sA -n 6 --dscp 34 --ecn 2 -o 0x0a -l 48 $B6
	expect ingress 34 2 data 6 $((L6 + 48))
	# IPv4 with 8 bytes of options (IHL 7)
	sA -n 3 --dscp 10 -l 48 --ip-opts 8 $B4
	expect ingress 10 0 data 3 $((L4 + 8 + 48))
	# exactly a BTH and nothing more
	sA -n 4 --dscp 46 -o 0x0a -l 12 $B4
	expect ingress 46 0 data 4 $((L4 + 12))
	sA -n 1 --dscp 46 -o 0x0a -l 12 $B6
	expect ingress 46 0 data 1 $((L6 + 12))
	# 802.1Q: the stack moves the tag to metadata before tc ingress, so 4 bytes less
	sA --raw "$VA" --src $A4 --dst-mac "$MACB" -n 4 --vlan 100 --dscp 18 --ecn 2 -l 48 $B4
	expect ingress 18 2 data 4 $((L4 + 48))
	# 802.1ad + 802.1Q: the outer tag goes to metadata, the inner one is parsed
	sA --raw "$VA" --src $A4 --dst-mac "$MACB" -n 2 --vlan 100 --vlan 200 --dscp 20 -l 48 $B4
	expect ingress 20 0 data 2 $((L4 + 4 + 48))
	# MSG_ZEROCOPY: the BTH sits in page frags, past the linear part; it is pulled
	sA -n 5 --zerocopy --dscp 8 -l 48 $B4
	expect ingress 8 0 data 5 $((L4 + 48))
	# UDP GSO crosses the veth as one skb: gso_segs datagrams, headers counted per segment
	sA -n 2 --gso 48 -l 120 --dscp 9 $B4
	expect ingress 9 0 data 4 $((L4 + 48))
	expect ingress 9 0 data 2 $((L4 + 24))
	sA -n 1 --gso 48 -l 96 --dscp 9 $B6
	expect ingress 9 0 data 2 $((L6 + 48))
	# a valid BTH in a frame padded to 60 bytes: counted at the frame's length
	sA --raw "$VA" --src $A4 --dst-mac "$MACB" -n 1 --dscp 45 -l 12 --pad-to 60 $B4
	expect ingress 45 0 data 1 60

	# -- ingress that must not be counted (DSCP 40 and 44 are never expected) --
	sA -n 5 --dscp 40 -p 4792 $B4
	sA -n 5 --dscp 40 -p 4792 $B6
	sA --tcp --dscp 40 $B4
	sA --tcp --dscp 40 $B6
	sA --raw "$VA" --src $A4 --dst-mac "$MACB" --proto 6 --dscp 40 $B4
	for l in 0 1 5 11; do
		sA -n 1 --dscp 44 -l $l $B4
		sA -n 1 --dscp 44 -l $l $B6
	done
	# UDP says 5 bytes of payload; the Ethernet padding after it is no BTH
	sA --raw "$VA" --src $A4 --dst-mac "$MACB" --dscp 44 -l 5 --pad-to 60 $B4
	# fragments: a later one has no UDP header, a first one is not counted either
	sA --raw "$VA" --src $A4 --dst-mac "$MACB" --dscp 44 --frag-off 10 $B4
	sA --raw "$VA" --src $A4 --dst-mac "$MACB" --dscp 44 --mf $B4
	# an IPv6 extension header is not walked
	sA --dscp 44 --hbh $B6

	# -- egress, sent by B --
	sB -n 4 --dscp 26 --ecn 2 -o 0x11 -l 20 $A4
	expect egress 26 2 ack 4 $((L4 + 20))
	sB -n 3 --dscp 48 --ecn 1 -o 0x81 -l 32 $A4
	expect egress 48 1 cnp 3 $((L4 + 32))
	sB -n 2 --dscp 26 --ecn 3 -o 0x04 -l 48 $A6
	expect egress 26 3 data 2 $((L6 + 48))
	sB -n 3 --zerocopy --dscp 8 -l 48 $A4
	expect egress 8 0 data 3 $((L4 + 48))
	sB -n 1 --gso 48 -l 144 --dscp 9 $A4
	expect egress 9 0 data 3 $((L4 + 48))
	# AF_PACKET frames keep their tags in-band on egress: both are parsed
	sB --raw "$VB" --src $B4 --dst-mac "$MACA" -n 3 --vlan 7 --dscp 22 -l 48 $A4
	expect egress 22 0 data 3 $((L4 + 4 + 48))
	sB --raw "$VB" --src $B4 --dst-mac "$MACA" -n 2 --vlan 7 --vlan 8 --dscp 24 -l 48 $A4
	expect egress 24 0 data 2 $((L4 + 8 + 48))
	# three in-band tags: more than the parser follows
	sB --raw "$VB" --src $B4 --dst-mac "$MACA" --vlan 7 --vlan 8 --vlan 9 --dscp 44 -l 48 $A4
	sB -n 2 --dscp 40 -p 4792 $A4
}

# tcx links held by the wire_dump process (its fdinfo says so).
tcx_links() {
	local f n=0
	# ip netns exec execs wire_dump: the coprocess pid is its pid.
	for f in /proc/$wd_pid/fdinfo/*; do
		grep -q '^link_type:.*tcx' "$f" 2>/dev/null && n=$((n + 1))
	done
	echo $n
}

bpf_filters() {
	# A cls_bpf filter is listed as its chain head plus one line with the handle.
	{ inB tc filter show dev "$VB" ingress; inB tc filter show dev "$VB" egress; } |
		grep -c ' bpf .*handle '
}

has_clsact() {
	inB tc qdisc show dev "$VB" | grep -q clsact
}

nothing_left() {
	local what=$1 n
	n=$(bpf_filters)
	[ "$n" = 0 ] && ok "$what: no tc filter left" || fail "$what: $n tc filters left"
	if inB bpftool net show dev "$VB" | grep -q wire_; then
		fail "$what: bpftool net still shows wire programs"
	else
		ok "$what: bpftool net shows nothing of ours"
	fi
}

# --- pass 1: automatic mode (tcx on 6.6+) -------------------------------------

echo "# pass 1: auto"
: >"$tmp/wd.log"
wd_start auto
kind=$(wd kind "$VB")
echo "# attached via $kind"
if [ "$kind" = tcx ]; then
	[ "$(tcx_links)" = 2 ] && ok "auto: two tcx links" || fail "auto: $(tcx_links) tcx links, want 2"
	[ "$(bpf_filters)" = 0 ] && ok "auto: no tc filter" || fail "auto: tc filters with tcx"
	wd attach "$VB" >/dev/null && [ "$(tcx_links)" = 2 ] && ok "auto: attach is idempotent" ||
		fail "auto: second attach changed the links"
else
	echo "# kernel without tcx: auto fell back to $kind"
fi
send_traffic
check_table "auto ($kind)"
wd detach "$VB" >/dev/null && ok "auto: detach" || fail "auto: detach"
[ "$(tcx_links)" = 0 ] && ok "auto: no tcx link after detach" || fail "auto: tcx links remain"
nothing_left "auto"
has_clsact && fail "auto: a clsact qdisc appeared" || ok "auto: no clsact qdisc"
# detached: more traffic changes nothing, and the counters stay
sA -n 5 --dscp 26 --ecn 2 -l 48 $B4
check_table "auto after detach (cumulative, nothing new)"
wd detach "$VB" 2>/dev/null && fail "auto: second detach succeeded" || ok "auto: second detach is -ENOENT"
wd_stop

# --- pass 2: clsact forced ----------------------------------------------------

echo "# pass 2: clsact"
wd_start clsact
kind=$(wd kind "$VB")
[ "$kind" = clsact ] && ok "clsact: attached via clsact" || fail "clsact: attached via $kind"
[ "$(bpf_filters)" = 2 ] && ok "clsact: two bpf filters" || fail "clsact: $(bpf_filters) filters"
wd attach "$VB" >/dev/null && [ "$(bpf_filters)" = 2 ] && ok "clsact: attach is idempotent" ||
	fail "clsact: second attach changed the filters"
send_traffic
check_table "clsact"
wd detach "$VB" >/dev/null && ok "clsact: detach" || fail "clsact: detach"
nothing_left "clsact"
has_clsact && fail "clsact: our clsact qdisc was left" || ok "clsact: our clsact qdisc removed"
wd_stop

# --- pass 2b: auto mode where the kernel refuses tcx ---------------------------------

if [ -f "${NO_TCX_PRELOAD:-}" ]; then
	echo "# pass 2b: auto on a kernel without tcx (simulated with LD_PRELOAD)"
	# An ASan build (meson -Db_sanitize) refuses to start when a preload
	# comes before its runtime; the order does not matter to this shim.
	WD_ENV="LD_PRELOAD=$NO_TCX_PRELOAD ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	wd_start auto
	WD_ENV=
	kind=$(wd kind "$VB")
	[ "$kind" = clsact ] && ok "no tcx: auto fell back to clsact" || fail "no tcx: attached via $kind"
	grep -q 'refuses tcx links' "$tmp/wd.log" && ok "no tcx: the fallback is logged" ||
		fail "no tcx: the fallback is not logged"
	send_traffic
	check_table "auto without tcx"
	wd detach "$VB" >/dev/null && ok "no tcx: detach" || fail "no tcx: detach"
	nothing_left "no tcx"
	has_clsact && fail "no tcx: our clsact qdisc was left" || ok "no tcx: our clsact qdisc removed"
	wd_stop
else
	echo "# pass 2b skipped: no no_tcx_preload.so"
fi

# A clsact that was there before, with someone else's filter, stays as it was.
inB tc qdisc add dev "$VB" clsact
inB tc filter add dev "$VB" ingress prio 1 protocol all u32 match u32 0xdeadbeef 0xffffffff at 0
wd_start clsact
send_traffic
check_table "clsact under a foreign filter"
wd detach "$VB" >/dev/null || fail "clsact (foreign): detach"
[ "$(bpf_filters)" = 0 ] && ok "clsact (foreign): our filters removed" || fail "clsact (foreign): filters left"
has_clsact && ok "clsact (foreign): the existing qdisc stays" || fail "clsact (foreign): qdisc removed"
inB tc filter show dev "$VB" ingress | grep -q u32 && ok "clsact (foreign): u32 filter intact" ||
	fail "clsact (foreign): u32 filter gone"
wd_stop
inB tc qdisc del dev "$VB" clsact

# A qdisc we made but someone hung a filter on meanwhile also stays.
wd_start clsact
inB tc filter add dev "$VB" egress prio 1 protocol all u32 match u32 0xdeadbeef 0xffffffff at 0
wd detach "$VB" >/dev/null || fail "clsact (shared): detach"
[ "$(bpf_filters)" = 0 ] && ok "clsact (shared): our filters removed" || fail "clsact (shared): filters left"
has_clsact && ok "clsact (shared): qdisc with a foreign filter stays" || fail "clsact (shared): qdisc removed"
wd_stop
inB tc qdisc del dev "$VB" clsact

# The device vanishing under an attachment is not an error on detach/close.
ip -n "$NB" link add gone0 type veth peer name gone1 && ip -n "$NB" link set gone0 up
wd_start clsact
wd attach gone0 >/dev/null || fail "vanishing device: attach"
ip -n "$NB" link del gone0
echo quit 2>/dev/null >&"${WD[1]}"
wait "$wd_pid"
rc=$?
wd_pid=
[ $rc = 0 ] && ok "close after the device vanished" || fail "close after the device vanished: rc $rc"
grep -q 'error: wire: gone0' "$tmp/wd.log" && fail "errors on a vanished device" || true

# --- the port setting -----------------------------------------------------------

echo "# pass 3: roce_port 4792"
wd_start auto -p 4792
exp=()
sA -n 3 --dscp 12 -p 4792 -l 48 $B4
expect ingress 12 0 data 3 $((L4 + 48))
sA -n 3 --dscp 13 -p 4791 -l 48 $B4
check_table "port 4792"
wd_stop

# --- no privileges ---------------------------------------------------------------

if command -v setpriv >/dev/null; then
	inB setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all "$WIRE_DUMP" -d 0.01 lo >/dev/null 2>"$tmp/eperm"
	rc=$?
	if [ $rc = 3 ] && grep -q CAP_BPF "$tmp/eperm"; then
		ok "unprivileged: exit 3 and a message naming CAP_BPF"
	elif [ $rc = 126 ]; then
		echo "# unprivileged check skipped: nobody cannot execute $WIRE_DUMP"
	else
		fail "unprivileged: rc $rc: $(cat "$tmp/eperm")"
	fi
fi

# --- packets/s through the veth (printed, not asserted) ----------------------------

# One sender, pinned when possible; the veth hands each packet to B's receive
# path within the sender's own sendto(), so this rate includes tc ingress on vb.
pin=
command -v taskset >/dev/null && pin="taskset -c 0"
# pps [PORT]
pps() {
	inA $pin "$ROCE_SEND" -q --stats -n "${WIRE_PERF_PACKETS:-300000}" -T 5 --dscp 26 --ecn 2 \
		-l 64 -p "${1:-4791}" $B4 | awk '{print $(NF-1)}'
}
best() { printf '%s\n' "$@" | sort -n | tail -1; }

echo "# packets/s, UDP/4791 with a 64-byte payload, A -> B over the veth"
echo "# (best of 3 rounds, the three setups interleaved to share the noise)"
r_none=() r_tcx=() r_cls=() r_other=()
counted=0
for round in 1 2 3; do
	r_none+=("$(pps)")
	wd_start tcx
	r_tcx+=("$(pps)")
	r_other+=("$(pps 4792)")
	wd read >"$tmp/perf"
	counted=$((counted + $(awk -v v="$VB" '$1 == v && $2 == "ingress" {n += $6} END {print n + 0}' "$tmp/perf")))
	wd_stop
	wd_start clsact
	r_cls+=("$(pps)")
	wd_stop
done
echo "# perf: no program     $(best "${r_none[@]}") pps   (${r_none[*]})"
echo "# perf: wire via tcx   $(best "${r_tcx[@]}") pps   (${r_tcx[*]})"
echo "# perf: wire clsact    $(best "${r_cls[@]}") pps   (${r_cls[*]})"
echo "# perf: tcx, UDP/4792  $(best "${r_other[@]}") pps   (${r_other[*]})   (parsed, not counted)"
echo "# perf: $counted packets counted over the tcx rounds"

if grep -qE 'Sanitizer|runtime error|Invalid (read|write)|definitely lost' "$tmp/wd.log"; then
	fail "wire_dump: sanitizer or valgrind reports"
	sed 's/^/#   /' "$tmp/wd.log"
fi
if grep -q '^error' "$tmp/wd.log"; then
	echo "# wire_dump logged errors:"
	grep '^error' "$tmp/wd.log" | sed 's/^/#   /'
fi
echo "$((checks - fails)) passed, $fails failed"
[ $fails = 0 ]
