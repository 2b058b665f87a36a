#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Stage 2 of the guest boot, PID 1 inside the VM after the initramfs has mounted everything and
# switched root to the overlay over the host's /. Named on the kernel command line as rwvm_init=;
# it reads the guest's environment from rwvm_env= (written by run-scenario), sets up the
# guest-to-guest network, runs the scenario named by rwvm_script=, records RESULT: in the
# result file and powers off. Every exec costs a 9p round trip or ten under TCG, so this prefers
# bash builtins and /proc files over small tools. PID 1 must never exit (the kernel would panic), so there is no `set -e` here: every step
# checks for itself and ends in finish.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

uptime_s() {
	local up _
	read -r up _ </proc/uptime
	printf '%s\n' "$up"
}

say() { printf 'rwvm[guest%s]: %s\n' "${GUEST_ID:-?}" "$*"; }

finish() {
	sync
	poweroff -f >/dev/null 2>&1
	/bin/busybox poweroff -f >/dev/null 2>&1
	echo o >/proc/sysrq-trigger
	sleep 60
}

setup_fail() {
	say "setup failed: $*"
	if [[ -n ${RESULT_FILE:-} && -d ${RESULT_FILE%/*} ]]; then
		printf 'RESULT: FAIL guest setup: %s\n' "$*" >>"$RESULT_FILE"
	fi
	finish
}

envfile=
script=
read -r -a words </proc/cmdline
for w in "${words[@]}"; do
	case $w in
	rwvm_env=*) envfile=${w#rwvm_env=} ;;
	rwvm_script=*) script=${w#rwvm_script=} ;;
	esac
done
[[ -n $envfile && -r $envfile ]] || setup_fail "no readable rwvm_env= file ('$envfile')"
# shellcheck source=/dev/null
. "$envfile"
[[ -n $script && -r $script ]] || setup_fail "no readable rwvm_script= ('$script')"

# The initramfs mounted everything (see vm_initramfs_init in vmlib.sh); check the one we need.
mounted=0
while read -r _ mp _; do
	[[ $mp == "$VM_RESULTS" ]] && mounted=1
done </proc/mounts
((mounted)) || setup_fail "the results share is not mounted on $VM_RESULTS"
mkdir -p "$VM_OUT" || setup_fail "cannot create $VM_OUT"

echo "rwvm$GUEST_ID" >/proc/sys/kernel/hostname
ulimit -l unlimited
# Nothing in the guest runs udev or systemd, which would make these; bash's <(...) needs /dev/fd.
[[ -e /dev/fd ]] || ln -s /proc/self/fd /dev/fd
[[ -e /dev/stdin ]] || ln -s /proc/self/fd/0 /dev/stdin
[[ -e /dev/stdout ]] || ln -s /proc/self/fd/1 /dev/stdout
[[ -e /dev/stderr ]] || ln -s /proc/self/fd/2 /dev/stderr

# The initramfs loaded e1000 already; this only matters if that list ever changes.
[[ -d /sys/module/e1000 ]] || modprobe e1000 || setup_fail "modprobe e1000 failed"
# Guest 0 of three: its links to guests 1 and 2 are the ports of one bridge, the guests' switch,
# whose ports take jumbo frames (br0 itself starts at 1500, and a scenario may raise it).
if [[ $GUEST_IFACE == br0 ]]; then
	modprobe bridge || setup_fail "modprobe bridge failed"
	for ((i = 0; i < 100; i++)); do
		[[ -e /sys/class/net/eth1 ]] && break
		sleep 0.1
	done
	ip -batch - <<EOF || setup_fail "cannot make br0 of eth0 and eth1"
link add br0 address $GUEST_MAC type bridge stp_state 0 forward_delay 0
link set eth0 mtu 9000 master br0
link set eth1 mtu 9000 master br0
link set eth0 up
link set eth1 up
EOF
fi
for ((i = 0; i < 100; i++)); do
	[[ -e /sys/class/net/$GUEST_IFACE ]] && break
	sleep 0.1
done
[[ -e /sys/class/net/$GUEST_IFACE ]] || setup_fail "$GUEST_IFACE did not appear"
ip -batch - <<EOF || setup_fail "cannot configure lo and $GUEST_IFACE"
link set lo up
addr add $GUEST_IP/$GUEST_PREFIX dev $GUEST_IFACE
link set $GUEST_IFACE up
EOF

export GUEST_ID GUEST_COUNT GUEST_IFACE GUEST_IP GUEST_PREFIX GUEST_MAC PEER_IP PEER_IPS
export VM_RESULTS VM_OUT RESULT_FILE VM_LIB VM_KROOT VM_KVER VM_SCENARIO_TIMEOUT
export ROCEWATCH_SRCDIR ROCEWATCH_BUILDDIR ROCEWATCH VM_RWNIC_KO VM_RWNIC_SKIP
# The binary knows only the installed profile directory; use the checkout's.
export ROCEWATCH_PROFILE_DIR=${ROCEWATCH_PROFILE_DIR:-$ROCEWATCH_SRCDIR/rules/profiles}

say "up in $(uptime_s)s, running $script ${VM_SCENARIO_ARGS[*]}"
timeout -k 5 "$VM_SCENARIO_TIMEOUT" bash "$script" "${VM_SCENARIO_ARGS[@]}" </dev/null 2>&1 |
	tee "$VM_OUT/scenario.log"
rc=${PIPESTATUS[0]}

last=$(grep '^RESULT: ' "$RESULT_FILE" 2>/dev/null | tail -n 1)
case $rc in
0)
	[[ $last == "RESULT: FAIL"* || $last == "RESULT: PASS" ]] || echo "RESULT: PASS" >>"$RESULT_FILE"
	;;
77)
	[[ $last == "RESULT: SKIP"* ]] || echo "RESULT: SKIP scenario exited 77" >>"$RESULT_FILE"
	;;
124 | 137)
	echo "RESULT: FAIL scenario timed out after ${VM_SCENARIO_TIMEOUT}s in the guest" >>"$RESULT_FILE"
	;;
*)
	[[ $last == "RESULT: FAIL"* ]] || echo "RESULT: FAIL scenario exited with status $rc" >>"$RESULT_FILE"
	;;
esac
dmesg >"$VM_OUT/dmesg.txt" 2>&1
say "$(grep '^RESULT: ' "$RESULT_FILE" | tail -n 1) after $(uptime_s)s"
finish
