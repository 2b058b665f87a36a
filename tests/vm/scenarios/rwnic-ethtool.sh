#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One guest, issue 27: the ethtool facts rocewatch reads, produced by the kernel's own ethtool
# code (ioctl and genetlink) over a real driver (the test-only rwnic, tests/vm/rwnic/) with
# soft-RoCE on top, judged against `ethtool`:
#  - an mlx5-style `ethtool -S` table loaded into the driver: the snapshot's counters.ethtool
#    equals `ethtool -S` name for name and value for value, and every per-priority and port
#    fact rocewatch derives from those names (pfc.rx_pause[p], prio.rx_bytes[p], ...) equals
#    the value ethtool prints under that name; a later write with the same names moves the
#    values, and /metrics follows within two fast polls;
#  - rwnic's FEC counters reach `ethtool -I --show-fec` per lane, and rocewatch's FEC facts
#    (issue 25: mode, blocks, corrected bits, per lane) equal what ethtool shows;
#  - a counter of 2^64 - 1 (past INT64_MAX) is in the snapshot with its magnitude, not as -1;
#  - pause settings (`ethtool -a`), pause frame statistics (`ethtool -I --show-pause`), the
#    pfc-prevention-tout tunable (`ethtool --get-tunable`), speed, driver, firmware and bus
#    (`ethtool`, `ethtool -i`) equal the snapshot and /metrics;
#  - carrier flaps (rwnic's carrier file): /metrics carrier and the rxe port state go down and
#    come back, and link_down_events_phy moves roce_netdev_link_down_events_total;
#  - the lossless-roce profile passes as configured, and each of its ethtool / MTU / rdma_cm
#    rules fails when its one setting is broken: global pause on (`ethtool -A`), storm
#    prevention off (`ethtool --set-tunable`), MTU 1500 (netdev_mtu, and active_mtu_4096 with
#    it: the port's active_mtu follows the MTU), rdma_cm ToS 0, carrier off (port_active).
#
# Run alone: tests/vm/run-scenario tests/vm/scenarios/rwnic-ethtool.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"
# shellcheck source=tests/vm/rwnic-lib.sh
. "${VM_LIB%/*}/rwnic-lib.sh"

trap rwn_cleanup EXIT
vm_rwnic_load 1
rwn_port_up
rwn_configure_lossless
if=$RWN_IF

# --- what the NIC measured: an mlx5-style stats table, pause frames, speed ---------------------
# stats_table BASE: names as mlx5 prints them (Documentation/networking/device_drivers/ethernet/
# mellanox/mlx5/counters.rst), values distinct per name so a mix-up shows.
stats_table() {
	local b=$1 p i=0 s
	for p in 0 1 2 3 4 5 6 7; do
		for s in pause pause_duration pause_transition bytes packets discards buf_discard \
			cong_discard marked; do
			printf 'rx_prio%s_%s %s\n' "$p" "$s" $((b + p * 100 + i++))
		done
		for s in pause pause_duration bytes packets; do
			printf 'tx_prio%s_%s %s\n' "$p" "$s" $((b + p * 100 + 50 + i++))
		done
	done
	printf '%s\n' "rx_vport_unicast_packets $((b + 7001))" "tx_pause_storm_warning_events $((b + 7002))" \
		"tx_pause_storm_error_events $((b + 7003))" "rx_discards_phy $((b + 7004))" \
		"tx_discards_phy $((b + 7005))" "rx_out_of_buffer $((b + 7006))" \
		"link_down_events_phy $((b + 7007))" "rx_crc_errors_phy $((b + 7008))"
	# all-ones, as some drivers print a counter they do not have: past INT64_MAX
	printf '%s\n' "rx_vport_rdma_unicast_bytes 18446744073709551615"
}
stats_table 1000 >"$VM_OUT/stats-1.txt"
cp "$VM_OUT/stats-1.txt" "$RWNIC_DEBUGFS/$if/stats" || vm_fail "loading the stats table into rwnic was refused"
vm_rwnic_set "$if" pause "rx_frames 11
tx_frames 13"
vm_rwnic_set "$if" speed 200000

