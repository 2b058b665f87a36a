#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inputs past their caps or of the wrong kind, each one clear line and a non-zero
# exit: --from and --nccl-env from /dev/zero, a FIFO nobody writes to and a file past
# the cap; NUL bytes and terminal escapes in --nccl-env; a missing --sysfs-root; a
# symbolic link planted at DIR/rocewatch.db for serve --record; %00 in a URL path and
# chunked POSTs.  Files generated here.
. "$(dirname "$0")/../lib.sh"

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
export NO_COLOR=

# refuses RC TEXT CMD...: exit RC and TEXT (fixed string) on stderr
refuses() {
	local want=$1 text=$2 rc=0
	shift 2
	timeout 60 "$@" >"$TMPD/o" 2>"$TMPD/e" || rc=$?
	[ "$rc" -eq "$want" ] || { echo "  exit $rc, want $want: $(head -3 "$TMPD/e")" >&2; return 1; }
	grep -qF -- "$text" "$TMPD/e" || { echo "  stderr: $(head -3 "$TMPD/e")" >&2; return 1; }
}

mkfifo "$TMPD/fifo"
python3 -c 'import sys; open(sys.argv[1], "w").write("[" + "{},\n" * (9 << 20) + "{}]")' "$TMPD/big.json"
check "check --from /dev/zero: refused by the cap" refuses 3 \
	"/dev/zero: larger than 32 MiB, the limit for a snapshot file" "$ROCEWATCH" check --from /dev/zero
check "check --from a 36 MB file: refused by the cap" refuses 3 \
	"big.json: larger than 32 MiB, the limit for a snapshot file" "$ROCEWATCH" check --from "$TMPD/big.json"
check "check --from a FIFO nobody writes to: returns" refuses 3 \
	"fifo:1:0: '[' or '{' expected near end of file" "$ROCEWATCH" check --from "$TMPD/fifo"

printf 'NCCL_IB_HCA=mlx5_0\nNCCL_SOCKET_IFNAME=eth2\0\nNCCL_IB_GID_INDEX=3\n' >"$TMPD/nul.env"
printf 'NCCL_IB_HCA=mlx5_0\n\033[2Jgarbage\007\n' >"$TMPD/esc.env"
check "--nccl-env with a NUL byte: refused, where" refuses 3 \
	"nul.env:2:24: a NUL byte: not a text file of KEY=VALUE lines" \
	"$ROCEWATCH" check --from "$FX/good.json" --nccl-env "$TMPD/nul.env"
check "--nccl-env garbage with escapes: shown escaped" refuses 3 \
	"esc.env:2: expected KEY=VALUE, got '\\x1b[2Jgarbage\\x07'" \
	"$ROCEWATCH" check --from "$FX/good.json" --nccl-env "$TMPD/esc.env"
check "--nccl-env garbage: no raw control byte on stderr" bash -c "! grep -q \$'\\x1b' '$TMPD/e'"
check "--nccl-env /dev/zero: refused by the cap" refuses 3 \
	"/dev/zero: larger than 1 MiB, the limit for an --nccl-env file" \
	"$ROCEWATCH" check --from "$FX/good.json" --nccl-env /dev/zero

check "check --sysfs-root /nonexistent: named" refuses 3 \
	"rocewatch check: --sysfs-root $TMPD/nonexistent: No such file or directory" \
	"$ROCEWATCH" check --sysfs-root "$TMPD/nonexistent"
check "snapshot --procfs-root FILE: not a directory" refuses 2 \
	"rocewatch snapshot: --procfs-root $TMPD/fifo: not a directory" \
	"$ROCEWATCH" snapshot --procfs-root "$TMPD/fifo"

# issue 42 item 6: a FIFO where a kernel file should be (a counter, a port state, a netdev
# attribute) is refused, named, and hangs neither check nor serve under the model lock
FT="$TMPD/fifo-tree"
cp -a "$SOURCE_DIR/tests/fixtures/sysfs/mlx5-roce" "$FT"
FP="$FT/devices/pci0000:16/0000:16:02.0/0000:17:00.0"
for f in infiniband/mlx5_0/ports/1/counters/link_downed infiniband/mlx5_0/ports/1/state net/ens1f0np0/mtu; do
	rm "$FP/$f" && mkfifo "$FP/$f"
