#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier: LLDP neighbours from real frames (issue 36).  A veth pair between two
# namespaces: the switch side runs Debian's lldpd under a hostname of its own (leaf-r5),
# tx-interval 1 s, only on its veths, with its own control socket; rocewatch on the
# other side reads the neighbour from the frames: `snapshot --collector.lldp.wait`, and
# `serve --user nobody`, which opened its packet socket before dropping every capability
# and still joins the LLDP group on a netdev made after, and polls at once on a frame
# that changes a neighbour (its own polls are an hour apart here).  Then a receive-only
# lldpd on rocewatch's side, read through lldpcli; last, LLDPDUs cut short, sent from the
# switch's namespace: one log line, and the next good frame is read.  Conditions are
# waited for, never slept: nothing here depends on the machine's speed.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd ip iproute2
need_cmd lldpd lldpd
need_cmd lldpcli lldpd
need_cmd unshare util-linux
need_cmd curl
need_cmd jq
id nobody >/dev/null 2>&1 || skip "needs the user nobody"

sw=$(make_netns lldp-sw)
host=$(make_netns lldp-host)
ip link add swp5 netns "$sw" type veth peer name eth2 netns "$host"
ip -n "$sw" link set swp5 up
ip -n "$host" link set eth2 up
# lldpd chroots into /run/lldpd (privilege separation); its unit makes it, and it is masked
mkdir -p /run/lldpd
# lldpd runs lldpcli for -O as its own user: it must reach the sockets under $TMPD
chmod 0755 "$TMPD"
printf 'configure lldp tx-interval 1\nconfigure lldp portidsubtype ifname\n' >"$TMPD/sw.conf"
printf 'configure lldp tx-interval 1\n' >"$TMPD/host.conf"
# nothing of a real lldpd of this machine: its socket is a path every namespace sees
none="$TMPD/no-lldpd.sock"

# start_lldpd LOG NETNS HOSTNAME ARGS...: lldpd -d in a UTS namespace of its own; its PID is $!
start_lldpd() {
	local log=$1 ns=$2 hn=$3
	shift 3
	# shellcheck disable=SC2016 # the inner shell expands them
	ip netns exec "$ns" unshare --uts sh -c 'hostname "$1"; shift; exec lldpd -d "$@"' sh \
		"$hn" "$@" >"$TMPD/$log.log" 2>&1 &
	stop_at_exit "$!"
}
start_lldpd sw "$sw" leaf-r5 -I 'swp*' -u "$TMPD/sw.sock" -O "$TMPD/sw.conf"
sw_pid=$!
swcli() { ip netns exec "$sw" lldpcli -u "$TMPD/sw.sock" "$@"; }
wait_until 20 swcli show configuration || die "lldpd did not start: $(cat "$TMPD/sw.log")"

# ---- snapshot: a one-shot run waits for the first frame ----
ip netns exec "$host" "$ROCEWATCH" snapshot --collector.lldp.wait 20s \
	--collector.lldp.socket "$none" >"$TMPD/snap.json" 2>"$TMPD/snap.log" ||
	die "snapshot failed: $(cat "$TMPD/snap.log")"
field() { jq -r --arg n "$2" --arg f "$3" '.netdevs[] | select(.name == $n) | .fields[$f]' "$1"; }
check "snapshot: lldp.system_name of eth2 is leaf-r5" [ "$(field "$TMPD/snap.json" eth2 lldp.system_name)" = leaf-r5 ]
check "snapshot: lldp.port_id of eth2 is swp5" [ "$(field "$TMPD/snap.json" eth2 lldp.port_id)" = swp5 ]
check "snapshot: lldp.port_description of eth2 is swp5" [ "$(field "$TMPD/snap.json" eth2 lldp.port_description)" = swp5 ]
check "snapshot: lldp.ttl of eth2 is 4 (tx-interval 1 s, hold 4)" [ "$(field "$TMPD/snap.json" eth2 lldp.ttl)" = 4 ]
check "snapshot: from the frames" [ "$(field "$TMPD/snap.json" eth2 lldp.source)" = frames ]
check "snapshot: chassis ID is swp5's MAC" [ "$(field "$TMPD/snap.json" eth2 lldp.chassis_id)" = \
	"$(ip -n "$sw" -j link show swp5 | jq -r '.[0].address')" ]

# ---- serve, after dropping every capability ----
port=$(free_port)
ip netns exec "$host" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" --user nobody \
	--interval 1h --config-interval 1h --collector.lldp.socket "$none" >"$TMPD/serve.log" 2>&1 &
serve=$!
stop_at_exit "$serve"
metrics() { ip netns exec "$host" curl -sf "http://127.0.0.1:$port/metrics"; }
# lldp_series DEV: its roce_netdev_lldp_neighbor_info line
lldp_series() { metrics | grep "^roce_netdev_lldp_neighbor_info{device=\"$1\"" || true; }
has_labels() {
	local s
	s=$(lldp_series "$1")
	shift
	[ -n "$s" ] || return 1
	for l in "$@"; do [[ $s == *"$l"* ]] || return 1; done
}
wait_until 20 metrics || die "serve did not come up: $(cat "$TMPD/serve.log")"
check "serve dropped every capability" grep -q "capabilities kept: none" "$TMPD/serve.log"
check "serve: eth2's neighbour leaf-r5 swp5, from the frames" \
	wait_until 20 has_labels eth2 'system_name="leaf-r5"' 'port_id="swp5"' 'source="frames"'
joined() { ip -n "$host" maddr show dev "$1" | grep -q "01:80:c2:00:00:0e"; }
check "eth2 joined 01:80:c2:00:00:0e" joined eth2