# --- the references ------------------------------------------------------------------------------
ethtool -S "$if" >"$VM_OUT/ethtool-S.txt" || vm_fail "ethtool -S $if failed"
# "     rx_prio3_pause: 1234" -> {"rx_prio3_pause": 1234}
ethtool_s_json() {
	awk -F': ' 'NR > 1 { gsub(/^ +/, "", $1); printf "%s\t%s\n", $1, $2 }' "$1" |
		jq -R -n '[inputs | split("\t") | {key: .[0], value: (.[1] | tonumber)}] | from_entries'
}
ethtool_s_json "$VM_OUT/ethtool-S.txt" >"$VM_OUT/ethtool-S.json"
n=$(jq length "$VM_OUT/ethtool-S.json")
vm_expect_eq "$n" "$(wc -l <"$VM_OUT/stats-1.txt")" "ethtool -S $if: as many stats as rwnic was given"
ethtool -a "$if" >"$VM_OUT/ethtool-a.txt" || vm_fail "ethtool -a $if failed"
onoff() { awk -v k="$1:" '$1 == k { print ($2 == "on") ? "true" : "false" }' "$VM_OUT/ethtool-a.txt"; }
# ethtool 6.1's --json pause output says true for every setting that is present, on or off;
# the settings are read from its text output, the statistics from its JSON.
ethtool --json -I --show-pause "$if" >"$VM_OUT/ethtool-pause.json" || vm_fail "ethtool --json -I --show-pause $if failed"
tout=$(ethtool --get-tunable "$if" pfc-prevention-tout | awk '$1 == "pfc-prevention-tout:" { print $2 }')
vm_expect_eq "$tout" 500 "ethtool --get-tunable $if pfc-prevention-tout"
speed=$(ethtool "$if" | awk '$1 == "Speed:" { sub(/Mb\/s/, "", $2); print $2 }')
vm_expect_eq "$speed" 200000 "ethtool $if Speed (Mb/s)"
driver=$(ethtool -i "$if" | awk '$1 == "driver:" { print $2 }')
firmware=$(ethtool -i "$if" | awk '$1 == "firmware-version:" { print $2 }')
bus=$(ethtool -i "$if" | awk '$1 == "bus-info:" { print $2 }')
vm_expect_eq "$driver $firmware $bus" "rwnic rwnic-test rwnic:0.0" "ethtool -i $if: driver, firmware-version, bus-info"
jq -n --slurpfile s "$VM_OUT/ethtool-S.json" --slurpfile p "$VM_OUT/ethtool-pause.json" \
	--argjson autoneg "$(onoff Autonegotiate)" --argjson rx "$(onoff RX)" --argjson tx "$(onoff TX)" \
	--argjson tout "$tout" --argjson speed "$speed" --arg driver "$driver" --arg firmware "$firmware" \
	--arg bus "$bus" '
	$s[0] as $S | $p[0][0].statistics as $ps |
	def prio($fmt): [range(8) as $i | $S[$fmt | sub("N"; "\($i)")]];
	{
	  "speed": $speed, "driver": $driver, "firmware": $firmware, "bus": $bus,
	  "pause.autoneg": $autoneg, "pause.rx": $rx, "pause.tx": $tx,
	  "pause.rx_frames": $ps.rx_pause_frames, "pause.tx_frames": $ps.tx_pause_frames,
	  "pfc.prevention_timeout_ms": $tout,
	  "pfc.rx_pause": prio("rx_prioN_pause"), "pfc.tx_pause": prio("tx_prioN_pause"),
	  "pfc.rx_pause_duration_us": prio("rx_prioN_pause_duration"),
	  "pfc.tx_pause_duration_us": prio("tx_prioN_pause_duration"),
	  "pfc.rx_pause_transitions": prio("rx_prioN_pause_transition"),
	  "prio.rx_bytes": prio("rx_prioN_bytes"), "prio.tx_bytes": prio("tx_prioN_bytes"),
	  "prio.rx_packets": prio("rx_prioN_packets"), "prio.tx_packets": prio("tx_prioN_packets"),
	  "prio.rx_discards": prio("rx_prioN_discards"),
	  "prio.rx_buf_discards": prio("rx_prioN_buf_discard"),
	  "prio.rx_cong_discards": prio("rx_prioN_cong_discard"),
	  "prio.rx_ecn_marked": prio("rx_prioN_marked"),
	  "pause_storm.warning_events": $S.tx_pause_storm_warning_events,
	  "pause_storm.error_events": $S.tx_pause_storm_error_events,
	  "port.rx_discards": $S.rx_discards_phy, "port.tx_discards": $S.tx_discards_phy,
	  "port.rx_out_of_buffer": $S.rx_out_of_buffer,
	  "port.link_down_events": $S.link_down_events_phy,
	  "port.rx_crc_errors": $S.rx_crc_errors_phy
	}' >"$VM_OUT/expected.json" || vm_fail "building the expected facts from ethtool's output failed"