done
fifo_check() {
	local rc=0
	timeout 30 "$ROCEWATCH" check --sysfs-root "$FT" --format json >"$TMPD/ft.json" 2>"$TMPD/ft.err" || rc=$?
	# 2: the fixture fails critical rules of its own (124 would be a hang)
	[ "$rc" = 2 ] || { echo "  exit $rc: $(head -3 "$TMPD/ft.err")" >&2; return 1; }
	python3 - "$TMPD/ft.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
why = {(r["rule"], r["object"]["device"]): r["reason"] for r in d["results"] if r["outcome"] == "unknown"}
assert why.get(("netdev_mtu", "ens1f0np0")) == "mtu absent: error (not a regular file)", why
assert why.get(("port_active", "mlx5_0")) == "state absent: error (not a regular file)", why
PY
}
check "check --sysfs-root with FIFOs for kernel files: returns, each named unknown" fifo_check
check "... the counter FIFO named in the log" grep -q "mlx5_0/ports/1/counters/link_downed: not a regular file; that counters counter is left out until a configuration poll opens it again" "$TMPD/ft.err"
if command -v curl >/dev/null; then
	fifo_serve() {
		local port pid ok=0
		port=$(free_port)
		"$ROCEWATCH" serve --sysfs-root "$FT" --interval 100ms --config-interval 100ms \
			--web.listen-address "127.0.0.1:$port" >"$TMPD/fs.log" 2>&1 &
		pid=$!
		# three configuration polls through the FIFOs, and /metrics still answers
		wait_until 20 bash -c "[ \"\$(curl -sf -m 5 'http://127.0.0.1:$port/metrics' | awk '/^rocewatch_polls_total\\{loop=\"slow\"\\}/ { print \$2 }')\" -ge 3 ]" || ok=1
		kill -TERM "$pid"
		wait_until 10 bash -c "! kill -0 $pid 2>/dev/null" || { ok=1; kill -9 "$pid"; }
		wait "$pid" 2>/dev/null || true
		[ "$ok" = 0 ] || { echo "  log: $(tail -5 "$TMPD/fs.log")" >&2; return 1; }
	}
	check "serve --sysfs-root with FIFOs: polls, answers /metrics, stops on SIGTERM" fifo_serve
fi

# issue 41 item 8 / 42 item 11: a tree with no class/net fails every configuration poll
# while the fast polls succeed: said once, and "collecting again" only once it is back
if command -v curl >/dev/null; then
	NT="$TMPD/nonet-tree"
	cp -a "$SOURCE_DIR/tests/fixtures/sysfs/mlx5-roce" "$NT"
	mv "$NT/class/net" "$TMPD/nonet-saved"
	said_once() {
		local port pid ok=0
		port=$(free_port)
		"$ROCEWATCH" serve --sysfs-root "$NT" --interval 100ms --config-interval 200ms \
			--web.listen-address "127.0.0.1:$port" >"$TMPD/nn.log" 2>&1 &
		pid=$!
		wait_until 30 bash -c "[ \"\$(curl -sf 'http://127.0.0.1:$port/metrics' | awk '/^rocewatch_polls_total\\{loop=\"slow\"\\}/ { print \$2 }')\" -ge 10 ]" || ok=1
		[ "$(grep -c 'link: .*class/net: No such file or directory (backing off; said once)' "$TMPD/nn.log")" = 1 ] || ok=1
		! grep -q 'collecting again' "$TMPD/nn.log" || ok=1
		mv "$TMPD/nonet-saved" "$NT/class/net"
		wait_until 20 grep -q 'link: collecting again' "$TMPD/nn.log" || ok=1
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		[ "$ok" = 0 ] || { echo "  log: $(grep -v 'alert firing' "$TMPD/nn.log" | tail -8)" >&2; return 1; }
	}
	check "a configuration poll that keeps failing: said once over 10 polls, then its end" said_once
fi

