#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every text a person reads fits the terminal: --help of every command, fleet
# check's report (golden at 80 columns) and the collectors list follow COLUMNS,
# else the terminal's width, else 80 -- as check's report does
# (test-check-golden.sh).  report and replay are checked on a live recording in
# tests/recorder/test-recorder.sh.  UPDATE_GOLDEN=1 rewrites the golden file.
. "$(dirname "$0")/../lib.sh"

GOLD="$SOURCE_DIR/tests/fixtures/golden"
FLEET="$SOURCE_DIR/tests/fixtures/snapshots/fleet"
export NO_COLOR=

# fits WIDTH FILE: no line of FILE is wider than WIDTH
fits() {
	awk -v w="$1" 'length($0) > w { print FILENAME ":" NR ": " length($0) " columns" > "/dev/stderr"; bad = 1 }
		END { exit bad }' "$2"
}

for cmd in "" serve check snapshot rules "rules lint" "rules list" fleet "fleet check" probe \
	report replay export; do
	# shellcheck disable=SC2086 # cmd is a list of words
	env -u COLUMNS "$ROCEWATCH" $cmd --help >"$TMPD/help.txt" 2>&1
	check "rocewatch $cmd --help: 80 columns without COLUMNS" fits 80 "$TMPD/help.txt"
done
# the collectors' lines follow COLUMNS: wrapped at 80, one line each at 200
wide_help() {
	COLUMNS=200 "$ROCEWATCH" serve --help >"$TMPD/wide.txt" &&
		grep -Eq '^  ethtool +\[on\] +driver stats.*\(SIOCETHTOOL \+ ethtool genetlink\)$' "$TMPD/wide.txt" &&
		env -u COLUMNS "$ROCEWATCH" serve --help | grep -Eq '^ {23}[a-z(]'
}
check "the collectors list follows COLUMNS (one line each at 200, wrapped at 80)" wide_help

# fleet check over the fleet fixtures: a golden at 80 columns (the gathering time masked)
fleet_golden() {
	local rc=0
	env -u COLUMNS "$ROCEWATCH" fleet check --color never "$FLEET"/*.json >"$TMPD/fleet.txt" 2>&1 || rc=$?
	echo "exit $rc" >>"$TMPD/fleet.txt"
	sed -i -E 's/ \([0-9]+\.[0-9]+ s\)$/ (T s)/' "$TMPD/fleet.txt"
	if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$TMPD/fleet.txt" "$GOLD/fleet-check-80.txt"
	fi
	diff -u "$GOLD/fleet-check-80.txt" "$TMPD/fleet.txt"
}
check "fleet check at 80 columns matches golden fleet-check-80.txt" fleet_golden
check "fleet check: every line fits 80 columns" fits 80 "$TMPD/fleet.txt"
check "fleet check: the verdict is the last line, short" bash -c \
	"[ \"\$(tail -2 '$TMPD/fleet.txt' | head -1)\" = '9 nodes, 0 unknown: CRITICAL' ]"
# wide enough, a row's text sits beside its name (one line per rule)
fleet_wide() {
	COLUMNS=250 "$ROCEWATCH" fleet check --color never "$FLEET"/*.json >"$TMPD/fleet-wide.txt" 2>&1
	grep -Eq '^  fail +critical +netdev_mtu \(rail 0\) +8 nodes 9000, gpu017 1500$' "$TMPD/fleet-wide.txt" &&
		fits 250 "$TMPD/fleet-wide.txt"
}
check "fleet check at 250 columns: one line per rule" fleet_wide
finish
