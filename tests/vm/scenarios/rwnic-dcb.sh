#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One guest, issue 27: the DCB facts rocewatch reads, produced by the kernel's own dcbnl code
# (net/dcb/dcbnl.c) over a real driver (the test-only rwnic, tests/vm/rwnic/) with soft-RoCE on
# top, judged against iproute2's `dcb`:
#  - `dcb` sets PFC (on 3, delay 4096), ETS, the APP table (DSCP 26 -> 3, 48 -> 6), buffers,
#    maxrate and DCBX; the driver's PFC requests/indications come from its debugfs. rocewatch's
#    snapshot fields (pfc.*, ets.* with the TC max rates, dscp2prio, trust, dcbx.*, buffer.*)
#    equal `dcb -j [-s] ... show`, value for value, and so do the series on /metrics;
#  - rwnic's debugfs contract (tests/vm/rwnic/README.md): bad writes to each file get EINVAL
#    and leave the state as it was;
#  - a `dcb` change reaches /metrics with no poll in between (the RTNLGRP_DCB notification's
#    event pass: both loops are set to 10 minutes, so nothing else could bring it);
#  - the lossless-roce profile passes on the node so configured, and its DCB rules fail one by
#    one when `dcb` breaks their one setting (PFC on the wrong priority, DSCP 26 or 48 mapped
#    elsewhere, no DSCP map at all = trust pcp, DCBX managed by firmware).
#
# Run alone: tests/vm/run-scenario tests/vm/scenarios/rwnic-dcb.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"
# shellcheck source=tests/vm/rwnic-lib.sh
. "${VM_LIB%/*}/rwnic-lib.sh"

trap rwn_cleanup EXIT
vm_rwnic_load 1

# --- rwnic's own contract: a bad write is refused with EINVAL and changes nothing ---------------
# bash's stdout is line-buffered, so its printf writes a line per write(2): a text of several
# lines goes through cat, one write(2) for all of it. $(<file) reads back without an exec.
d=$RWNIC_DEBUGFS/$RWN_IF
bad=0
refused() { # refused FILE TEXT: the write must fail and the file read the same as before
	local before after err
	before=$(<"$d/$1")
	if [[ $2 == *'\n'?* ]]; then
		printf '%b' "$2" >"$VM_OUT/bad-write.txt"
		err=$(cat "$VM_OUT/bad-write.txt" 2>&1 >"$d/$1") && vm_fail "rwnic accepted '$2' in $1"
	elif err=$( { printf '%b' "$2" >"$d/$1"; } 2>&1); then
		vm_fail "rwnic accepted '$2' in $1"
	fi
	[[ $err == *"Invalid argument"* ]] || vm_fail "rwnic refused '$2' in $1 with '$err', not EINVAL"
	after=$(<"$d/$1")
	[[ $after == "$before" ]] || vm_fail "rwnic refused '$2' in $1 but changed it: '$before' -> '$after'"
	bad=$((bad + 1))
}
printf 'a 1\nb 2\n' >"$d/stats" || vm_fail "rwnic refused a good stats table"
printf 'rx_frames 3\n' >"$d/pause" || vm_fail "rwnic refused a good pause write"
printf 'corrected 9\nlane1_corrected 4\n' >"$d/fec" || vm_fail "rwnic refused a good fec write"
for t in 2 on '1 1' '0\n1' ' '; do refused carrier "$t"; done
for t in 0 abc -5 '100 200' 4294967296; do refused speed "$t"; done
for t in rx_frames 'rx_frames x' 'bogus 1' 'tx_frames 5\nbogus 1' 'rx_frames -1' 'rx_frames 1 2'; do
	refused pause "$t"
done
for t in 'lane8_corrected 1' 'lane03_corrected 1' 'lane1_corrected_x 1' 'corrected 1\nuncorrectable -1' \
	'corrected_bits'; do
	refused fec "$t"
done
for t in 'requests 1 2 3' 'requests 1 2 3 4 5 6 7 8 9' 'indications 1 2 3 4 5 6 7 8\nrequests x 2 3 4 5 6 7 8' \
	'requests' 'pause 1 2 3 4 5 6 7 8'; do
	refused pfc "$t"
done
for t in 'name_without_value\n' 'a 1\na 2\n' 'this_name_is_longer_than_31_chars 1\n' 'x 1\ny z\n' '\n'; do
	refused stats "$t"
done
vm_expect_eq "$(<"$d/stats")" $'a 1\nb 2' "rwnic stats after the refused writes"
vm_expect_eq "$(<"$d/fec")" $'corrected 9\nuncorrectable 0\ncorrected_bits 0\nlane0_corrected 0\nlane1_corrected 4' \
	"rwnic fec after the refused writes"