# a dangling link where the database goes: serve must not create its target
mkdir "$TMPD/rec"
ln -s "$TMPD/elsewhere.db" "$TMPD/rec/rocewatch.db"
check "serve --record: a link at DIR/rocewatch.db refused" refuses 1 \
	"--record: $TMPD/rec/rocewatch.db is a symbolic link: refusing to follow it" \
	"$ROCEWATCH" serve --from "$FX/good.json" --web.listen-address 127.0.0.1:0 --record "$TMPD/rec"
check "serve --record: the link's target not created" test ! -e "$TMPD/elsewhere.db"
rm "$TMPD/rec/rocewatch.db"
ln -s "$TMPD/elsewhere-wal" "$TMPD/rec/rocewatch.db-wal"
check "serve --record: a link at the WAL refused" refuses 1 \
	"--record: $TMPD/rec/rocewatch.db-wal is a symbolic link" \
	"$ROCEWATCH" serve --from "$FX/good.json" --web.listen-address 127.0.0.1:0 --record "$TMPD/rec"

# a web config that configures nothing: started (as exporter-toolkit does), with a warning
printf '# only a comment\n' >"$TMPD/empty.yml"
printf 'tls_server_config:\n' >"$TMPD/bare.yml"
warns_open() {
	local port pid ok=0
	port=$(free_port)
	"$ROCEWATCH" serve --from "$FX/good.json" --web.listen-address "127.0.0.1:$port" \
		--web.config.file "$1" >"$TMPD/w.log" 2>&1 &
	pid=$!
	wait_until 10 curl -sf "http://127.0.0.1:$port/healthz" || ok=1
	grep -qF "level=warn msg=\"--web.config.file $1 sets neither TLS (tls_server_config with cert_file and key_file) nor basic_auth_users: serving plain HTTP with no authentication\"" "$TMPD/w.log" || ok=1
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	[ "$ok" -eq 0 ] || { echo "  log: $(cat "$TMPD/w.log")" >&2; return 1; }
}
if command -v curl >/dev/null; then
	check "web config with only a comment: serves, and warns" warns_open "$TMPD/empty.yml"
	check "web config with a bare tls_server_config: serves, and warns" warns_open "$TMPD/bare.yml"
fi

# out of descriptors: counters that could not be opened come back once there are some
# (they were dropped for good: 37 of 127 series after the limit was lifted)
if command -v curl >/dev/null && command -v prlimit >/dev/null; then
	TREE="$SOURCE_DIR/tests/fixtures/sysfs/mlx5-roce"
	rdma_series() { curl -sf "http://127.0.0.1:$1/metrics" | grep -c '^roce_rdma\|^rdma_'; }
	port=$(free_port)
	"$ROCEWATCH" serve --sysfs-root "$TREE" --netdev-exclude '.*' --interval 100ms \
		--config-interval 100ms --web.listen-address "127.0.0.1:$port" >"$TMPD/fd0.log" 2>&1 &
	pid=$!
	wait_until 10 bash -c "[ \"\$(curl -sf 'http://127.0.0.1:$port/metrics' | grep -c '^roce_rdma_duplicate_requests_total')\" -gt 1 ]" || die "serve did not come up: $(cat "$TMPD/fd0.log")"
	# every object in: a few configuration polls done
	wait_until 20 bash -c "[ \"\$(curl -sf 'http://127.0.0.1:$port/metrics' | awk '/^rocewatch_polls_total\\{loop=\"slow\"\\}/ { print \$2 }')\" -ge 3 ]" ||
		die "no 3 configuration polls: $(cat "$TMPD/fd0.log")"
	want=$(rdma_series "$port")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	port=$(free_port)
	(
		ulimit -S -n 28
		exec "$ROCEWATCH" serve --sysfs-root "$TREE" --netdev-exclude '.*' --interval 100ms \
			--config-interval 100ms --web.listen-address "127.0.0.1:$port"
	) >"$TMPD/fd.log" 2>&1 &
	pid=$!
	on_exit "kill $pid"
	check "out of descriptors: the counters left out are said" wait_until 20 \
		grep -Eq 'Too many open files; (that|its) .* counters? (is|are) missing until a descriptor is free' "$TMPD/fd.log"
	prlimit --pid "$pid" --nofile=1024:
	check "descriptors again: every counter is back on /metrics ($want series)" wait_until 20 \
		bash -c "[ \"\$(curl -sf 'http://127.0.0.1:$port/metrics' | grep -c '^roce_rdma\\|^rdma_')\" = '$want' ]"
	check "descriptors again: said in the log" wait_until 20 grep -Eq 'rdma: .*: [0-9]+ [a-z_]+ counters open again' "$TMPD/fd.log"
	# a listing cut short by EMFILE is no port gone: no false "back" events, no alert for it
	check "out of descriptors: no port reported gone and back" \
		bash -c "! grep -E 'is back after a config poll|rdma_port_not_reappeared|compute_ports' '$TMPD/fd.log'"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
