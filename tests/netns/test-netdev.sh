#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier for the netdev collectors (ethtool, dcb, qos_sysfs) on veth:
# the ethtool ioctl returns veth's real stats; PAUSE, the PFC tunable and DCB
# answer EOPNOTSUPP, which must show as "absent: unsupported" in the snapshot
# and as no sample at all on /metrics, with every collector still succeeding;
# a device deleted between the listing and the read does not break the poll.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd ip iproute2
need_cmd curl
need_cmd python3
: "${BUILD_DIR:?BUILD_DIR is not set}"

ns=$(make_netns netdev)
# make_netns runs in a $(...) subshell, so its own on_exit is lost: register it here
on_exit "ip netns del $ns"
ip -n "$ns" link add va type veth peer name vb
ip -n "$ns" link add vc type veth peer name vd
for d in va vb vc vd; do ip -n "$ns" link set "$d" up; done
vb_index=$(ip netns exec "$ns" cat /sys/class/net/vb/ifindex)

# 1. the collectors one by one, with a device deleted between listing and read
check "collectors on veth and on a device that vanished mid-poll" \
	ip netns exec "$ns" "$BUILD_DIR/tests/netdev_live"

# 2. rocewatch snapshot: values and reasons in the JSON
ip -n "$ns" link add vc type veth peer name vd
ip netns exec "$ns" "$ROCEWATCH" snapshot --netdev-exclude '^lo$' -o "$TMPD/snap.json" \
	2>"$TMPD/snap.log" || die "snapshot failed: $(cat "$TMPD/snap.log")"
snap() { python3 - "$TMPD/snap.json" "$@"; }
check "snapshot: veth driver and its real peer_ifindex stat" snap "$vb_index" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
va = next(n for n in d["netdevs"] if n["name"] == "va")
assert va["fields"]["driver"] == "veth", va["fields"]
assert va["counters"]["ethtool"]["peer_ifindex"] == int(sys.argv[2]), va["counters"]
assert "rx_queue_0_xdp_packets" in va["counters"]["ethtool"]
assert va["fields"]["speed"] == 10000
PY
check "snapshot: PAUSE, tunable, DCB and QoS are absent: unsupported, not 0" snap <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
va = next(n for n in d["netdevs"] if n["name"] == "va")
for path in ("pause.rx", "pause.tx", "pause.autoneg", "pause.rx_frames",
             "pfc.prevention_timeout_ms", "pfc.enabled", "pfc.requests",
             "pfc.indications", "ets.prio_tc", "dscp2prio", "trust", "dcbx.mode",
             "buffer.total", "pfc.rx_pause", "ecn.np", "cnp.dscp"):
    assert path not in va["fields"], (path, va["fields"].get(path))
    assert va["absent"][path]["reason"] == "unsupported", (path, va["absent"][path])
assert va["absent"]["pause.rx"]["errno"] == 95
assert va["absent"]["pfc.enabled"]["errno"] == 95
PY
check "snapshot: ethtool, dcb and qos_sysfs succeeded" snap <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["collectors"]
for name in ("ethtool", "dcb", "qos_sysfs"):
    assert c[name]["enabled"] and c[name]["success"], (name, c[name])
PY
check "snapshot: nothing logged for veth's EOPNOTSUPP" bash -c "! grep -E 'ethtool:|dcb:|qos_sysfs:' '$TMPD/snap.log'"

# 3. serve: /metrics passes promtool, absent stays absent, a deleted device is fine
port=$(free_port)
ip netns exec "$ns" "$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" \
	--interval 100ms --config-interval 1h --netdev-exclude '^lo$' \
	--collector.ethtool.include '^peer_ifindex$' >"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill $pid"
metrics() { ip netns exec "$ns" curl -sf "http://127.0.0.1:$port/metrics"; }
has() { metrics | grep -qF "$1"; }
wait_until 10 has 'roce_netdev_info{device="va",driver="veth"' ||
	die "serve never showed va: $(cat "$TMPD/serve.log")"
metrics >"$TMPD/metrics.txt"
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics" bash -c "promtool check metrics <'$TMPD/metrics.txt'"
else
	echo "# promtool not installed: lint skipped"
fi
for c in ethtool dcb qos_sysfs; do
	check "rocewatch_collector_success{collector=\"$c\"} 1" \
		grep -qF "rocewatch_collector_success{collector=\"$c\"} 1" "$TMPD/metrics.txt"
done
for m in roce_pause_enabled roce_pause_frames_total roce_pfc_enabled roce_pfc_requests_total \
	roce_pfc_pause_frames_total roce_dscp_priority roce_qos_trust_info roce_ecn_enabled \
	roce_cnp_dscp roce_pfc_stall_prevention_timeout_seconds roce_dcbx_host_managed; do
	check "no $m sample for veth (absent, not 0)" \
		bash -c "! grep -E '^$m\\{device=\"v[abcd]\"' '$TMPD/metrics.txt'"
done
check "--collector.ethtool.include exports the matching raw stat" \
	grep -qF "roce_ethtool_peer_ifindex{device=\"va\"} $vb_index" "$TMPD/metrics.txt"
check "... and only that one: the default set is the curated one" \
	bash -c "! grep -q '^roce_ethtool_rx_queue' '$TMPD/metrics.txt'"
check "link speed of veth in bytes/s" grep -qF 'roce_netdev_speed_bytes{device="va"} 1250000000' \
	"$TMPD/metrics.txt"

ip -n "$ns" link del vc
sleep 0.5
check "still serving after a device was deleted" has 'roce_netdev_info{device="va",driver="veth"'
check "deleted device dropped" bash -c "! ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q 'device=\"vc\"'"
for c in ethtool dcb qos_sysfs; do
	check "$c still succeeding after the deletion" has "rocewatch_collector_success{collector=\"$c\"} 1"
done

kill -TERM "$pid"
wait "$pid" || true
check "no sanitizer reports" bash -c "! grep -E 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' '$TMPD/serve.log' '$TMPD/snap.log'"
check "no per-poll log spam" bash -c "[ \$(grep -cE 'ethtool:|dcb:|qos_sysfs:' '$TMPD/serve.log') -le 4 ]"
finish
