#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Command line: help everywhere, and bad input gets one clear line and a non-zero exit.
. "$(dirname "$0")/../lib.sh"

# expect_error EXIT_NONZERO GREP_PATTERN ARGS...: exit != 0, stderr one line matching.
expect_error() {
	local pattern=$1; shift
	local err="$TMPD/err" rc=0
	timeout 10 "$ROCEWATCH" "$@" >"$TMPD/out" 2>"$err" || rc=$?
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
		echo "  rocewatch $*: exit $rc" >&2; return 1
	fi
	if ! grep -q -- "$pattern" "$err"; then
		echo "  rocewatch $*: stderr was: $(cat "$err")" >&2; return 1
	fi
	if [ "$(grep -vc '^$' "$err")" -ne 1 ]; then
		echo "  rocewatch $*: expected one line, got: $(cat "$err")" >&2; return 1
	fi
}

for cmd in serve snapshot version; do
	check "$cmd --help exits 0 and prints usage" bash -c "'$ROCEWATCH' $cmd --help | grep -q 'Usage: rocewatch $cmd'"
done
check "version prints the version" bash -c "'$ROCEWATCH' version | grep -Eq '^rocewatch [0-9]+\.[0-9]+\.[0-9]+'"
# Capture first: with `| grep -q` rocewatch's later writes could die of SIGPIPE (exit 141).
check "no command: usage and exit 2" bash -c "out=\$('$ROCEWATCH' 2>&1); rc=\$?; grep -q Usage <<<\"\$out\" && [ \$rc -eq 2 ]"

check "unknown command" expect_error "unknown command 'frobnicate'" frobnicate
check "unknown flag" expect_error "'--bogus'" serve --bogus
# issue 41 item 8: did you mean, for a mistyped command, option or fleet subcommand
check "a mistyped command: did you mean" expect_error "unknown command 'chek'; did you mean 'check'?" chek
check "a mistyped option (swapped letters): did you mean" \
	expect_error "unknown option '--intreval'; did you mean '--interval'?" check --intreval 1s
check "a mistyped option with its value: did you mean" \
	expect_error "unknown option '--web.listen-adress=:1'; did you mean '--web.listen-address'?" serve --web.listen-adress=:1
check "fleet with a hostlist where the subcommand goes: the command to run" \
	expect_error "unknown subcommand 'gpu\[01-04\]'; the subcommands are check and probe: rocewatch fleet check gpu\[01-04\]" fleet 'gpu[01-04]'
check "fleet chekc: did you mean" expect_error "unknown subcommand 'chekc'; did you mean 'check'?" fleet chekc
check "missing value" expect_error "'--interval'" serve --interval
check "bad duration" expect_error "--interval: 'fast' is not a duration" serve --interval fast
check "interval below minimum" expect_error "below the minimum of 100ms" serve --interval 10ms
check "bad config interval" expect_error "--config-interval: '3parsecs'" serve --config-interval 3parsecs
# a float that does not fit the integer it becomes (issue 16): refused, not cast
check "record.max-size nanB" expect_error "--record.max-size: 'nanB' is not a size" \
	serve --record "$TMPD/rec" --record.max-size nanB
check "record.max-size 1e30" expect_error "--record.max-size: '1e30' is not a size" \
	serve --record "$TMPD/rec" --record.max-size 1e30
check "interval of 2^63 ns" expect_error "--interval: '9223372036854775808ns' is not a duration" \
	serve --interval 9223372036854775808ns
check "bad regex" expect_error "--netdev-include: bad regular expression '(eth'" serve --netdev-include '(eth'
check "bad listen address" expect_error "is not \[HOST\]:PORT" serve --web.listen-address nonsense
check "unreadable --from: the path named once" expect_error \
	"^rocewatch snapshot: /nonexistent/snap.json: No such file or directory$" snapshot --from /nonexistent/snap.json
check "malformed --from names file and position" expect_error "bad-type.json: \$.netdevs\[1\].fields.mtu" \
	snapshot --from "$SOURCE_DIR/tests/fixtures/snapshots/bad-type.json"
check "stray argument" expect_error "unexpected argument 'extra'" snapshot extra

# Port already in use: hold a port, then ask serve for it.
port=$(free_port)
python3 -c "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', $port)); s.listen(); time.sleep(30)" &
holder=$!
on_exit "kill $holder"
wait_until 5 python3 -c "import socket; socket.create_connection(('127.0.0.1', $port)).close()"
check "port already in use" expect_error "Address already in use" serve --web.listen-address "127.0.0.1:$port" \
	--from "$SOURCE_DIR/tests/fixtures/snapshots/seq-ok.json"

