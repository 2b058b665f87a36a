#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Do no harm to firmware-restricted RDMA functions (node_exporter #3434/#3823: reading
# their counters floods the kernel log).  --rdma-device-exclude/--rdma-device-include
# decide before anything of a device is opened: strace proves not one openat or pread64
# names the excluded device.  A port whose counter reads fail with EIO (here: the files
# are /proc/self/mem, whose offset 0 is unmapped, so the kernel answers EIO) is read
# once, backed off, said once in the log and on /metrics, and not read at the next polls.
. "$(dirname "$0")/../lib.sh"
need_cmd strace
need_cmd curl

TREE="$SOURCE_DIR/tests/fixtures/sysfs/mlx5-roce"
COMMON=(--sysfs-root "$TREE" --netdev-exclude '.*' --no-collector.verbs)
# LeakSanitizer cannot run under ptrace
export ASAN_OPTIONS=detect_leaks=0

traced() { # LOG rocewatch ARGS...: every openat and pread64, fds shown as paths
	local log=$1
	shift
	strace -f -y -qq -e trace=openat,pread64 -o "$log" "$ROCEWATCH" "$@"
}
traced "$TMPD/all.log" snapshot "${COMMON[@]}" -o "$TMPD/all.json" 2>"$TMPD/err" || die "snapshot: $(cat "$TMPD/err")"
check "without exclusion mlx5_1's files are read (the test can see it)" grep -q 'mlx5_1/ports/1/counters' "$TMPD/all.log"

traced "$TMPD/ex.log" snapshot "${COMMON[@]}" --rdma-device-exclude 'mlx5_1' -o "$TMPD/ex.json" 2>"$TMPD/err" || die "snapshot: $(cat "$TMPD/err")"
check "--rdma-device-exclude: not one openat or pread64 of mlx5_1" bash -c "! grep 'mlx5_1' '$TMPD/ex.log'"
# (the host collector's search for GPUs reads every PCI function's vendor and class: not the device's)
check "... nor of its PCI function's link or RDMA files" bash -c "! grep -E '0000:17:00.1/(infiniband|current_link|max_link)' '$TMPD/ex.log'"
check "... while mlx5_0 is read" grep -q 'mlx5_0/ports/1/counters' "$TMPD/ex.log"
check "... and only mlx5_0 is in the snapshot" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [(p["device"], p["port"]) for p in d["rdma_ports"]] == [("mlx5_0", 1)], d["rdma_ports"]
assert d["node"]["fields"]["rdma_devices"] == 1' "$TMPD/ex.json"

traced "$TMPD/in.log" snapshot "${COMMON[@]}" --rdma-device-include 'mlx5_0' -o "$TMPD/in.json" 2>"$TMPD/err" || die "snapshot: $(cat "$TMPD/err")"
check "--rdma-device-include mlx5_0: mlx5_1 untouched too" bash -c "! grep 'mlx5_1' '$TMPD/in.log'"
# issue 42 item 8: a repeated flag adds to the first, never replaces it (it kept only the
# last, so the device the operator said "never open" was read)
traced "$TMPD/ex2.log" snapshot "${COMMON[@]}" --rdma-device-exclude 'mlx5_0' --rdma-device-exclude 'mlx5_1' -o "$TMPD/ex2.json" 2>"$TMPD/err" || die "snapshot: $(cat "$TMPD/err")"
check "--rdma-device-exclude twice: not one openat or pread64 of either device" bash -c "! grep -E 'mlx5_(0|1)' '$TMPD/ex2.log'"
check "... and no RDMA port in the snapshot" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rdma_ports"] == [], d["rdma_ports"]' "$TMPD/ex2.json"
traced "$TMPD/in2.log" snapshot "${COMMON[@]}" --rdma-device-include 'mlx5_0' --rdma-device-include 'mlx5_9' -o "$TMPD/in2.json" 2>"$TMPD/err" || die "snapshot: $(cat "$TMPD/err")"
check "--rdma-device-include twice: either may match, mlx5_1 untouched" bash -c "! grep 'mlx5_1' '$TMPD/in2.log' && grep -q 'mlx5_0/ports/1/counters' '$TMPD/in2.log'"
"$ROCEWATCH" snapshot --sysfs-root "$TREE" --no-collector.verbs --netdev-exclude 'ens1f0np0' --netdev-exclude 'ens1f1np1' -o "$TMPD/nd2.json" 2>/dev/null
check "--netdev-exclude twice: both netdevs left out" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [n["name"] for n in d["netdevs"]]
assert "ens1f0np0" not in names and "ens1f1np1" not in names, names' "$TMPD/nd2.json"
check "a pattern whose parentheses do not balance is refused, not joined" bash -c \
	"! '$ROCEWATCH' snapshot --sysfs-root '$TREE' --rdma-device-exclude 'a)|(b' -o /dev/null 2>'$TMPD/pe' && grep -q 'parentheses do not balance' '$TMPD/pe'"