# Nothing of it may be missing from ethtool's side, or the comparison below is hollow.
nulls=$(jq -r '[paths(. == null) | map(tostring) | join(".")] | join(" ")' "$VM_OUT/expected.json")
[[ -z $nulls ]] || vm_fail "ethtool's output lacks: $nulls"
[[ $(jq -c '[.["pause.rx_frames"], .["pause.tx_frames"]]' "$VM_OUT/expected.json") == '[11,13]' ]] ||
	vm_fail "ethtool -I --show-pause statistics are not rwnic's 11/13: $(cat "$VM_OUT/ethtool-pause.json")"

# FEC: rwnic's counters as the kernel's FEC netlink code reports them (the 6.1 core sums the
# lanes into the total); rocewatch's FEC facts are compared with this below.
vm_rwnic_set "$if" fec "corrected 99
uncorrectable 2
corrected_bits 77
lane0_corrected 3
lane1_corrected 4"
vm_run ethtool --set-fec "$if" encoding rs
ethtool --json -I --show-fec "$if" >"$VM_OUT/ethtool-fec.json" || vm_fail "ethtool --json -I --show-fec $if failed"
vm_expect_eq "$(jq -c '.[0] | [.active, .statistics.corrected_blocks, .statistics.uncorrectable_blocks.total,
	.statistics.corrected_bits.total]' "$VM_OUT/ethtool-fec.json")" '[["RS"],{"total":7,"lanes":[3,4]},2,77]' \
	"ethtool -I --show-fec $if: active, corrected (per lane), uncorrectable, corrected bits"

