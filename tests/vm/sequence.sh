#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Several scenarios in one boot: run-scenario runs this as the scenario, with the scenario
# files as its arguments, so a boot (4-5 s of TCG per guest) is paid once per group instead of
# once per scenario:
#
#     tests/vm/run-scenario --guests 2 tests/vm/sequence.sh tests/vm/scenarios/a.sh b.sh
#
# Each part runs in its own process with its own output directory, $VM_RESULTS/guestN/PART/
# (VM_OUT, RESULT_FILE and the rendezvous markers live there, so a marker of one part never
# satisfies a wait of another, and a peer's failure is seen by the part it happened in). A part
# must leave the guest as it found it (its own device names, an EXIT trap that removes them),
# because the next part runs on the same kernel. Every part runs even when an earlier one failed,
# so one run reports every broken scenario. Outcomes go to $VM_OUT/parts, one line per part,
# which run-scenario prints; the group passes when no part failed and at least one passed.
#
# VM_PART_TIMEOUT (seconds, default 120) limits each part; the group's own limit is the
# run-scenario --timeout.

set -uo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"

(($# >= 1)) || vm_fail "sequence: no scenario files given"

group_out=$VM_OUT
group_result=$RESULT_FILE
summary=$group_out/parts
: >"$summary"
n_pass=0 n_fail=0 n_skip=0
failed=()

for part in "$@"; do
	[[ $part == /* ]] || part=$ROCEWATCH_SRCDIR/$part
	name=$(basename "$part" .sh)
	if [[ ! -r $part ]]; then
		printf 'FAIL %s: no such scenario file %s\n' "$name" "$part" >>"$summary"
		n_fail=$((n_fail + 1))
		failed+=("$name")
		continue
	fi
	export VM_PART=$name
	export VM_OUT=$group_out/$name
	export RESULT_FILE=$VM_OUT/result
	mkdir -p "$VM_OUT"
	: >"$RESULT_FILE"
	vm_log "=== part $name"
	start=$SECONDS
	rc=0
	timeout -k 5 "${VM_PART_TIMEOUT:-120}" bash "$part" 2>&1 | tee "$VM_OUT/scenario.log" >&2
	rc=${PIPESTATUS[0]}
	took=$((SECONDS - start))
	last=$(grep '^RESULT: ' "$RESULT_FILE" | tail -n 1)
	case $rc in
	0) [[ $last == "RESULT: FAIL"* ]] || last="RESULT: PASS" ;;
	77) [[ $last == "RESULT: SKIP"* ]] || last="RESULT: SKIP scenario exited 77" ;;
	*)
		if ((rc == 124 && took >= ${VM_PART_TIMEOUT:-120} - 1)); then
			last="RESULT: FAIL timed out after ${VM_PART_TIMEOUT:-120}s"
		elif [[ $last != "RESULT: FAIL"* ]]; then
			last="RESULT: FAIL exited with status $rc"
		fi
		;;
	esac
	# The part's verdict, as the peer's waits look for it; one line for the summary.
	printf '%s\n' "$last" >>"$RESULT_FILE"
	last=${last#RESULT: }
	last=${last//$'\n'/ }
	case $last in
	PASS) n_pass=$((n_pass + 1)); printf 'PASS %s (%ss)\n' "$name" "$took" >>"$summary" ;;
	SKIP*) n_skip=$((n_skip + 1)); printf 'SKIP %s (%ss): %s\n' "$name" "$took" "${last#SKIP }" >>"$summary" ;;
	*)
		n_fail=$((n_fail + 1))
		failed+=("$name")
		printf 'FAIL %s (%ss): %s\n' "$name" "$took" "${last#FAIL }" >>"$summary"
		;;
	esac
	vm_log "=== part $name: $last (${took}s)"
done

export VM_OUT=$group_out RESULT_FILE=$group_result
unset VM_PART
cat "$summary" >&2
if ((n_fail)); then
	vm_fail "$n_fail of $# failed: ${failed[*]}"
elif ((n_pass == 0)); then
	vm_skip "every part skipped: $(tr '\n' ';' <"$summary")"
fi
vm_pass
