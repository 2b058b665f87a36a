# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Helpers for scenarios running inside a vm-tier guest. A scenario starts with
#     . "$VM_LIB"
# and ends with vm_pass (or just exits 0). The environment it runs in is described in
# tests/vm/README.md (GUEST_ID, GUEST_IP, PEER_IP, VM_RESULTS, VM_OUT, RESULT_FILE, ROCEWATCH...).

# vm_log MSG...: a timestamped line (guest uptime) on stderr, which reaches the console log.
vm_log() {
	local up _
	read -r up _ </proc/uptime
	printf '[%7ss guest%s] %s\n' "$up" "${GUEST_ID:-?}" "$*" >&2
}

# vm_result WORD MSG: append a RESULT: line; the last one wins on the host.
vm_result() {
	printf 'RESULT: %s\n' "$*" >>"$RESULT_FILE"
}

vm_fail() {
	vm_log "FAIL: $*"
	vm_result "FAIL $*"
	exit 1
}

vm_skip() {
	vm_log "SKIP: $*"
	vm_result "SKIP $*"
	exit 77
}

vm_pass() {
	vm_log "PASS"
	vm_result "PASS"
	exit 0
}

# vm_run CMD...: run a command, logging it; fail the scenario with its output when it fails.
vm_run() {
	local out rc=0
	vm_log "+ $*"
	out=$("$@" 2>&1) || rc=$?
	[[ -z $out ]] || printf '%s\n' "$out" >&2
	((rc == 0)) || vm_fail "'$*' exited $rc${out:+: ${out//$'\n'/ / }}"
}

# vm_expect_eq ACTUAL EXPECTED WHAT
vm_expect_eq() {
	[[ $1 == "$2" ]] || vm_fail "$3: got '$1', expected '$2'"
	vm_log "ok: $3 = $1"
}

# vm_wait_until TIMEOUT_S WHAT CMD...: poll CMD every 0.2 s (VM_WAIT_PERIOD) until it succeeds,
# or fail. A CMD that costs CPU (curl, jq) competes with what it waits for on the one vCPU, so
# such waits poll less often.
vm_wait_until() {
	local timeout=$1 what=$2 deadline
	shift 2
	deadline=$((SECONDS + timeout))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || vm_fail "timed out after ${timeout}s waiting for $what"
		vm_peer_failed && vm_fail "peer failed while waiting for $what: $(vm_peer_result | sed "s/^RESULT: FAIL //")"
		sleep "${VM_WAIT_PERIOD:-0.2}"
	done
}

# --- two-guest rendezvous -------------------------------------------------------------------
# Both guests mount the same host directory ($VM_RESULTS, 9p without caching); a marker is a file
# $VM_RESULTS/guestN/mark.NAME, created by rename so the peer never sees it half written.

vm_peer_id() { printf '%d\n' $((1 - GUEST_ID)); }

# vm_guest_dir ID: guest ID's output directory for the scenario running now. Under
# tests/vm/sequence.sh each part has its own ($VM_PART), so markers and results of one part
# never answer a wait in another.
vm_guest_dir() { printf '%s\n' "$VM_RESULTS/guest$1${VM_PART:+/$VM_PART}"; }

vm_peer_result() {
	local f
	f=$(vm_guest_dir "$(vm_peer_id)")/result
	[[ -f $f ]] && grep '^RESULT: ' "$f" | tail -n 1
}

# vm_peer_failed: true once a peer has recorded a failure (so waits end early).
vm_peer_failed() {
	local j f
	((${GUEST_COUNT:-1} > 1)) || return 1
	for ((j = 0; j < GUEST_COUNT; j++)); do
		((j == GUEST_ID)) && continue
		f=$(vm_guest_dir "$j")/result
		[[ -f $f && $(grep '^RESULT: ' "$f" | tail -n 1) == "RESULT: FAIL"* ]] && return 0
	done
	return 1
}

# vm_perftest_ran RC FILE...: a perftest run (ib_write_bw ...) whose exit code is RC and whose
# output, and its peer's, are the FILEs ran its transfer.  Besides success, that is a run whose
# report alone failed on either side: perftest times a run in CPU cycles calibrated against
# usleep by a linear fit, which TCG's jittery clock can miss ("Correlation coefficient r^2:
# 0.58 < 0.9", "Can't produce a report", exit 1) after the traffic went, and the other side
# then fails the last exchange.  What the traffic did is judged by the counters, as the
# scenarios do next.
vm_perftest_ran() {
	local rc=$1 f
	shift
	((rc == 0)) && return 0
	for f in "$@"; do
		[[ -f $f ]] && grep -q "Can't produce a report" "$f" || continue
		vm_log "note: $f: perftest could not calibrate its clock under TCG ($(grep -m1 -o 'r^2: [0-9.]*' "$f")); the traffic is judged by the counters"
		return 0
	done
	return 1
}