vm_log "ok: rwnic refused $bad bad writes with EINVAL, its state unchanged"
# The table is replaced by one with other names, and a write with the same names moves values.
printf 'x 5\n' >"$d/stats" || vm_fail "rwnic refused a one-line table"
vm_expect_eq "$(<"$d/stats")" "x 5" "rwnic stats replaced by other names"

rwn_port_up
rwn_configure_lossless
if=$RWN_IF
vm_rwnic_set "$if" pfc "requests 0 0 0 17 0 0 2 0
indications 0 0 0 5 0 0 0 0"

# --- the reference: dcb's own reading of the kernel ---------------------------------------------
ref() { # ref NAME OBJECT [dcb options]: dcb -j [opts] OBJECT show dev IF > $VM_OUT/dcb-NAME.json
	local name=$1 obj=$2
	shift 2
	dcb -j "$@" "$obj" show dev "$if" >"$VM_OUT/dcb-$name.json" 2>&1 ||
		vm_fail "dcb -j $* $obj show dev $if: $(head -c 300 "$VM_OUT/dcb-$name.json")"
}
ref pfc pfc -s
ref ets ets
ref app app
ref buffer buffer
ref maxrate maxrate
ref dcbx dcbx
# The values this scenario set must be what dcb reads back, or the comparisons below prove
# nothing about rocewatch.
got=$(jq -c '[.prio_pfc, .delay, .requests, .indications]' "$VM_OUT/dcb-pfc.json")
vm_expect_eq "$got" '[[false,false,false,true,false,false,false,false],4096,[0,0,0,17,0,0,2,0],[0,0,0,5,0,0,0,0]]' \
	"dcb -s pfc show: prio_pfc, delay, requests, indications"
vm_expect_eq "$(jq -c .dscp_prio "$VM_OUT/dcb-app.json")" '[[26,3],[48,6]]' "dcb app show: dscp_prio"
vm_expect_eq "$(jq -c '[.prio_tc, .tc_bw, .tc_tsa[0:3]]' "$VM_OUT/dcb-ets.json")" \
	'[[0,0,0,1,0,0,2,0],[40,60,0,0,0,0,0,0],["ets","ets","strict"]]' "dcb ets show: prio_tc, tc_bw, tc_tsa"
vm_expect_eq "$(jq -c '[.prio_buffer, [.buffer_size[] > 0]]' "$VM_OUT/dcb-buffer.json")" \
	'[[0,0,0,1,0,0,2,0],[true,true,true,false,false,false,false,false]]' \
	"dcb buffer show: prio_buffer, which buffers have a size"
vm_expect_eq "$(jq -c .tc_maxrate "$VM_OUT/dcb-maxrate.json")" '[0,0,3125000000,0,0,0,0,0]' \
	"dcb maxrate show: tc_maxrate (bytes/s as dcb prints it)"
# The kernel's tc_maxrate is kbit/s (mlx5e_dcbnl_ieee_getmaxrate). iproute2 before 6.18 passed
# the rate it parsed (bytes/s) and printed the kernel's number unconverted, so with it the
# kernel holds 3125000000 kbit/s; from 6.18 (e7d4c060, "dcb: fix tc-maxrate unit conversions")
# it divides by 125 on set and multiplies on show. Both print 3125000000 for 25Gbit: which
# one ran decides what the driver holds.
[[ $(dcb -V 2>&1) =~ iproute2-([0-9]+)\.([0-9]+) ]] || vm_fail "cannot tell dcb's version: $(dcb -V 2>&1)"
dcb_kbps=1
((BASH_REMATCH[1] > 6 || (BASH_REMATCH[1] == 6 && BASH_REMATCH[2] >= 18))) && dcb_kbps=125
vm_log "dcb is iproute2 ${BASH_REMATCH[1]}.${BASH_REMATCH[2]}: the kernel's kbit/s are dcb's tc_maxrate / $dcb_kbps"

# jq: the dcb JSON files as $pfc, $ets, $maxrate, $app, $buffer, $dcbx.
refs=(--slurpfile pfc "$VM_OUT/dcb-pfc.json" --slurpfile ets "$VM_OUT/dcb-ets.json"
	--slurpfile maxrate "$VM_OUT/dcb-maxrate.json"
	--slurpfile app "$VM_OUT/dcb-app.json" --slurpfile buffer "$VM_OUT/dcb-buffer.json"
	--slurpfile dcbx "$VM_OUT/dcb-dcbx.json")
