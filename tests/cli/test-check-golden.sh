#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check's text report against golden files at 80 and 160 columns: the layout
# (verdict first, what is not OK by object, one line for what passed, the
# summary last), wrapping at the width asked for, -q and -v.  Every line of a
# report fits its width.  UPDATE_GOLDEN=1 rewrites the files (review the diff).
. "$(dirname "$0")/../lib.sh"

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
GOLD="$SOURCE_DIR/tests/fixtures/golden"
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
export NO_COLOR=

# golden NAME COLUMNS FIXTURE [ARGS...]
golden() {
	local name=$1 cols=$2 fx=$3 rc=0
	shift 3
	COLUMNS=$cols "$ROCEWATCH" check --from "$FX/$fx" "$@" >"$TMPD/$name.txt" 2>&1 || rc=$?
	echo "exit $rc" >>"$TMPD/$name.txt"
	if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$TMPD/$name.txt" "$GOLD/check-$name.txt"
	fi
	check "check $* on $fx at $cols columns matches golden check-$name.txt" \
		diff -u "$GOLD/check-$name.txt" "$TMPD/$name.txt"
	check "check $* on $fx: every line fits $cols columns" \
		awk -v w="$cols" 'length($0) > w { print FILENAME ":" NR ": " length($0) " columns" > "/dev/stderr"; bad = 1 } END { exit bad }' "$TMPD/$name.txt"
}

golden mtu-1500-80 80 mtu-1500.json
golden mtu-1500-160 160 mtu-1500.json
golden dcb-unsupported-80 80 dcb-unsupported.json
golden dcb-unsupported-160 160 dcb-unsupported.json
golden good-8nic-80 80 good-8nic.json
# a pause storm among nine warnings and two unreadable facts: worst first across objects
golden incident-80 80 incident.json
golden ib-port-80 80 ib-port.json
golden pfc-quiet-80 80 pfc-0-and-3.json -q
golden good-quiet-80 80 good.json --quiet
golden mtu-1500-verbose-160 160 mtu-1500.json -v
golden pod-two-profiles-80 80 pod-bare.json --profile lossless-roce --profile container
# the job section: one line per NCCL variable (its value, NCCL's reading, why), then its rules
golden job-odd-80 80 good.json --nccl-env "$SOURCE_DIR/tests/fixtures/nccl/job-odd.env"

# -q is only what is not OK: no passing row, no fix text, the summary last
quiet() {
	! grep -q '^  pass' "$GOLD/check-pfc-quiet-80.txt" &&
		! grep -q 'Lossless RoCE needs PFC' "$GOLD/check-pfc-quiet-80.txt" &&
		[ "$(wc -l <"$GOLD/check-good-quiet-80.txt")" -eq 2 ]
}
check "-q: the problems and the summary line only (an OK node: one line)" quiet
# the fix text of a rule failing on several objects is printed once, with the device names
dedup() {
	[ "$(grep -c 'The lossless priority dropped packets' "$GOLD/check-incident-80.txt")" -eq 1 ] &&
		grep -q 'fix: as for netdev eth2 above' "$GOLD/check-incident-80.txt" &&
		grep -q 'fix: as for rdma_port mlx5_0 above' "$GOLD/check-incident-80.txt"
}
check "a fix repeated on several NICs is printed once, naming the device" dedup
# a `command` is not broken across lines when it fits on one
check "a backquoted command stays on one line" \
	grep -q '`mlnx_qos -i eth2 --buffer_size`' "$GOLD/check-incident-80.txt"
# an unknown result saw no failure: it never prints the failure's fix
unknown_no_fix() {
	! grep -q 'Fix:\|mlnx_qos\|Lossless RoCE needs PFC' "$GOLD/check-dcb-unsupported-80.txt" &&
		grep -q 'Not decided: this kernel or driver does not provide$' "$GOLD/check-dcb-unsupported-80.txt"
}
check "unknown results say what could not be read, not the fix for a failure" unknown_no_fix
# COLUMNS that is not a number falls back to 80; a terminal's own width is used under script(1)
check "COLUMNS=abc: 80 columns" bash -c \
	"COLUMNS=abc '$ROCEWATCH' check --from '$FX/mtu-1500.json' | cmp -s - <(head -n -1 '$GOLD/check-mtu-1500-80.txt')"
if command -v script >/dev/null && command -v stty >/dev/null; then
	check "a 100-column terminal gets 100 columns" bash -c \
		"script -qec \"stty cols 100; env -u COLUMNS '$ROCEWATCH' check --color never --from '$FX/mtu-1500.json'\" /dev/null | tr -d '\r' | grep -q '^counter rules: decided on 1s of samples (the snapshots), less than their 1h window\$'"
fi
finish