check "port in use is a runtime failure: exit 1" bash -c "
	'$ROCEWATCH' serve --web.listen-address 127.0.0.1:$port --from '$SOURCE_DIR/tests/fixtures/snapshots/seq-ok.json' 2>/dev/null; [ \$? -eq 1 ]"

# One exit-code convention per command, in its --help and followed: check and replay
# are Nagios plugins (bad usage is 3, UNKNOWN); the others exit 2 on bad usage.
usage_rc() { # WANT ARGS...
	local want=$1 rc=0
	shift
	timeout 10 "$ROCEWATCH" "$@" >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq "$want" ] || { echo "  rocewatch $*: exit $rc, want $want" >&2; return 1; }
}
for c in "serve 2" "snapshot 2" "report 2" "export 2" "rules 2" "check 3" "replay 3" "probe 3"; do
	set -- $c
	check "$1 --bogus: exit $2" usage_rc "$2" "$1" --bogus
	check "$1 --help documents its exit status" bash -c "'$ROCEWATCH' $1 --help | grep -q '^Exit status'"
done
check "serve with a malformed listen address is bad usage: exit 2" usage_rc 2 serve --web.listen-address nonsense
check "version with an argument: exit 2" usage_rc 2 version extra
check "rocewatch --help states the convention" bash -c "'$ROCEWATCH' --help | grep -q 'check, probe and replay follow the Nagios plugin convention'"

# probe: bad values are UNKNOWN (3) with one line naming the flag; without an RDMA device
# (this tier's machines have none) probe and serve --probe say so in one line
one_line() { # WANT_RC PATTERN ARGS...: exit WANT_RC, stderr one line matching PATTERN
	local want=$1 pat=$2 rc=0 err
	shift 2
	err=$(timeout 20 "$ROCEWATCH" "$@" 2>&1 >/dev/null) || rc=$?
	[ "$rc" -eq "$want" ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && grep -qE -- "$pat" <<<"$err" ||
		{ echo "  rocewatch $*: exit $rc, stderr: $err" >&2; return 1; }
}
check "probe without a node: exit 3, one line" one_line 3 'no NODE given' probe
check "probe --sizes not increasing: exit 3, one line" one_line 3 '^rocewatch probe: --sizes: .64,32.' probe --sizes 64,32 n1
check "probe --sizes over 4096: exit 3" one_line 3 '--sizes' probe --sizes 64,8192 n1
check "probe --dscp 64: exit 3" one_line 3 '--dscp: .64. is not 0-63' probe --dscp 64 n1
check "probe --loss-critical 120: exit 3" one_line 3 '--loss-critical' probe --loss-critical 120 n1
check "probe --probe-interval 10us: exit 3" one_line 3 '--probe-interval: .10us. is not a duration of at least 1ms' probe --probe-interval 10us n1
check "probe a bad hostlist: exit 3" one_line 3 'rocewatch probe: ' probe 'n[1-'
if [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	check "probe without an RDMA device: exit 3, one line" one_line 3 '^rocewatch probe: no RDMA device' probe 127.0.0.1:9
	check "serve --probe without an RDMA device: exit 1, one line" one_line 1 '^rocewatch serve: --probe: no RDMA device' \
		serve --probe --web.listen-address 127.0.0.1:0
else
	echo "SKIP: this machine has RDMA devices; the no-device errors are not checked"
fi

# snapshot --from replays and writes valid JSON with the replayed facts
check "snapshot --from replays" bash -c "'$ROCEWATCH' snapshot --from '$SOURCE_DIR/tests/fixtures/snapshots/seq-ok.json' | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"schema\"]==\"rocewatch-snapshot\"; assert d[\"netdevs\"][0][\"fields\"][\"mtu\"]==1500, d'"
check "snapshot -o writes a file" bash -c "'$ROCEWATCH' snapshot -o '$TMPD/s.json' --from '$SOURCE_DIR/tests/fixtures/snapshots/seq-ok.json' && python3 -m json.tool '$TMPD/s.json' >/dev/null"
# serve --probe adds a "probe" section beside the model in /api/v1/state; readers (fleet, --from) ignore it
check "a snapshot with serve's probe section reads as one without" bash -c "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d[\"probe\"]={\"version\":1,\"ports\":[]}; json.dump(d,open(sys.argv[2],\"w\"))' '$TMPD/s.json' '$TMPD/s-probe.json' && '$ROCEWATCH' snapshot --from '$TMPD/s-probe.json' | cmp - '$TMPD/s.json'"
check "snapshot of this machine is valid JSON with collectors" bash -c "'$ROCEWATCH' snapshot | python3 -c 'import json,sys; d=json.load(sys.stdin); assert \"link\" in d[\"collectors\"], d[\"collectors\"]'"

finish
