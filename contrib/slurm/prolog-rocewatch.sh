#!/bin/sh
# SPDX-License-Identifier: MIT
# Slurm prolog: refuse to start a job on a node whose RoCE configuration is
# wrong.  `rocewatch check` exits 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
# A non-zero prolog exit drains the node; only CRITICAL should do that.
out=$(rocewatch check --format text 2>&1)
rc=$?
case $rc in
0 | 1) exit 0 ;;
2)
	echo "rocewatch: RoCE configuration critical on $(hostname):" >&2
	echo "$out" >&2
	exit 1
	;;
*)
	echo "rocewatch: check could not run (exit $rc): $out" >&2
	exit 0
	;;
esac
