#!/bin/bash
# SPDX-License-Identifier: MIT
#
# A benchmark, not a test (make bench runs it; no figure is judged): the live RDMA path on
# a real kernel.  PERF_DEVICES (8) soft-RoCE devices in one guest; CPU and system calls per
# collection of their hw counters by
#   - rocewatch serve at 100 ms, as on a node: hw counters over RDMA netlink (one
#     RDMA_NLDEV_CMD_STAT_GET per port);
#   - rocewatch serve on the same /sys through a bind mount, which makes it read sysfs
#     alone: hw_counters/ file by file on kept descriptors (its fallback);
#   - the floor program (tests/bench/floor.c) over the same hw_counters/ files: pread on
#     kept descriptors, and open/read/close per file as node_exporter does.
# CPU from /proc/PID/task/*/schedstat, system calls from `strace -c -f` in a second window
# (strace slows what it counts, so CPU is never measured under it).  Figures go to the
# console and $VM_OUT/perf-live.json.  TCG emulates every instruction: absolute figures are
# far above a real node's; compare the ratios.
#
# Run: tests/vm/run-scenario --builddir build-release --timeout 600 tests/vm/scenarios/perf-live.sh

set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
# shellcheck source=tests/vm/rw-lib.sh
. "${VM_LIB%/*}/rw-lib.sh"

n=${PERF_DEVICES:-8} secs=${PERF_SECONDS:-20}
floor=${ROCEWATCH%/*}/tests/bench_floor
mnt=/tmp/perf-sys
[[ -x $floor ]] || vm_skip "no $floor (build the tests: meson setup -Dtests=auto)"
command -v strace >/dev/null || vm_skip "strace is not installed"

cleanup() {
	rw_serve_kill
	umount "$mnt" 2>/dev/null || true
	for ((i = 0; i < n; i++)); do
		rdma link delete "rxe_p$i" 2>/dev/null || true
		ip link del "pv$i" 2>/dev/null || true
	done
}
trap cleanup EXIT

vm_run modprobe rdma_rxe
vm_run modprobe veth
for ((i = 0; i < n; i++)); do
	ip link add "pv$i" type veth peer name "pw$i"
	ip addr add "10.97.$i.1/24" dev "pv$i"
	ip link set "pw$i" up
	ip link set "pv$i" up
	rdma link add "rxe_p$i" type rxe netdev "pv$i"
done
for ((i = 0; i < n; i++)); do
	vm_wait_port_active "rxe_p$i" 1 30
done
hw=$(find /sys/class/infiniband/rxe_p0/ports/1/hw_counters -type f | wc -l)
vm_log "ok: $n rxe ports active, $hw hw counters each"
# realpath(--sysfs-root) is not /sys: rocewatch reads sysfs alone, as on a fixture
mkdir -p "$mnt"
vm_run mount --bind /sys "$mnt"

cpu_ns() {
	local t total=0 v _
	for t in /proc/"$1"/task/*/schedstat; do
		read -r v _ <"$t" 2>/dev/null || continue
		total=$((total + v))
	done
	echo "$total"
}

