#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# RDMA from the command line: snapshot of the mlx5 RoCE fixture tree (ports, states,
# GID index, counters), snapshot -> --from round trip for snapshot and serve, the
# RDMA families of /metrics against their golden text, and this machine (no RDMA
# stack) reporting zero ports, successfully and without a word on stderr.
. "$(dirname "$0")/../lib.sh"

FIX="$SOURCE_DIR/tests/fixtures"
TREE="$FIX/sysfs/mlx5-roce"
GOLDEN="$FIX/golden/rdma-mlx5-roce.prom"
# The fixture's netdevs do not exist here; keep this host's netdevs out of the picture.
COMMON=(--sysfs-root "$TREE" --netdev-exclude '.*')

json_check() { # FILE PYTHON-ASSERTIONS (d = the snapshot)
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"
}

timeout 20 "$ROCEWATCH" snapshot "${COMMON[@]}" -o "$TMPD/snap.json" 2>"$TMPD/snap.err" ||
	die "snapshot of $TREE failed: $(cat "$TMPD/snap.err")"

check "rdma collector succeeded on the fixture" json_check "$TMPD/snap.json" \
	'assert d["collectors"]["rdma"]["success"] is True, d["collectors"]["rdma"]'
check "two ports, mlx5_0/1 and mlx5_1/1" json_check "$TMPD/snap.json" \
	'assert [(p["device"], p["port"]) for p in d["rdma_ports"]] == [("mlx5_0", 1), ("mlx5_1", 1)], d["rdma_ports"]'
check "state, physical state, rate, netdev" json_check "$TMPD/snap.json" '
f = d["rdma_ports"][0]["fields"]
assert (f["state"], f["phys_state"], f["rate"], f["link_layer"], f["netdev_name"]) == \
       ("ACTIVE", "LinkUp", 100000, "Ethernet", "ens1f0np0"), f'
check "RoCE v2 IPv4 GID index 3 on mlx5_0" json_check "$TMPD/snap.json" \
	'assert d["rdma_ports"][0]["fields"]["gid.rocev2_ipv4_index"] == 3'
check "no IPv4 RoCE v2 GID on mlx5_1: absent with a reason" json_check "$TMPD/snap.json" \
	'assert d["rdma_ports"][1]["absent"]["gid.rocev2_ipv4_index"]["reason"] == "unsupported"'
check "GID table with v1/v2 and IPv4/IPv6 entries" json_check "$TMPD/snap.json" '
g = d["rdma_ports"][0]["fields"]["gids"]
assert [(e["index"], e["type"]) for e in g] == [(0, "RoCE v1"), (1, "RoCE v2"), (2, "RoCE v1"),
       (3, "RoCE v2"), (4, "RoCE v1"), (5, "RoCE v2")], g
assert g[5]["gid"] == "2001:0db8:0010:0000:0000:0000:0000:0007"'
check "hw and port counters, raw" json_check "$TMPD/snap.json" '
c = d["rdma_ports"][0]["counters"]
assert c["hw"]["out_of_sequence"] == 2054 and c["hw"]["np_cnp_sent"] == 1882731, c["hw"]
assert c["port"]["port_xmit_data"] == 2361844193751, c["port"]
assert "lifespan" not in c["hw"] and len(c["hw"]) == 31 and len(c["port"]) == 21'
check "verbs leaves a fixture alone (not_collected)" json_check "$TMPD/snap.json" \
	'assert d["rdma_ports"][0]["absent"]["active_mtu"]["reason"] == "not_collected"'
check "node counts the RDMA devices" json_check "$TMPD/snap.json" \
	'assert d["node"]["fields"]["rdma_devices"] == 2'

# Round trip: what --from replays is what was collected.
timeout 20 "$ROCEWATCH" snapshot --from "$TMPD/snap.json" -o "$TMPD/replay.json" 2>"$TMPD/replay.err" ||
	die "snapshot --from failed: $(cat "$TMPD/replay.err")"
check "snapshot --from keeps the ports, fields, absences and counters" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
strip = lambda ps: [{k: v for k, v in p.items() if k != "ifindex"} for p in ps]
assert strip(a["rdma_ports"]) == strip(b["rdma_ports"]), (a["rdma_ports"], b["rdma_ports"])
assert a["node"] == b["node"]' "$TMPD/snap.json" "$TMPD/replay.json"