# --- the snapshot -------------------------------------------------------------------------------
snap=$VM_OUT/snapshot.json
rw_snapshot "$snap"
diff=$(rw_jq "$snap" --slurpfile w "$VM_OUT/expected.json" --slurpfile s "$VM_OUT/ethtool-S.json" \
	--arg n "$if" 'netdev($n) as $o | ($o.counters.ethtool // {}) as $c |
	[$w[0] | to_entries[] | field($o; .key) as $got | select($got != .value) |
	 "\(.key): rocewatch \($got | tojson) ethtool \(.value | tojson)"] +
	[$s[0] | to_entries[] | select($c[.key] != .value) |
	 "counters.ethtool.\(.key): rocewatch \($c[.key] | tojson) ethtool -S \(.value)"] +
	[$c | keys[] | select(. as $k | $s[0] | has($k) | not) | "counters.ethtool.\(.) not in ethtool -S"]
	| .[:8] | join("; ")')
[[ -z $diff ]] || vm_fail "snapshot of $if differs from ethtool: $diff"
vm_log "ok: snapshot $if: counters.ethtool = ethtool -S ($n stats), and the $(jq length "$VM_OUT/expected.json") facts derived from it, ethtool -a, -I --show-pause, --get-tunable, ethtool, ethtool -i"

# --- /metrics -------------------------------------------------------------------------------------
# Exact lines for the integer series; the scaled ones (speed in bytes/s, the timeout and the
# pause durations in seconds) are compared as numbers.
jq -r --arg n "$if" '"device=\"\($n)\"" as $d |
	def prio($name; $extra; $arr): $arr | to_entries[] |
		"\($name){\($d),\($extra)priority=\"\(.key)\"} \(.value)";
	def one($name; $extra; $v): "\($name){\($d)\($extra)} \($v)";
	def b: if . then 1 else 0 end;
	prio("roce_pfc_pause_frames_total"; "direction=\"rx\","; .["pfc.rx_pause"]),
	prio("roce_pfc_pause_frames_total"; "direction=\"tx\","; .["pfc.tx_pause"]),
	prio("roce_pfc_pause_transitions_total"; "direction=\"rx\","; .["pfc.rx_pause_transitions"]),
	prio("roce_prio_bytes_total"; "direction=\"rx\","; .["prio.rx_bytes"]),
	prio("roce_prio_bytes_total"; "direction=\"tx\","; .["prio.tx_bytes"]),
	prio("roce_prio_packets_total"; "direction=\"rx\","; .["prio.rx_packets"]),
	prio("roce_prio_packets_total"; "direction=\"tx\","; .["prio.tx_packets"]),
	prio("roce_prio_discards_total"; "direction=\"rx\",reason=\"discard\","; .["prio.rx_discards"]),
	prio("roce_prio_discards_total"; "direction=\"rx\",reason=\"buffer\","; .["prio.rx_buf_discards"]),
	prio("roce_prio_discards_total"; "direction=\"rx\",reason=\"congestion\","; .["prio.rx_cong_discards"]),
	prio("roce_prio_ecn_marked_packets_total"; "direction=\"rx\","; .["prio.rx_ecn_marked"]),
	one("roce_pfc_pause_storm_events_total"; ",level=\"warning\""; .["pause_storm.warning_events"]),
	one("roce_pfc_pause_storm_events_total"; ",level=\"error\""; .["pause_storm.error_events"]),
	one("roce_port_discards_total"; ",direction=\"rx\""; .["port.rx_discards"]),
	one("roce_port_discards_total"; ",direction=\"tx\""; .["port.tx_discards"]),
	one("roce_netdev_rx_out_of_buffer_total"; ""; .["port.rx_out_of_buffer"]),
	one("roce_netdev_link_down_events_total"; ""; .["port.link_down_events"]),
	one("roce_netdev_rx_crc_errors_total"; ""; .["port.rx_crc_errors"]),
	one("roce_pause_frames_total"; ",direction=\"rx\""; .["pause.rx_frames"]),
	one("roce_pause_frames_total"; ",direction=\"tx\""; .["pause.tx_frames"]),
	one("roce_pause_autoneg"; ""; .["pause.autoneg"] | b),
	one("roce_pause_enabled"; ",direction=\"rx\""; .["pause.rx"] | b),
	one("roce_pause_enabled"; ",direction=\"tx\""; .["pause.tx"] | b)' \
	"$VM_OUT/expected.json" >"$VM_OUT/metrics-expected.txt" || vm_fail "building the expected /metrics lines failed"
nm=$(wc -l <"$VM_OUT/metrics-expected.txt")
# 11 per-priority series x 8, 12 single ones
((nm == 100)) || vm_fail "$nm expected /metrics lines, not 100: the reference is incomplete"

metrics=$VM_OUT/metrics.txt
metrics_match() { # metrics_match FILE: every expected line is there; prints what is not
	# rdma_device (the RDMA port on the netdev) is a label of its own, not ethtool's to show
	grep -Fxvf <(sed -E 's/,rdma_device="[^"]*"//' "$1") "$VM_OUT/metrics-expected.txt" |
		head -n 5 || true
}
# number NAME LABEL=VALUE... EXPECTED: a scaled series equals EXPECTED as a number
number() {
	local want=${*: -1} got
	got=$(rw_metric "$metrics" "${@:1:$#-1}")
	awk -v g="$got" -v w="$want" 'BEGIN { exit !(g != "" && g + 0 == w + 0) }' ||
		vm_fail "/metrics ${*:1:$#-1}: '$got', expected $want"
}

rw_serve_start 9482 --interval 2s --config-interval 10m
rw_fetch /metrics "$metrics"
missing=$(metrics_match "$metrics")
[[ -z $missing ]] || vm_fail "/metrics lacks (or has other values for) what ethtool shows: ${missing//$'\n'/ | }"
number roce_netdev_speed_bytes device="$if" $((speed * 125000))
number roce_pfc_stall_prevention_timeout_seconds device="$if" "$(awk -v t="$tout" 'BEGIN { print t / 1000 }')"
for p in 0 3 7; do
	number roce_pfc_pause_duration_seconds_total device="$if" direction=rx priority=$p \
		"$(jq -r --argjson p $p '.["pfc.rx_pause_duration_us"][$p] / 1e6' "$VM_OUT/expected.json")"
done
vm_log "ok: /metrics has all $nm ethtool-derived series of $if with ethtool's values; speed, pfc-prevention-tout and pause durations scaled right"

# FEC through ethtool netlink (FEC_GET with statistics), as `ethtool -I --show-fec` read it above
fec=$VM_OUT/ethtool-fec.json
number roce_netdev_fec_blocks_total device="$if" outcome=corrected \
	"$(jq '.[0].statistics.corrected_blocks.total' "$fec")"
number roce_netdev_fec_blocks_total device="$if" outcome=uncorrectable \
	"$(jq '.[0].statistics.uncorrectable_blocks.total' "$fec")"
number roce_netdev_fec_corrected_bits_total device="$if" \
	"$(jq '.[0].statistics.corrected_bits.total' "$fec")"
for l in 0 1; do
	number roce_netdev_fec_lane_blocks_total device="$if" outcome=corrected lane=$l \
		"$(jq ".[0].statistics.corrected_blocks.lanes[$l]" "$fec")"
done
number roce_netdev_fec_info device="$if" mode="$(jq -r '.[0].active[0] | ascii_downcase' "$fec")" 1
vm_log "ok: /metrics FEC mode, corrected/uncorrectable blocks, corrected bits and per-lane blocks = ethtool -I --show-fec"

# --- new values under the same names reach /metrics --------------------------------------------
polls() { rw_metric "$1" rocewatch_polls_total loop=fast; }
stats_table 500000 >"$VM_OUT/stats-2.txt"
rw_fetch /metrics "$metrics"
fast0=$(polls "$metrics")
cp "$VM_OUT/stats-2.txt" "$RWNIC_DEBUGFS/$if/stats" || vm_fail "rwnic refused the second stats table"
want3=$(awk '$1 == "rx_prio3_pause" { print $2 }' "$VM_OUT/stats-2.txt")
vm_expect_eq "$(ethtool -S "$if" | awk '$1 == "rx_prio3_pause:" { print $2 }')" "$want3" \
	"ethtool -S rx_prio3_pause after the second table"
for ((i = 0; i < 40; i++)); do
	rw_fetch /metrics "$metrics"
	[[ $(rw_metric "$metrics" roce_pfc_pause_frames_total device="$if" direction=rx priority=3) == "$want3" ]] && break
done
fast1=$(polls "$metrics")
[[ $(rw_metric "$metrics" roce_pfc_pause_frames_total device="$if" direction=rx priority=3) == "$want3" ]] ||
	vm_fail "rx_prio3_pause $want3 not on /metrics after 40 fetches"
((fast1 - fast0 <= 2)) || vm_fail "the new counters took $((fast1 - fast0)) fast polls to reach /metrics"
vm_log "ok: the second table's rx_prio3_pause $want3 on /metrics after $((fast1 - fast0)) fast poll(s)"

# --- carrier flaps ------------------------------------------------------------------------------
metric_is() { # metric_is NAME LABEL=VALUE... WANT: fetch /metrics, compare one series
	rw_fetch /metrics "$metrics"
	[[ $(rw_metric "$metrics" "${@:1:$#-1}") == "${*: -1}" ]]
}
state_is() { metric_is roce_rdma_port_state_info device="$RWN_DEV" port=1 state="$1" 1; }
downs=$(awk '$1 == "link_down_events_phy" { print $2 }' "$VM_OUT/stats-2.txt")
# the kernel's own carrier counts (IFLA_CARRIER_*: issue 25's flap facts) before the flaps
rw_fetch /metrics "$metrics"
changes0=$(rw_metric "$metrics" roce_netdev_carrier_changes_total device="$if")
kdowns0=$(rw_metric "$metrics" roce_netdev_carrier_transitions_total device="$if" to=down)
[[ -n $changes0 && -n $kdowns0 ]] || vm_fail "/metrics has no carrier counts for $if"
for flap in 1 2; do
	vm_rwnic_set "$if" carrier 0
	vm_wait_until 30 "carrier 0 of $if on /metrics" metric_is roce_netdev_carrier device="$if" 0
	vm_wait_until 30 "$RWN_DEV/1 DOWN on /metrics" state_is DOWN
	[[ $(</sys/class/net/$if/carrier) == 0 ]] || vm_fail "sysfs carrier of $if is not 0"
	# A NIC counts the loss of link itself; rwnic's test says so through its table.
	downs=$((downs + 1))
	sed "s/^link_down_events_phy .*/link_down_events_phy $downs/" "$VM_OUT/stats-2.txt" >"$VM_OUT/stats-3.txt"
	cp "$VM_OUT/stats-3.txt" "$RWNIC_DEBUGFS/$if/stats" || vm_fail "rwnic refused the flap's stats table"
	vm_rwnic_set "$if" carrier 1
	vm_wait_until 30 "carrier 1 of $if on /metrics" metric_is roce_netdev_carrier device="$if" 1
	vm_wait_until 30 "$RWN_DEV/1 ACTIVE on /metrics" state_is ACTIVE
	vm_wait_until 30 "link down events $downs on /metrics" \
		metric_is roce_netdev_link_down_events_total device="$if" "$downs"
	vm_log "ok: flap $flap: carrier and $RWN_DEV/1 went down and came back on /metrics; link_down_events $downs"
done
vm_expect_eq "$(rw_metric "$metrics" roce_netdev_carrier_changes_total device="$if")" \
	"$((changes0 + 4))" "carrier changes of $if after two flaps (IFLA_CARRIER_CHANGES)"
vm_expect_eq "$(rw_metric "$metrics" roce_netdev_carrier_transitions_total device="$if" to=down)" \
	"$((kdowns0 + 2))" "carrier downs of $if after two flaps (IFLA_CARRIER_DOWN_COUNT)"
vm_expect_eq "$(cat "/sys/class/net/$if/carrier_changes")" "$((changes0 + 4))" \
	"sysfs carrier_changes of $if"
rw_serve_stop

# --- lossless-roce: passes as configured, each rule fails on its one setting -------------------
rwn_expect_failing "configured node" ""
vm_run ethtool -A "$if" rx on
rwn_expect_failing "global pause RX on" "global_pause_off=fail"
vm_run ethtool -A "$if" rx off
vm_run ethtool --set-tunable "$if" pfc-prevention-tout 0
rwn_expect_failing "storm prevention off" "pfc_storm_prevention=fail"
vm_run ethtool --set-tunable "$if" pfc-prevention-tout 500
echo 0 >"$RWN_CM/ports/1/default_roce_tos"
rwn_expect_failing "rdma_cm default ToS 0" "rdma_cm_tos=fail"
echo 106 >"$RWN_CM/ports/1/default_roce_tos"
vm_run ip link set "$if" mtu 1500
vm_wait_until 20 "$RWN_DEV active_mtu 1024" vm_active_mtu_is "$RWN_DEV" 1024
rwn_expect_failing "MTU 1500" "active_mtu_4096=fail netdev_mtu=fail"
vm_run ip link set "$if" mtu 9000
vm_wait_until 20 "$RWN_DEV active_mtu 4096" vm_active_mtu_is "$RWN_DEV" 4096
vm_rwnic_set "$if" carrier 0
port_down() { [[ $(vm_port_state "$RWN_DEV" 1) == *DOWN ]]; }
vm_wait_until 30 "$RWN_DEV/1 DOWN" port_down
rwn_expect_failing "carrier off" "port_active=fail"
vm_rwnic_set "$if" carrier 1
vm_wait_port_active "$RWN_DEV" 1 30
rwn_expect_failing "restored" ""

vm_pass
