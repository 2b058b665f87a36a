# SPDX-License-Identifier: MIT
# Shared helpers for the shell test tiers.  Source it; it sets -eu.
set -eu

: "${ROCEWATCH:=${BUILD_DIR:-build}/rocewatch}"
: "${SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
T_NAME=$(basename "$0" .sh)
T_FAILS=0
T_CHECKS=0

skip() { echo "SKIP: $T_NAME: $*"; exit 77; }
die() { echo "FAIL: $T_NAME: $*" >&2; exit 1; }

# check DESCRIPTION COMMAND...: run, count, report; keep going on failure.
check() {
	local what=$1; shift
	T_CHECKS=$((T_CHECKS + 1))
	if "$@"; then
		echo "ok - $what"
	else
		echo "not ok - $what"
		T_FAILS=$((T_FAILS + 1))
	fi
}

finish() {
	echo "$T_NAME: $T_CHECKS checks, $T_FAILS failed"
	[ "$T_FAILS" -eq 0 ]
}

need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || skip "needs $1 (${2:-install it})"; }

# A TCP port nobody listens on, in the given netns (or here).
free_port() {
	python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

# wait_until TIMEOUT_S COMMAND...: poll every 50 ms.
wait_until() {
	local t=$1; shift
	local end=$(( $(date +%s%N) + t * 1000000000 ))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.05
	done
	return 1
}

TMPD=$(mktemp -d /tmp/rocewatch-test.XXXXXX)
T_CLEANUP=()
cleanup() {
	local i
	for ((i = ${#T_CLEANUP[@]} - 1; i >= 0; i--)); do eval "${T_CLEANUP[$i]}" >/dev/null 2>&1 || true; done
	# make_netns runs in $(...): it records its namespaces in a file, not in T_CLEANUP.
	if [ -f "$TMPD/netns" ]; then
		while read -r n; do ip netns del "$n" >/dev/null 2>&1 || true; done <"$TMPD/netns"
	fi
	rm -rf "$TMPD"
}
trap cleanup EXIT
on_exit() { T_CLEANUP+=("$*"); }

# spawn_listener LOG CMD [ARG...]: run CMD in the background with the argument PORT made a
# free port, output to LOG, until LOG has the line "ready" (it listens); when it died first
# (the port taken between free_port and its bind, by another test or by the next one
# started here), again on another port, five tries.  Sets SPAWNED_PORT and SPAWNED_PID;
# 1 when it never came up.  "ready" alone on its line: a bind error's "Address already in
# use" has the word too, and once passed for a fake that had died.
spawn_listener() {
	local log=$1 try i p
	shift
	for try in 1 2 3 4 5; do
		p=$(free_port)
		"${@/#PORT/$p}" >"$log" 2>&1 &
		SPAWNED_PID=$!
		SPAWNED_PORT=$p
		for ((i = 0; i < 400; i++)); do
			grep -qx ready "$log" && return 0
			kill -0 "$SPAWNED_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill "$SPAWNED_PID" 2>/dev/null
		wait "$SPAWNED_PID" 2>/dev/null
	done
	return 1
}
# stop_at_exit PID: kill a background daemon of this shell and wait for it to end, so
# what it writes as it shuts down (Alertmanager's state, a TSDB's head) is written before
# $TMPD is removed: `rm -rf` racing a daemon's last files fails the test after its checks.
stop_at_exit() { T_CLEANUP+=("kill $1; wait $1"); }

# Make a private network namespace; echo its name.
make_netns() {
	local ns="rwt-$1-$$"
	ip netns add "$ns" || skip "cannot create a network namespace"
	echo "$ns" >>"$TMPD/netns"
	ip -n "$ns" link set lo up
	echo "$ns"
}