# user and system CPU ticks (USER_HZ) of PID: "UTIME STIME"
ticks() {
	local stat
	stat=$(<"/proc/$1/stat")
	stat=${stat##*) }
	awk '{ print $12, $13 }' <<<"$stat"
}

fast_polls() {
	curl -sS --max-time 30 "http://127.0.0.1:$RW_SERVE_PORT/metrics" |
		sed -n 's/^rocewatch_polls_total{loop="fast"} \([0-9]*\).*/\1/p'
}

# measure_serve NAME SYSFS_ROOT: CPU per poll, then system calls per poll (strace -c).
measure_serve() {
	local name=$1 root=$2 c0 c1 p0 p1 calls u0 s0 u1 s1
	rw_serve_start 19479 --interval 100ms --config-interval 60s --sysfs-root "$root" \
		--netdev-exclude '.*' --log-level warn
	sleep 3 # the first slow poll and the rules' first evaluation
	read -r u0 s0 < <(ticks "$RW_SERVE_PID")
	c0=$(cpu_ns "$RW_SERVE_PID") p0=$(fast_polls)
	sleep "$secs"
	c1=$(cpu_ns "$RW_SERVE_PID") p1=$(fast_polls)
	read -r u1 s1 < <(ticks "$RW_SERVE_PID")
	rw_serve_alive
	eval "${name}_cpu=$(((c1 - c0) / (p1 - p0)))"
	# where it goes, coarsely (10 ms ticks): user space or the kernel
	eval "${name}_user_pct=$(((u1 - u0) * 100 / (u1 - u0 + s1 - s0 + (u1 - u0 + s1 - s0 == 0))))"
	eval "${name}_polls=$((p1 - p0))"
	p0=$(fast_polls)
	timeout -s INT "$secs" strace -c -f -p "$RW_SERVE_PID" -o "$VM_OUT/strace-$name.txt" || true
	p1=$(fast_polls)
	calls=$(awk '$NF == "total" { print $4 }' "$VM_OUT/strace-$name.txt")
	eval "${name}_sys=$(((calls + (p1 - p0) / 2) / (p1 - p0)))"
	grep -E 'pread64|recvmsg|recvfrom|sendto|sendmsg|openat|read$|total' \
		"$VM_OUT/strace-$name.txt" >&2 || true
	rw_serve_stop
	vm_log "ok: $name: $((${name}_cpu / 1000)) us CPU/poll over $((${name}_polls)) polls," \
		"$((${name}_sys)) syscalls/poll, $((${name}_user_pct)) % of the CPU in user space"
}

# measure_floor NAME ARGS...: the floor program's CPU per iteration, then its syscalls.
measure_floor() {
	local name=$1 its=$((secs * 10)) out
	shift
	out=$("$floor" /sys --hw-only --iterations "$its" --interval-ms 100 "$@")
	eval "${name}_cpu=$(jq '.cpu_ns_per_iteration | floor' <<<"$out")"
	eval "${name}_files=$(jq .files <<<"$out")"
	# syscalls per iteration: 40 iterations less 20, so that opening the files does not count
	local its2 c20 c40
	for its2 in 20 40; do
		strace -c -f -o "$VM_OUT/strace-$name-$its2.txt" "$floor" /sys --hw-only \
			--iterations "$its2" --interval-ms 0 "$@" >/dev/null
	done
	c20=$(awk '$NF == "total" { print $4 }' "$VM_OUT/strace-$name-20.txt")
	c40=$(awk '$NF == "total" { print $4 }' "$VM_OUT/strace-$name-40.txt")
	eval "${name}_sys=$(((c40 - c20) / 20))"
	vm_log "ok: $name: $out, $(((c40 - c20) / 20)) syscalls per iteration"
}

measure_serve netlink /sys
measure_serve sysfs "$mnt"
measure_floor netlink_fl --netlink
measure_floor pread
measure_floor orc --open-read-close

# shellcheck disable=SC2154 # set by eval above
{
	x() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / (b ? b : 1) }'; }
	printf '%-52s %10s %10s\n' "$n ports x $hw hw counters, per collection" "CPU us" "syscalls"
	printf '%-52s %10d %10d\n' "floor: RDMA netlink, one STAT_GET per port" \
		$((netlink_fl_cpu / 1000)) "$netlink_fl_sys"
	printf '%-52s %10d %10d\n' "floor: sysfs, pread on kept fds ($pread_files files)" \
		$((pread_cpu / 1000)) "$pread_sys"
	printf '%-52s %10d %10d\n' "floor: sysfs, open/read/close (node_exporter's way)" \
		$((orc_cpu / 1000)) "$orc_sys"
	printf '%-52s %10d %10d\n' "rocewatch poll (all of it), RDMA netlink" \
		$((netlink_cpu / 1000)) "$netlink_sys"
	printf '%-52s %10d %10d\n' "rocewatch poll (all of it), sysfs fallback" \
		$((sysfs_cpu / 1000)) "$sysfs_sys"
	printf 'reading the hw counters over netlink instead of sysfs: %s less CPU and %s fewer syscalls than pread on kept fds, %s less CPU and %s fewer syscalls than open/read/close\n' \
		"$(x "$pread_cpu" "$netlink_fl_cpu")" "$(x "$pread_sys" "$netlink_fl_sys")" \
		"$(x "$orc_cpu" "$netlink_fl_cpu")" "$(x "$orc_sys" "$netlink_fl_sys")"
	printf 'rocewatch, netlink vs its sysfs fallback: %s fewer syscalls, %s less CPU per poll (user space: %d %% and %d %% of it, 10 ms ticks)\n' \
		"$(x "$sysfs_sys" "$netlink_sys")" "$(x "$sysfs_cpu" "$netlink_cpu")" \
		"$netlink_user_pct" "$sysfs_user_pct"
} | tee "$VM_OUT/perf-live.txt" >&2
jq -n --argjson n "$n" --argjson hw "$hw" \
	--argjson nl "[$netlink_cpu, $netlink_sys]" --argjson sy "[$sysfs_cpu, $sysfs_sys]" \
	--argjson nf "[$netlink_fl_cpu, $netlink_fl_sys]" \
	--argjson pr "[$pread_cpu, $pread_sys]" --argjson orc "[$orc_cpu, $orc_sys]" \
	'{devices: $n, hw_counters_per_port: $hw,
	  cpu_ns_syscalls: {rocewatch_netlink: $nl, rocewatch_sysfs: $sy, floor_netlink: $nf,
	                    floor_pread: $pr, floor_open_read_close: $orc}}' >"$VM_OUT/perf-live.json"
vm_pass