# rocewatch field -> the value dcb shows, in rocewatch's encoding.
expect='
def tsa: {"strict": 0, "cbs": 1, "ets": 2, "vendor": 255}[.];
($pfc[0]) as $p | ($ets[0]) as $e | ($maxrate[0]) as $r | ($app[0]) as $a | ($buffer[0]) as $b |
($dcbx[0]) as $x |
{
  "pfc.enabled": [$p.prio_pfc | to_entries[] | select(.value) | .key],
  "pfc.cap": $p.pfc_cap,
  "pfc.delay": $p.delay,
  "pfc.requests": $p.requests,
  "pfc.indications": $p.indications,
  "ets.prio_tc": $e.prio_tc,
  "ets.tc_tsa": [$e.tc_tsa[] | tsa],
  "ets.tc_bw": $e.tc_bw,
  "ets.tc_maxrate_kbps": [$r.tc_maxrate[] / $per],
  "dscp2prio": ($a.dscp_prio | map({key: (.[0] | tostring), value: .[1]}) | from_entries),
  "trust": (if ($a.dscp_prio | length) > 0 then "dscp" else "pcp" end),
  "dcbx.mode": ([["host", "host"], ["lld_managed", "lld"], ["cee", "cee"], ["ieee", "ieee"],
                 ["static", "static"]] | map(select($x[.[0]] == true) | .[1]) | join(",")),
  "dcbx.host": ($x.host == true),
  "buffer.prio_buffer": $b.prio_buffer,
  "buffer.size": $b.buffer_size,
  "buffer.total": $b.total_size
}'

want=$VM_OUT/expected.json
jq -n "${refs[@]}" --argjson per "$dcb_kbps" "$expect" >"$want" || vm_fail "reading dcb's JSON failed (see $VM_OUT/dcb-*.json)"

