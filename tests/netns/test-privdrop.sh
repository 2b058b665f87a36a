#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns tier (root): serve started as root keeps only the capabilities its
# enabled collectors need once setup is done, in every thread
# (/proc/PID/task/*/status): none by default; CAP_BPF + CAP_NET_ADMIN with
# --collector.wire; with --user, CAP_DAC_READ_SEARCH only while a debugfs
# with mlx5 is there to read.  --user switches uid and gid.  A fact the
# dropped privileges make unreadable shows as
# rocewatch_collector_partial{reason="permission"}, not as a silent success.
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd curl
id nobody >/dev/null 2>&1 || skip "needs a user 'nobody'"

ns=$(make_netns priv)
# netdevs named like the fixtures' (upstream mlx5, MLNX_OFED), so qos_sysfs finds their files
ip -n "$ns" link add enp23s0f0np0 type veth peer name eth2
ip -n "$ns" link set enp23s0f0np0 up
ip -n "$ns" link set eth2 up
fx="$TMPD/fx"
cp -a "$SOURCE_DIR/tests/fixtures/sysfs/mlx5-upstream" "$fx"
chmod 0700 "$fx/debug" # as debugfs is mounted: root only
ofed="$TMPD/ofed"
cp -a "$SOURCE_DIR/tests/fixtures/sysfs/mlx5-ofed" "$ofed"
chmod 0755 "$TMPD" # nobody must reach the fixtures below it
# ... and the profiles, which serve reads after dropping to --user (the checkout may be
# under a directory nobody cannot enter, such as /root)
cp -r "$SOURCE_DIR/rules/profiles" "$TMPD/profiles"
chmod -R a+rX "$TMPD/profiles"
export ROCEWATCH_PROFILE_DIR="$TMPD/profiles"
mkdir -p "$TMPD/nodebug"
chmod 0700 "$TMPD/nodebug"
dev=enp23s0f0np0
roots=(--sysfs-root "$fx/sys" --configfs-root "$fx/config" --netdev-include "$dev")
ofed_roots=(--sysfs-root "$ofed/sys" --configfs-root "$ofed/config" --netdev-include eth2)

CAP_DAC_READ_SEARCH=$((1 << 2))
CAP_NET_ADMIN=$((1 << 12))
CAP_BPF=$((1 << 39))