# vm_mark NAME [TEXT]: tell the peer we reached NAME.
vm_mark() {
	local f=$VM_OUT/mark.$1
	printf '%s\n' "${2:-$1}" >"$f.tmp" && mv -f "$f.tmp" "$f"
	vm_log "mark $1"
}

vm_has_mark() { [[ -f $(vm_guest_dir "$1")/mark.$2 ]]; }

# vm_wait_mark GUEST NAME [TIMEOUT_S]: wait for guest GUEST to reach NAME.
vm_wait_mark() {
	vm_log "waiting for guest$1 to reach $2"
	vm_wait_until "${3:-60}" "guest$1 mark $2" vm_has_mark "$1" "$2"
}

# vm_barrier NAME [TIMEOUT_S]: mark NAME and wait until every peer has marked it too.
vm_barrier() {
	local j
	vm_mark "$1"
	for ((j = 0; j < ${GUEST_COUNT:-1}; j++)); do
		((j == GUEST_ID)) || vm_wait_mark "$j" "$1" "${2:-60}"
	done
}

vm_ping_once() {
	if command -v ping >/dev/null; then
		ping -c 1 -W 1 "$1"
	else
		/bin/busybox ping -c 1 -W 1 "$1"
	fi
}

# vm_wait_ping IP [TIMEOUT_S]: wait until IP answers ping.
vm_wait_ping() {
	vm_log "waiting for $1 to answer ping"
	vm_wait_until "${2:-30}" "ping $1" vm_ping_once "$1"
}

# --- RDMA -----------------------------------------------------------------------------------

vm_port_state() { cat "/sys/class/infiniband/$1/ports/${2:-1}/state" 2>/dev/null; }

vm_port_is_active() { [[ $(vm_port_state "$1" "${2:-1}") == *ACTIVE* ]]; }

# vm_wait_port_active DEV [PORT] [TIMEOUT_S]
vm_wait_port_active() {
	vm_wait_until "${3:-30}" "$1/${2:-1} ACTIVE" vm_port_is_active "$1" "${2:-1}"
	vm_log "ok: $1/${2:-1} is $(vm_port_state "$1" "${2:-1}")"
}

# vm_active_mtu DEV [PORT]: active_mtu as ibv_devinfo reports it, in bytes ("1024").
vm_active_mtu() {
	ibv_devinfo -d "$1" -i "${2:-1}" | awk '$1 == "active_mtu:" { print $2; exit }'
}

# vm_active_mtu_is DEV MTU: for vm_wait_until, since rxe follows MTU changes from a notifier.
vm_active_mtu_is() { [[ $(vm_active_mtu "$1") == "$2" ]]; }

# vm_gid_ipv4 IP: the IPv4-mapped GID of IP, as sysfs spells it.
vm_gid_ipv4() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$a" "$b" "$c" "$d"
}

# vm_gid_at DEV PORT INDEX: the GID in that table slot.
vm_gid_at() { cat "/sys/class/infiniband/$1/ports/$2/gids/$3" 2>/dev/null; }

vm_gid_is() { [[ $(vm_gid_at "$1" "$2" "$3") == "$4" ]]; }

# vm_listening TCPPORT: something in this guest listens on TCPPORT.
vm_listening() { [[ -n $(ss -Htln "( sport = :$1 )" 2>/dev/null) ]]; }

# vm_wait_listening TCPPORT [TIMEOUT_S]
vm_wait_listening() {
	vm_wait_until "${2:-30}" "a listener on tcp port $1" vm_listening "$1"
}

# --- rwnic (tests/vm/rwnic/README.md) --------------------------------------------------------

# vm_rwnic_load [PAIRS]: load the test-only rwnic module run-scenario built for this kernel
# (rwnic0 <-> rwnic1, ...), or skip the scenario with the reason it could not be built. Its
# control files are then under $RWNIC_DEBUGFS/<ifname>/.
RWNIC_DEBUGFS=/sys/kernel/debug/rwnic
vm_rwnic_load() {
	[[ -n ${VM_RWNIC_KO:-} ]] || vm_skip "rwnic: ${VM_RWNIC_SKIP:-not built (no vm_rwnic_load in the scenario run-scenario was given?)}"
	[[ -d $RWNIC_DEBUGFS ]] || vm_run insmod "$VM_RWNIC_KO" "pairs=${1:-1}"
	[[ -d $RWNIC_DEBUGFS/rwnic0 ]] || vm_fail "rwnic loaded but $RWNIC_DEBUGFS/rwnic0 is missing (debugfs not mounted?)"
}

# vm_rwnic_set IFNAME FILE TEXT: write TEXT to the device's control file; fail if refused.
vm_rwnic_set() {
	printf '%s\n' "$3" >"$RWNIC_DEBUGFS/$1/$2" || vm_fail "rwnic: writing '$3' to $1/$2 was refused"
}