check "a bad --rdma-device-exclude regex: exit 2 naming the flag" bash -c \
	"'$ROCEWATCH' snapshot ${COMMON[*]} --rdma-device-exclude '(' -o /dev/null 2>&1 | grep -q -- '--rdma-device-exclude'"

# ---- backoff ----
cp -a "$TREE" "$TMPD/tree"
dev="$TMPD/tree/devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0/ports/1"
[ -d "$dev/hw_counters" ] || die "fixture layout changed: $dev"
n_files=0
for f in "$dev"/hw_counters/* "$dev"/counters/*; do
	# lifespan is hw_counters' cache setting, not a counter: never read as one
	[ -f "$f" ] && [ "${f##*/}" != lifespan ] || continue
	ln -sf /proc/self/mem "$f"
	n_files=$((n_files + 1))
done
port=$(free_port)
strace -f -y -qq -e trace=pread64 -o "$TMPD/serve.strace" "$ROCEWATCH" serve \
	--web.listen-address "127.0.0.1:$port" --interval 100ms --sysfs-root "$TMPD/tree" \
	--netdev-exclude '.*' --no-collector.verbs >"$TMPD/serve.log" 2>&1 &
spid=$!
# strace's child is rocewatch: stop that one by its pid, and strace ends with it
for _ in $(seq 100); do
	rpid=$(cat /proc/$spid/task/*/children 2>/dev/null | awk '{print $1}')
	[ -n "$rpid" ] && break
	sleep 0.05
done
[ -n "$rpid" ] || die "serve did not start under strace"
on_exit "kill \$(cat /proc/$spid/task/*/children 2>/dev/null) $spid"
metrics() { curl -sf "http://127.0.0.1:$port/metrics"; }
fast_polls() { metrics | awk '$1 == "rocewatch_polls_total{loop=\"fast\"}" { print int($2) }'; }
backed_off() { metrics | grep -Eq "^rocewatch_rdma_counters_backed_off\\{device=\"$1\",port=\"1\"[^}]*\\} $2\$"; }
polled_past() { local n; n=$(fast_polls); [ -n "$n" ] && [ "$n" -ge "$1" ]; }
check "the port is backed off, on /metrics" wait_until 20 backed_off mlx5_0 1
check "the other port is read as usual" backed_off mlx5_1 0
p0=$(fast_polls)
wait_until 30 polled_past $((p0 + 20)) || die "serve stopped polling"
# (read the child again: the first one seen may have been a short-lived helper)
rpid=$(cat /proc/$spid/task/*/children 2>/dev/null | awk '{print $1}')
kill "$rpid" || true
wait "$spid" 2>/dev/null || true
reads=$(grep -c 'pread64([0-9]*</proc/[0-9]*/mem>' "$TMPD/serve.strace" || true)
echo "  $n_files failing files; $reads reads of them over 20+ polls"
check "each failing file was read once, not at every poll" [ "$reads" -eq "$n_files" ]
check "said once in the log" [ "$(grep -c 'mlx5_0/1: counter reads fail (Input/output error)' "$TMPD/serve.log")" -eq 1 ]
check "... with the flag that stops it for good" grep -q -- "--rdma-device-exclude 'mlx5_0' stops touching it" "$TMPD/serve.log"
finish