pid=
start() { # NAME ARGS...: serve in the namespace; sets $pid, $port ($PRELOAD: LD_PRELOAD)
	local name=$1
	shift
	port=$(free_port)
	ip netns exec "$ns" env ${PRELOAD:+LD_PRELOAD=$PRELOAD} \
		${PRELOAD:+ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0} "$ROCEWATCH" serve \
		--web.listen-address "127.0.0.1:$port" --interval 200ms "$@" >"$TMPD/$name.log" 2>&1 &
	pid=$!
	on_exit "kill $pid"
	wait_until 20 ip netns exec "$ns" curl -sf "http://127.0.0.1:$port/healthz" ||
		{ echo "  serve log: $(tail -5 "$TMPD/$name.log")"; return 1; }
}
stop() {
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
}
metrics() { ip netns exec "$ns" curl -sf "http://127.0.0.1:$port/metrics"; }
# caps FIELD: the one value FIELD (CapEff, CapPrm, CapBnd) has in every thread, or "mixed"
caps() {
	local v
	v=$(cat /proc/"$pid"/task/*/status | awk -v f="$1:" '$1 == f { print $2 }' | sort -u)
	[ "$(echo "$v" | wc -l)" = 1 ] && echo $((16#$v)) || echo mixed
}
uid_of() { awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status"; }
threads() { ls /proc/"$pid"/task | wc -l; }
partial() { metrics | awk -v s="rocewatch_collector_partial{collector=\"qos_sysfs\",reason=\"$1\"}" '$1 == s { print $2 }'; }

# ---- root, default collectors: nothing kept ----
start root --debugfs-root "$fx/debug" "${roots[@]}" || die "serve did not start"
echo "  root: $(threads) threads, CapEff $(caps CapEff), CapPrm $(caps CapPrm), CapBnd $(caps CapBnd)"
check "root, default collectors: CapEff 0 in every thread" [ "$(caps CapEff)" = 0 ]
check "root, default collectors: CapPrm and the bounding set empty too" \
	[ "$(caps CapPrm)" = 0 -a "$(caps CapBnd)" = 0 ]
check "root without --user stays uid 0" [ "$(uid_of)" = 0 ]
check "the log says what was kept" grep -q 'capabilities kept: none' "$TMPD/root.log"
check "uid 0 without capabilities still reads root's debugfs (cc_params on /metrics)" \
	bash -c "ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q '^roce_dcqcn_param{device=\"$dev\"'"
check "nothing partial for qos_sysfs as root" [ "$(partial permission)" = 0 ]
stop

# ---- --user nobody with a debugfs holding mlx5: CAP_DAC_READ_SEARCH, nothing else ----
start user-debugfs --user nobody --debugfs-root "$fx/debug" "${roots[@]}" || die "serve --user did not start"
echo "  --user nobody + debugfs: uid $(uid_of), CapEff $(caps CapEff)"
check "--user nobody: uid 65534" [ "$(uid_of)" = "$(id -u nobody)" ]
check "--user nobody, debugfs/mlx5 there: CapEff is CAP_DAC_READ_SEARCH alone" \
	[ "$(caps CapEff)" = "$CAP_DAC_READ_SEARCH" ]
check "... and it reads the root-only debugfs with it" \
	bash -c "ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q '^roce_dcqcn_param{device=\"$dev\"'"
stop

# ---- --user nobody, no debugfs to read, one MLNX_OFED sysfs file only root may read ----
chmod 0600 "$ofed/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/net/eth2/ecn/roce_rp/enable/3"
start user-partial --user nobody --debugfs-root "$TMPD/nodebug" "${ofed_roots[@]}" ||
	die "serve --user did not start"
echo "  --user nobody, no debugfs: CapEff $(caps CapEff); qos_sysfs partial: permission $(partial permission), error $(partial error)"
check "--user nobody, no mlx5 debugfs: CapEff 0" [ "$(caps CapEff)" = 0 ]
check "a file the user may not read: qos_sysfs partial{reason=permission} > 0" \
	bash -c "[ \"\$(ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | awk '\$1 == \"rocewatch_collector_partial{collector=\\\"qos_sysfs\\\",reason=\\\"permission\\\"}\" { print \$2 }')\" -gt 0 ]"
check "... while the collector itself still succeeds" \
	bash -c "ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q '^rocewatch_collector_success{collector=\"qos_sysfs\"} 1'"
check "... and the snapshot names the reason" bash -c \
	"ip netns exec $ns curl -sf http://127.0.0.1:$port/api/v1/state | grep -q '\"reason\": *\"permission\"'"
stop

# ---- --record with --user: files owned by the user ----
mkdir -p "$TMPD/rec"
chown nobody "$TMPD/rec"
start user-record --user nobody --debugfs-root "$TMPD/nodebug" --record "$TMPD/rec" "${roots[@]}" ||
	die "serve --user --record did not start"
check "--user --record: the database belongs to the user" \
	wait_until 5 bash -c "[ \"\$(stat -c %U '$TMPD/rec/rocewatch.db')\" = nobody ]"
stop
rm -rf "$TMPD/rec"
mkdir -p "$TMPD/rec"
check "--user with a --record directory the user cannot write: refused, named" bash -c \
	"out=\$(ip netns exec $ns '$ROCEWATCH' serve --user nobody --web.listen-address 127.0.0.1:0 --record '$TMPD/rec' ${roots[*]} 2>&1); [ \$? != 0 ] && echo \"\$out\" | grep -q '$TMPD/rec'"
check "--user with no such user: refused" bash -c \
	"out=\$(ip netns exec $ns '$ROCEWATCH' serve --user no-such-user-rw --web.listen-address 127.0.0.1:0 2>&1); [ \$? != 0 ] && echo \"\$out\" | grep -q \"no such user 'no-such-user-rw'\""

# ---- --collector.wire: CAP_BPF and CAP_NET_ADMIN, and the program keeps counting ----
if ip netns exec "$ns" "$ROCEWATCH" snapshot --collector.wire -o /dev/null 2>&1 | grep -q 'built without BPF'; then
	echo "  (built without BPF: --collector.wire checks skipped)"
else
	start wire --collector.wire --debugfs-root "$TMPD/nodebug" "${roots[@]}" || die "serve --collector.wire did not start"
	echo "  --collector.wire: CapEff $(caps CapEff)"
	check "--collector.wire: CapEff is CAP_BPF + CAP_NET_ADMIN" \
		[ "$(caps CapEff)" = $((CAP_BPF | CAP_NET_ADMIN)) ]
	check "--collector.wire keeps working after the drop" bash -c \
		"ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q '^rocewatch_collector_success{collector=\"wire\"} 1'"
	stop
	# Where the kernel has no tcx (Debian 12's 6.1) the program goes on clsact qdiscs through
	# rtnetlink, which takes CAP_NET_ADMIN, also for a netdev that appears after the drop.
	if [ -n "${NO_TCX_PRELOAD:-}" ] && [ -f "$NO_TCX_PRELOAD" ]; then
		PRELOAD=$NO_TCX_PRELOAD start wire-clsact --collector.wire --debugfs-root "$TMPD/nodebug" --sysfs-root "$fx/sys" \
			--netdev-include "$dev|wnew" --config-interval 200ms ||
			die "serve --collector.wire (clsact) did not start"
		ip -n "$ns" link add wnew type veth peer name wnewp
		ip -n "$ns" link set wnew up
		check "clsact: a netdev that appears after the drop is attached (CAP_NET_ADMIN kept)" \
			wait_until 10 grep -q 'wire: wnew: counting RoCEv2 .* via clsact' "$TMPD/wire-clsact.log"
		check "clsact: no attach refused" bash -c "! grep -q 'Operation not permitted' '$TMPD/wire-clsact.log'"
		stop
		ip -n "$ns" link del wnew
	fi
	start wire-user --collector.wire --user nobody --debugfs-root "$TMPD/nodebug" "${roots[@]}" ||
		die "serve --collector.wire --user did not start"
	check "--collector.wire --user nobody: uid 65534 with CAP_BPF + CAP_NET_ADMIN" \
		[ "$(uid_of)" = "$(id -u nobody)" -a "$(caps CapEff)" = $((CAP_BPF | CAP_NET_ADMIN)) ]
	check "--collector.wire --user nobody keeps working" bash -c \
		"sleep 1; ip netns exec $ns curl -sf http://127.0.0.1:$port/metrics | grep -q '^rocewatch_collector_success{collector=\"wire\"} 1'"
	stop
fi
finish