fi

# a %00 in the path must not cut it short: /metrics%00.txt is no /metrics
if command -v curl >/dev/null; then
	port=$(free_port)
	"$ROCEWATCH" serve --from "$FX/good.json" --web.listen-address "127.0.0.1:$port" >"$TMPD/serve.log" 2>&1 &
	pid=$!
	on_exit "kill $pid"
	wait_until 10 curl -sf "http://127.0.0.1:$port/healthz" || die "serve did not start: $(cat "$TMPD/serve.log")"
	check "/metrics%00.txt: 404" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$port/metrics%00.txt')\" = 404 ]"
	check "/metrics%00: 404" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$port/metrics%00')\" = 404 ]"
	check "/met%72ics still decoded: 200" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$port/met%72ics')\" = 200 ]"
	check "a chunked POST to /metrics: 405" bash -c "[ \"\$(head -c 100 /dev/zero | curl -s -o /dev/null -w '%{http_code}' -H 'Transfer-Encoding: chunked' --data-binary @- 'http://127.0.0.1:$port/metrics')\" = 405 ]"
	check "a chunked POST past 4096 bytes: 413" bash -c "[ \"\$(head -c 6000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' -H 'Transfer-Encoding: chunked' --data-binary @- 'http://127.0.0.1:$port/api/v1/capture')\" = 413 ]"
fi

# issue 42 item 9: option values echoed in errors never carry raw control bytes to the
# terminal (they read '\x01\x7fgarb\x1b[2J'); only the line's own newline is raw
BAD=$'\x01\x7fgarb\x1b[2J\x07\x08'
clean_stderr() { # CMD...: fails if its stderr has a control byte other than newline/tab
	"$@" >/dev/null 2>"$TMPD/ctl" || true
	[ -s "$TMPD/ctl" ] || { echo "  no error at all" >&2; return 1; }
	if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMPD/ctl"; then
		echo "  raw control bytes: $(od -c "$TMPD/ctl" | head -3)" >&2
		return 1
	fi
	grep -qF '\x01\x7fgarb\x1b[2J\x07\x08' "$TMPD/ctl" || { echo "  not escaped: $(cat -v "$TMPD/ctl")" >&2; return 1; }
}
check "check --format with control bytes: escaped" clean_stderr "$ROCEWATCH" check --format "$BAD"
check "check --color with control bytes: escaped" clean_stderr "$ROCEWATCH" check --color "$BAD"
check "serve --interval with control bytes: escaped" clean_stderr "$ROCEWATCH" serve --interval "$BAD"
check "serve --web.listen-address with control bytes: escaped" clean_stderr "$ROCEWATCH" serve --web.listen-address "$BAD"
check "an unknown option with control bytes: escaped" clean_stderr "$ROCEWATCH" snapshot "--$BAD"
check "an unknown command with control bytes: escaped" clean_stderr "$ROCEWATCH" "$BAD"
check "fleet check --prometheus with control bytes: escaped" clean_stderr "$ROCEWATCH" fleet check --prometheus "$BAD"
check "a bad regular expression with control bytes: escaped" clean_stderr "$ROCEWATCH" snapshot --netdev-include "($BAD"
check "report --format with control bytes: escaped" clean_stderr "$ROCEWATCH" report --format "$BAD" x
check "rules show of a name with control bytes: escaped" clean_stderr "$ROCEWATCH" rules show "$BAD"

finish
