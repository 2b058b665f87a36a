#!/bin/sh
# SPDX-License-Identifier: MIT
# node-problem-detector custom plugin: `rocewatch check` with its Nagios exit
# codes (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN) mapped to NPD's plugin
# protocol (0 OK, 1 NonOK, 2 Unknown), and one line on stdout for the
# condition's message.  A WARNING does not make the node NonOK (as in the Slurm
# prolog, only CRITICAL keeps jobs away); extra arguments go to check, e.g.
#   rocewatch-npd.sh --profile lossless-roce --param roce_priority=5
ROCEWATCH=${ROCEWATCH:-rocewatch}
out=$("$ROCEWATCH" check --format text --color never "$@" 2>&1)
rc=$?
# the last line: "N passed, N failed (...), N unknown, N skipped: STATUS"
last=$(printf '%s\n' "$out" | tail -n 1)
failing=$(printf '%s\n' "$out" | awk '/^  fail +critical +[^ ]/ { printf "%s%s", sep, $3; sep = " " }')
case $rc in
0 | 1)
	echo "rocewatch check: $last"
	exit 0
	;;
2)
	# a failing health rule adds the verdict and what to do ("node verdict: fatal (drain); do: ...")
	verdict=$(printf '%s\n' "$out" | sed -n 's/^node verdict: \(fatal.*\)$/\1/p' | head -n 1)
	echo "rocewatch check CRITICAL: $failing${verdict:+ (node verdict $verdict)}"
	exit 1
	;;
*)
	# 3, or check could not run at all (126/127: not installed)
	echo "rocewatch check could not decide (exit $rc): $last"
	exit 2
	;;
esac