# scrape OUT ARGS...: serve ARGS, one /metrics page into OUT once two fast polls ran
# (counters as of a whole poll, however long a poll takes here), then stop it
scrape() {
	local out=$1 port pid
	shift
	port=$(free_port)
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" "$@" 2>"$out.err" &
	pid=$!
	on_exit "kill $pid"
	polled() {
		curl -sf "127.0.0.1:$port/metrics" >"$out" &&
			[ "$(awk '$1 == "rocewatch_polls_total{loop=\"fast\"}" { print $2 }' "$out")" -ge 2 ]
	}
	wait_until 20 polled || die "serve $* did not come up: $(cat "$out.err")"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

# /metrics: live from the tree, and replayed from the snapshot, give the same RDMA families.
scrape "$TMPD/live.prom" "${COMMON[@]}"
scrape "$TMPD/replay.prom" --from "$TMPD/snap.json"

rdma_families() { # the roce_rdma_* lines, HELP/TYPE included
	grep -E '^(# (HELP|TYPE) )?roce_rdma_' "$1"
}
rdma_families "$TMPD/live.prom" >"$TMPD/live.rdma"
rdma_families "$TMPD/replay.prom" >"$TMPD/replay.rdma"
if [ -n "${UPDATE_GOLDEN:-}" ]; then cp "$TMPD/live.rdma" "$GOLDEN"; fi
check "RDMA families of /metrics match the golden text" diff -u "$GOLDEN" "$TMPD/live.rdma"
check "serve --from renders the same RDMA families" diff -u "$TMPD/live.rdma" "$TMPD/replay.rdma"
check "curated names, netdev label, bytes from 4-byte words" grep -qxF \
	'roce_rdma_port_transmit_bytes_total{device="mlx5_0",port="1",netdev="ens1f0np0",rdma_device="mlx5_0"} 9447376775004' \
	"$TMPD/live.rdma"
if command -v promtool >/dev/null 2>&1; then
	check "promtool accepts the exposition" bash -c "promtool check metrics <'$TMPD/live.prom'"
else
	echo "# promtool not installed: exposition syntax not checked by it"
fi

# mlx4 VPI: 64-bit counters_ext/ preferred over the saturated 32-bit counters/, board and
# HCA type, a native IB port that the RoCE profile leaves alone.
M4=(--sysfs-root "$FIX/sysfs/mlx4-vpi" --netdev-exclude '.*')
timeout 20 "$ROCEWATCH" snapshot "${M4[@]}" -o "$TMPD/m4.json" 2>"$TMPD/m4.err" ||
	die "snapshot of mlx4-vpi failed: $(cat "$TMPD/m4.err")"
check "mlx4: counters_ext/ (64-bit) replaces the saturated counters/ it extends" json_check "$TMPD/m4.json" '
c = d["rdma_ports"][0]["counters"]["port"]
assert c["port_xmit_data"] == 81604378624123 and c["port_rcv_data"] == 76544321098765, c
assert c["port_xmit_packets"] == 52000000000 and c["unicast_rcv_packets"] == 48999990000, c
assert c["port_xmit_wait"] == 4294967295, c  # no 64-bit twin: stays, saturated
assert not [k for k in c if k.endswith("_64") or k.startswith("port_unicast")], c'
check "mlx4: board_id and hca_type" json_check "$TMPD/m4.json" '
f = d["rdma_ports"][0]["fields"]
assert (f["board_id"], f["hca_type"]) == ("MT_1090111023", "MT4103"), f'
check "rxe has no board_id or hca_type: absent, not empty" bash -c \
	"timeout 20 '$ROCEWATCH' snapshot --sysfs-root '$FIX/sysfs/rxe' --netdev-exclude '.*' | python3 -c 'import json,sys; a=json.load(sys.stdin)[\"rdma_ports\"][0][\"absent\"]; assert a[\"board_id\"][\"reason\"] == a[\"hca_type\"][\"reason\"] == \"unsupported\", a'"
scrape "$TMPD/m4.prom" "${M4[@]}"
check "mlx4 /metrics: bytes from the 64-bit words" grep -qxF \
	'roce_rdma_port_transmit_bytes_total{device="mlx4_0",port="1",netdev="ens2",rdma_device="mlx4_0"} 326417514496492' "$TMPD/m4.prom"
check "mlx4 /metrics: port_rcv_discards as roce_rdma_port_receive_discards_total" grep -qxF \
	'roce_rdma_port_receive_discards_total{device="mlx4_0",port="1",netdev="ens2",rdma_device="mlx4_0"} 17' "$TMPD/m4.prom"
check "no double-prefixed roce_rdma_port_port_* family" bash -c "! grep -q '^roce_rdma_port_port_' '$TMPD/m4.prom'"
check "mlx4 /metrics: board_id and hca_type as info labels (the IB port too)" grep -qxF \
	'roce_rdma_port_info{device="mlx4_0",port="2",netdev="",rdma_device="mlx4_0",link_layer="InfiniBand",node_guid="0002:c903:00a1:b2c0",firmware="2.42.5000",board_id="MT_1090111023",hca_type="MT4103"} 1' "$TMPD/m4.prom"
# the rules: a saturated counter's increase is unknown, not 0; the IB port is skipped
cat >"$TMPD/wait.yaml" <<'YAML'
profile: wait
rules:
  - name: no_xmit_wait
    scope: rdma_port
    expr: increase(port["port_xmit_wait"], 5m) == 0
    severity: warning
    doc: the port waited to transmit (flow control)
YAML
saturated() {
	local rc=0
	"$ROCEWATCH" check "${M4[@]}" --serve none --profile "$TMPD/wait.yaml" --format json >"$TMPD/w.json" || rc=$?
	[ "$rc" -eq 3 ] || { echo "  exit $rc" >&2; return 1; }
	json_check "$TMPD/w.json" '
r = {x["object"]["port"]: x for x in d["results"]}
assert r[1]["outcome"] == "unknown" and r[1]["reason"] == "increase(port[\"port_xmit_wait\"], 5m): counter stuck at 2^32-1 (saturated), what it counted is unknown", r[1]
assert r[2]["outcome"] == "pass", r[2]'
}
check "port_xmit_wait stuck at 2^32-1: increase() unknown (saturated), not 0; exit 3" saturated
ib_skipped() {
	"$ROCEWATCH" check "${M4[@]}" --serve none --format json >"$TMPD/ib.json" || true
	json_check "$TMPD/ib.json" '
ib = [x for x in d["results"] if x["object"].get("port") == 2]
assert ib and all(x["outcome"] == "skip" and "here link_layer=InfiniBand" in x["reason"] for x in ib), ib[0]
roce = [x for x in d["results"] if x["object"].get("port") == 1 and x["rule"] == "rocev2_ipv4_gid"]
assert roce[0]["outcome"] == "pass", roce'
}
check "lossless-roce on the VPI card: the IB port skipped, the RoCE port checked" ib_skipped

# This machine: no RDMA stack (NETLINK_RDMA gives EPROTONOSUPPORT, no /sys/class/infiniband).
if [ ! -e /sys/class/infiniband ]; then
	timeout 20 "$ROCEWATCH" snapshot --collector.rdma --netdev-exclude '.*' -o "$TMPD/host.json" \
		2>"$TMPD/host.err" || die "snapshot of this machine failed: $(cat "$TMPD/host.err")"
	check "no RDMA here: rdma succeeds with zero ports" json_check "$TMPD/host.json" '
assert d["collectors"]["rdma"]["success"] is True, d["collectors"]["rdma"]
assert d["collectors"]["verbs"]["success"] is True, d["collectors"]["verbs"]
assert d["rdma_ports"] == [] and d["node"]["fields"]["rdma_devices"] == 0'
	check "no RDMA here: nothing about it on stderr" bash -c "! grep -Ei 'rdma|verbs|infiniband' '$TMPD/host.err'"
else
	echo "# this machine has /sys/class/infiniband: the no-RDMA checks do not apply"
fi

# --sysfs-root at a tree, no --netdev-exclude: the netdevs are the tree's (class/net, from
# sysfs, as this host has none of them), bound to its ports, none of this host's
tree_only() {
	timeout 20 "$ROCEWATCH" snapshot --sysfs-root "$TREE" >"$TMPD/tree.json" 2>"$TMPD/tree.err" ||
		{ cat "$TMPD/tree.err" >&2; return 1; }
	python3 - "$TMPD/tree.json" "$TREE" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
want = sorted(x for x in os.listdir(os.path.join(sys.argv[2], "class", "net")) if x != "lo")
got = sorted(n["name"] for n in d["netdevs"])
assert got == want, (got, want)
for n in d["netdevs"]:
    mtu = open(os.path.join(sys.argv[2], "class", "net", n["name"], "mtu")).read().strip()
    assert n["fields"]["mtu"] == int(mtu), n
assert all(p.get("netdev") in want for p in d["rdma_ports"]), [p.get("netdev") for p in d["rdma_ports"]]
col = d["collectors"]
assert col["link"]["enabled"] and col["link"]["success"], col["link"]
PY
}
check "--sysfs-root alone: the tree's netdevs only, bound to its ports" tree_only

finish