# a netdev made after the drop: joined without CAP_NET_RAW, its neighbour heard
ip link add swp6 netns "$sw" type veth peer name eth3 netns "$host"
ip -n "$sw" link set swp6 up
ip -n "$host" link set eth3 up
check "serve: eth3 (made after the drop) hears leaf-r5 swp6" \
	wait_until 20 has_labels eth3 'system_name="leaf-r5"' 'port_id="swp6"'
check "eth3 joined 01:80:c2:00:00:0e after the drop" wait_until 20 joined eth3

# a changed neighbour is polled for at once: the next poll of its own is an hour away
swcli configure ports swp5 lldp portidsubtype local Ethernet5/1 description "Ethernet5/1 to eth2" >/dev/null
check "serve: a changed port ID reaches /metrics through the packet socket's event" \
	wait_until 20 has_labels eth2 'port_id="Ethernet5/1"' 'port_description="Ethernet5/1 to eth2"'
check "serve logged the change" grep -q 'lldp: eth2: neighbour leaf-r5 port Ethernet5/1' "$TMPD/serve.log"

# ---- lldpd on rocewatch's side, read through lldpcli ----
start_lldpd host "$host" gpu12 -r -I 'eth*' -u "$TMPD/host.sock" -O "$TMPD/host.conf"
host_pid=$!
hostcli() { ip netns exec "$host" lldpcli -u "$TMPD/host.sock" -f json show neighbors; }
# long enough a TTL that lldpd keeps both neighbours while the switch is stopped
swcli configure lldp tx-hold 60 >/dev/null
# jq 1.6's -e exits 0 on no input at all (lldpcli before lldpd's socket is there): `input`
# makes that an error
ttl60() { hostcli | jq -en 'input | [.lldp.interface[] | .[].port.ttl] == ["60", "60"]'; }
check "rocewatch's lldpd heard both neighbours (TTL 60)" wait_until 30 ttl60
# Frozen, the switch sends nothing: what snapshot knows can only come from lldpd.
ip netns pids "$sw" | xargs kill -STOP
ip netns exec "$host" "$ROCEWATCH" snapshot --collector.lldp.socket "$TMPD/host.sock" \
	>"$TMPD/cli.json" 2>"$TMPD/cli.log"
ip netns pids "$sw" | xargs kill -CONT
check "lldpcli: eth2 from lldpd" [ "$(field "$TMPD/cli.json" eth2 lldp.source)" = lldpd ]
check "lldpcli: eth2's leaf-r5 port Ethernet5/1" [ "$(field "$TMPD/cli.json" eth2 lldp.system_name)/$(field "$TMPD/cli.json" eth2 lldp.port_id)" = leaf-r5/Ethernet5/1 ]
check "lldpcli: eth3's leaf-r5 port swp6, TTL 60" [ "$(field "$TMPD/cli.json" eth3 lldp.port_id)/$(field "$TMPD/cli.json" eth3 lldp.ttl)" = swp6/60 ]
check "lldpcli: nothing logged" [ ! -s "$TMPD/cli.log" ]
kill "$host_pid"
wait "$host_pid" || true

# ---- the switch goes away: its shutdown LLDPDU withdraws the neighbours ----
kill "$sw_pid"
wait "$sw_pid" || true
gone() { [ -z "$(lldp_series eth2)" ] && [ -z "$(lldp_series eth3)" ]; }
check "serve: shutdown LLDPDUs withdraw both neighbours at once" wait_until 20 gone
check "serve said so" grep -q "lldp: eth2: neighbour withdrawn (shutdown LLDPDU" "$TMPD/serve.log"
ip netns exec "$host" "$ROCEWATCH" snapshot --collector.lldp.socket "$none" >"$TMPD/after.json" 2>/dev/null
absent() { jq -r --arg f "$2" '.netdevs[] | select(.name == "eth2") | .absent[$f] | "\(.reason) \(.errno) \(.error)"' "$1"; }
check "snapshot: no neighbour, said why" [ "$(absent "$TMPD/after.json" lldp.system_name)" = \
	"no_data 4097 no LLDP frame seen since rocewatch started (NIC firmware may take them)" ]
not() { ! "$@"; }
check "no malformed LLDPDU was logged" not grep -q "malformed" "$TMPD/serve.log" "$TMPD/snap.log"

# ---- malformed LLDPDUs: one line, then a good frame is still read ----
# lldpd's frame cut inside its Port ID TLV, three times, then a frame of our own making
# (802.1AB: Chassis ID local "probe", Port ID ifname "swp5", TTL 120, System Name, End)
ip netns exec "$sw" python3 - "$SOURCE_DIR/tests/fixtures/lldp/leaf-r5-local.bin" <<'PY'
import socket, struct, sys
def tlv(t, v):
    return struct.pack("!H", t << 9 | len(v)) + v
frame = open(sys.argv[1], "rb").read()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("swp5", 0))
for _ in range(3):
    s.send(frame[:30])
good = (tlv(1, b"\x07probe") + tlv(2, b"\x05swp5") + tlv(3, struct.pack("!H", 120)) +
        tlv(5, b"probe-1") + tlv(0, b""))
s.send(frame[:14] + good)
PY
check "serve: the good frame after them is read" wait_until 20 has_labels eth2 'system_name="probe-1"'
check "serve: three malformed LLDPDUs, one log line naming eth2 and what was wrong" \
	[ "$(grep -c 'lldp: eth2: malformed LLDPDU from .*: Port ID TLV (TLV 2): length 12, only 5 bytes left' "$TMPD/serve.log")" = 1 ]

kill "$serve"
rc=0
wait "$serve" || rc=$?
check "serve exits 0 on SIGTERM" [ "$rc" -eq 0 ]
finish