snap=$VM_OUT/snapshot.json
rw_snapshot "$snap"
diff=$(rw_jq "$snap" --slurpfile w "$want" --arg n "$if" 'netdev($n) as $o |
	[$w[0] | to_entries[] | field($o; .key) as $got | select($got != .value) |
	 "\(.key): rocewatch \($got | tojson) dcb \(.value | tojson)"] | join("; ")')
[[ -z $diff ]] || vm_fail "snapshot of $if differs from dcb: $diff"
vm_log "ok: snapshot $if pfc.{enabled,cap,delay,requests,indications}, ets.{prio_tc,tc_tsa,tc_bw,tc_maxrate_kbps}, dscp2prio, trust, dcbx.{mode,host}, buffer.{prio_buffer,size,total} = dcb"

# --- /metrics: the same values, as the exporter renders them -----------------------------------
# Every series of the expected set must be on /metrics exactly (name, labels in rocewatch's
# order, value); one grep decides.
jq -r --arg n "$if" '"device=\"\($n)\"" as $d |
	def prio($name; $lab; $arr): $arr | to_entries[] | "\($name){\($d),\($lab)=\"\(.key)\"} \(.value)";
	prio("roce_pfc_enabled"; "priority"; [range(8) as $i | if (.["pfc.enabled"] | index($i)) then 1 else 0 end]),
	"roce_pfc_capable_priorities{\($d)} \(.["pfc.cap"])",
	"roce_pfc_delay_allowance{\($d)} \(.["pfc.delay"])",
	prio("roce_pfc_requests_total"; "priority"; .["pfc.requests"]),
	prio("roce_pfc_indications_total"; "priority"; .["pfc.indications"]),
	prio("roce_ets_priority_tc"; "priority"; .["ets.prio_tc"]),
	prio("roce_ets_tc_tsa"; "tc"; .["ets.tc_tsa"]),
	prio("roce_ets_tc_bandwidth_percent"; "tc"; .["ets.tc_bw"]),
	prio("roce_ets_tc_max_rate_bytes"; "tc"; [.["ets.tc_maxrate_kbps"][] * 125]),
	(.dscp2prio | to_entries[] | "roce_dscp_priority{\($d),dscp=\"\(.key)\"} \(.value)"),
	"roce_qos_trust_info{\($d),trust=\"\(.trust)\"} 1",
	"roce_dcbx_mode_info{\($d),mode=\"\(.["dcbx.mode"])\"} 1",
	"roce_dcbx_host_managed{\($d)} \(if .["dcbx.host"] then 1 else 0 end)",
	prio("roce_dcb_priority_buffer"; "priority"; .["buffer.prio_buffer"]),
	prio("roce_dcb_buffer_size_bytes"; "buffer"; .["buffer.size"]),
	"roce_dcb_buffer_total_bytes{\($d)} \(.["buffer.total"])"' "$want" >"$VM_OUT/metrics-expected.txt" ||
	vm_fail "building the expected /metrics lines failed"
n=$(wc -l <"$VM_OUT/metrics-expected.txt")
# 9 x 8 per-priority/TC/buffer series, 2 DSCP entries, 6 single ones
((n == 80)) || vm_fail "$n expected /metrics lines, not 80: the reference is incomplete"

# Both loops at 10 minutes: after the first poll only a notification's event pass can change
# /metrics. (An event pass makes the next tick a configuration poll, by design: with a 2 s tick
# a guest slower than that between `dcb` and the fetch saw that poll and failed the test.)
rw_serve_start 9481 --interval 10m --config-interval 10m
metrics=$VM_OUT/metrics.txt
rw_fetch /metrics "$metrics"
# a netdev that carries an RDMA port has its rdma_device label too (README: joins): checked
# once here, then left out of the value-for-value comparison
grep -q "^roce_pfc_enabled{device=\"$if\",rdma_device=\"rxe_rw\"," "$metrics" ||
	vm_fail "/metrics: $if's series lack rdma_device=\"rxe_rw\""
missing=$(grep -Fxvf <(sed -E 's/,rdma_device="[^"]*"//' "$metrics") "$VM_OUT/metrics-expected.txt" |
	head -n 5) || true
if [[ -n $missing ]]; then
	for m in $(sed 's/{.*//' <<<"$missing" | sort -u); do
		grep "^$m{device=\"$if\"" "$metrics" | head -n 3 >&2 || true
	done
	vm_fail "/metrics lacks (or has other values for) what dcb shows: ${missing//$'\n'/ | }"
fi
vm_log "ok: /metrics has all $n DCB series of $if with dcb's values"

# --- a dcb change reaches /metrics within one fast poll ------------------------------------------
polls() { rw_metric "$1" rocewatch_polls_total loop="$2"; }
fast0=$(polls "$metrics" fast) slow0=$(polls "$metrics" slow)
ev0=$(rw_metric "$metrics" rocewatch_event_passes_total)
[[ -n $fast0 && -n $slow0 && -n $ev0 ]] ||
	vm_fail "/metrics has no rocewatch_polls_total{loop=fast|slow} or rocewatch_event_passes_total"
rwn_dcb pfc set dev "$if" prio-pfc 4:on
seen=0
for ((i = 0; i < 40; i++)); do
	rw_fetch /metrics "$metrics"
	if [[ $(rw_metric "$metrics" roce_pfc_enabled device="$if" priority=4) == 1 ]]; then
		seen=1
		break
	fi
done
fast1=$(polls "$metrics" fast) slow1=$(polls "$metrics" slow)
ev1=$(rw_metric "$metrics" rocewatch_event_passes_total)
((seen)) || vm_fail "PFC on priority 4 not on /metrics after 40 fetches (fast polls $fast0 -> $fast1, slow $slow0 -> $slow1)"
# The notification brings an event pass (the dcb collector re-reads, not a poll: issue 39).
# Without the notification path the change would wait for a poll, 10 minutes away, and 40
# fetches would not see it.
((fast1 == fast0)) ||
	vm_fail "the dcb change reached /metrics after $((fast1 - fast0)) fast polls, not by its event pass alone"
((ev1 > ev0)) || vm_fail "the dcb change is on /metrics but no event pass ran ($ev0 -> $ev1)"
((slow1 == slow0)) || vm_fail "the dcb change took a slow poll ($slow0 -> $slow1), not an event pass"
vm_log "ok: dcb pfc change on /metrics with no poll (fast $fast0 -> $fast1, slow $slow0 -> $slow1), event passes $ev0 -> $ev1 (the RTNLGRP_DCB path; both loops 10m)"
rwn_dcb pfc set dev "$if" prio-pfc 4:off
rw_serve_stop

# --- lossless-roce: passes as configured, each DCB rule fails on its one setting ------------------
rwn_expect_failing "configured node" ""
rwn_dcb pfc set dev "$if" prio-pfc 3:off 5:on
rwn_expect_failing "PFC on 5 instead of 3" "pfc_only_on_roce_priority=fail"
rwn_dcb pfc set dev "$if" prio-pfc 3:on 5:off
rwn_dcb app replace dev "$if" dscp-prio 26:2
rwn_expect_failing "DSCP 26 -> 2" "roce_dscp_to_roce_priority=fail"
rwn_dcb app replace dev "$if" dscp-prio 26:3 48:5
rwn_expect_failing "DSCP 48 -> 5" "cnp_dscp_to_cnp_priority=fail"
# No DSCP entry at all: the device trusts PCP, and no DSCP maps anywhere.
rwn_dcb app del dev "$if" dscp-prio 26:3 48:5
rwn_expect_failing "no DSCP map (trust pcp)" \
	"cnp_dscp_to_cnp_priority=fail roce_dscp_to_roce_priority=fail trust_dscp=fail"
rwn_dcb app add dev "$if" dscp-prio 26:3 48:6
rwn_dcb dcbx set dev "$if" lld-managed ieee
rwn_expect_failing "DCBX managed by firmware" "dcbx_host_managed=fail"
rwn_dcb dcbx set dev "$if" host ieee
rwn_expect_failing "restored" ""

vm_pass
