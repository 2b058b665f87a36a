#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lldp collector's lldpd source (issue 36): a fake lldpcli first in PATH answers
# with what Debian's lldpd 1.0.16 answered (tests/fixtures/lldp: one neighbour, where
# lldpcli's "interface" is an object, and two, where it is an array), and then badly:
# JSON cut short, exit 1, no answer at all, an endless one.  Each bad answer is one log
# line and the collection goes on.  lldpcli is run only where the control socket is.
# The netdevs are tests/fixtures/sysfs/mlx5-roce's; no root needed (as root, the packet
# socket opens too, and hears nothing for netdevs that are not this machine's).
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_cmd python3

fx="$SOURCE_DIR/tests/fixtures"
bin="$TMPD/bin"
sock="$TMPD/lldpd.sock"
mkdir "$bin"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sock"

# fake BODY: lldpcli that logs its arguments, then runs BODY (rocewatch gives it PATH and
# LC_ALL only, so what it needs is written into it)
fake() {
	printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>%s\n%s\n' "$TMPD/args" "$1" >"$bin/lldpcli"
	chmod 0755 "$bin/lldpcli"
	: >"$TMPD/args"
}
# snap [OPTIONS]: a snapshot of the fixture tree, with the fake first in PATH
snap() {
	PATH="$bin:$PATH" timeout 60 "$ROCEWATCH" snapshot --sysfs-root "$fx/sysfs/mlx5-roce" \
		--collector.lldp.socket "$sock" "$@" >"$TMPD/snap.json" 2>"$TMPD/snap.log"
}
f() { jq -r --arg n "$1" --arg f "$2" '.netdevs[] | select(.name == $n) | .fields[$f]' "$TMPD/snap.json"; }
a() { jq -r --arg n "$1" --arg f "$2" '.netdevs[] | select(.name == $n) | .absent[$f].reason' "$TMPD/snap.json"; }
lines() { grep -c "$1" "$TMPD/snap.log" || true; }

fake "exec cat '$fx/lldp/lldpcli-one.json'"
check "one neighbour: snapshot runs" snap
check "lldpcli asked as -u SOCKET -f json show neighbors" \
	[ "$(cat "$TMPD/args")" = "-u $sock -f json show neighbors" ]
check "one neighbour: ens1f0np0's system name" [ "$(f ens1f0np0 lldp.system_name)" = leaf-r5 ]
check "one neighbour: its port ID, chassis ID, TTL, source" \
	[ "$(f ens1f0np0 lldp.port_id) $(f ens1f0np0 lldp.chassis_id) $(f ens1f0np0 lldp.ttl) $(f ens1f0np0 lldp.source)" = \
	"swp5 02:00:00:00:05:01 4 lldpd" ]
check "one neighbour: ens1f1np1 has none" [ "$(a ens1f1np1 lldp.system_name)" = unsupported ]

fake "exec cat '$fx/lldp/lldpcli-two.json'"
check "two neighbours: snapshot runs" snap
check "two neighbours: ens1f0np0's leaf-r5 swp5" \
	[ "$(f ens1f0np0 lldp.system_name)/$(f ens1f0np0 lldp.port_id)" = leaf-r5/swp5 ]
check "two neighbours: ens1f1np1's leaf-r6 Ethernet6/1" \
	[ "$(f ens1f1np1 lldp.system_name)/$(f ens1f1np1 lldp.port_id)" = leaf-r6/Ethernet6/1 ]
check "two neighbours: ens1f1np1's chassis ID and port description" \
	[ "$(f ens1f1np1 lldp.chassis_id)/$(f ens1f1np1 lldp.port_description)" = \
	"leaf-r6-chassis/Ethernet6/1 to gpu12 nic1" ]
check "nothing logged about lldpcli" [ "$(lines lldpcli)" = 0 ]

fake "exec cat '$fx/lldp/lldpcli-none.json'"
check "no neighbour: snapshot runs" snap
check "no neighbour: the facts are absent" \
	[ "$(a ens1f0np0 lldp.port_id) $(a ens1f1np1 lldp.port_id)" = "unsupported unsupported" ]

# /metrics: one info series per netdev, labels as the facts
port=$(free_port)
fake "exec cat '$fx/lldp/lldpcli-two.json'"
PATH="$bin:$PATH" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" \
	--sysfs-root "$fx/sysfs/mlx5-roce" --collector.lldp.socket "$sock" >"$TMPD/serve.log" 2>&1 &
serve=$!
stop_at_exit "$serve"
series() { curl -sf "http://127.0.0.1:$port/metrics" | grep '^roce_netdev_lldp_neighbor_info{device="ens1f1np1"'; }
series_is() { [ "$(series)" = "$1" ]; }
check "serve: roce_netdev_lldp_neighbor_info with every label" wait_until 20 series_is \
	'roce_netdev_lldp_neighbor_info{device="ens1f1np1",rdma_device="mlx5_1",system_name="leaf-r6",chassis_id="leaf-r6-chassis",port_id="Ethernet6/1",port_description="Ethernet6/1 to gpu12 nic1",source="lldpd"} 1'
kill "$serve"

# ---- where lldpcli is not run ----
fake "exec cat '$fx/lldp/lldpcli-one.json'"
check "no socket: snapshot runs" snap --collector.lldp.socket "$TMPD/nothing-here.sock"
check "no socket: lldpcli not run" [ ! -s "$TMPD/args" ]
check "no socket: nothing logged about lldpd" [ "$(lines lldpcli)" = 0 ]
: >"$TMPD/plain-file"
check "a plain file for a socket: snapshot runs" snap --collector.lldp.socket "$TMPD/plain-file"
check "a plain file for a socket: lldpcli not run" [ ! -s "$TMPD/args" ]

# ---- bad answers: one line each, the facts absent, the snapshot written ----
bad() {
	local what=$1 body=$2 text=$3
	fake "$body"
	check "$what: snapshot runs" snap
	check "$what: one line, saying so" [ "$(lines "lldp: lldpcli -u $sock: $text")" = 1 ]
	check "$what: the facts are absent" [ "$(a ens1f0np0 lldp.system_name)" = unsupported ]
}
bad "JSON cut short" "head -c 100 '$fx/lldp/lldpcli-two.json'" "its JSON: "
bad "lldpd not answering" \
	"echo 'unable to connect to socket $sock: Connection refused' >&2; exit 1" \
	"exit status 1: unable to connect to socket $sock: Connection refused"
bad "no answer" "exec sleep 60" "no answer in 2000 ms (killed)"
bad "an endless answer" "exec yes" "answer longer than 1048576 bytes (killed)"
check "no lldpcli at all: snapshot runs" \
	timeout 60 env PATH=/nonexistent "$ROCEWATCH" snapshot --sysfs-root "$fx/sysfs/mlx5-roce" \
	--collector.lldp.socket "$sock" -o "$TMPD/snap.json" 2>"$TMPD/snap.log"
check "no lldpcli at all: said" [ "$(lines "no lldpcli in PATH (Debian: the lldpd package)")" = 1 ]
finish
