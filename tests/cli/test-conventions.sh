#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The conventions of Prometheus exporters (node_exporter, exporter-toolkit) on the
# real binary: --log.level/--log.format with timestamps, --path.* aliases,
# serve --version, collectors and defaults in --help, an unknown collector named,
# --web.telemetry-path, process_* and rocewatch_build_info on the page, and
# --record creating its missing parent directories.
. "$(dirname "$0")/../lib.sh"
need_cmd curl

FIX="$SOURCE_DIR/tests/fixtures"
SNAP="$FIX/snapshots/rules/good.json"
TREE="$FIX/sysfs/mlx5-roce"

# one_line_error PATTERN ARGS...: exit 1 or 2, stderr one line matching PATTERN
one_line_error() {
	local pattern=$1 rc=0
	shift
	timeout 10 "$ROCEWATCH" "$@" >"$TMPD/out" 2>"$TMPD/err" || rc=$?
	{ [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ]; } && [ "$(grep -vc '^$' "$TMPD/err")" -eq 1 ] && grep -qE -- "$pattern" "$TMPD/err" ||
		{ echo "  rocewatch $*: exit $rc, stderr: $(cat "$TMPD/err")" >&2; return 1; }
}

check "serve --version: version, revision and compiler, exit 0" bash -c \
	"'$ROCEWATCH' serve --version | grep -Eq '^rocewatch [0-9]+\.[0-9]+\.[0-9]+ \(revision [0-9a-f]{7,}|unknown, [a-z]+ [0-9.]+\)'"
check "version and serve --version agree" bash -c "[ \"\$('$ROCEWATCH' version)\" = \"\$('$ROCEWATCH' serve --version)\" ]"
check "serve --help lists every collector with its default" bash -c \
	"out=\$('$ROCEWATCH' serve --help); for c in 'link *\[on\]' 'ethtool *\[on\]' 'dcb *\[on\]' 'rdma *\[on\]' 'verbs *\[on\]' 'qos_sysfs *\[on\]' 'host *\[on\]' 'wire *\[off\]'; do grep -Eq \"^  \$c \" <<<\"\$out\" || { echo \"missing \$c\" >&2; exit 1; }; done"
check "serve --help names the new flags" bash -c \
	"out=\$('$ROCEWATCH' serve --help); for f in --web.telemetry-path --log.level --log.format --path.sysfs --path.procfs --devfs-root --version; do grep -q -- \"\$f\" <<<\"\$out\" || { echo \"missing \$f\" >&2; exit 1; }; done"
check "--collector.nosuch is named, with the list" \
	one_line_error "--collector.nosuch: no such collector 'nosuch' \(collectors: link, ethtool" serve --collector.nosuch
check "--no-collector.nosuch too, in check" \
	one_line_error "--no-collector.nosuch: no such collector" snapshot --no-collector.nosuch
check "--log.format xml refused" one_line_error "--log.format: 'xml' is not logfmt or json" snapshot --log.format xml
check "--log.level loud refused, naming the flag" one_line_error "--log.level: 'loud'" snapshot --log.level loud
check "--log-level (the old name) still works" "$ROCEWATCH" snapshot --log-level debug --from "$SNAP" -o /dev/null
check "--web.telemetry-path must be a path" one_line_error "--web.telemetry-path: 'metrics'" serve --web.telemetry-path metrics
check "--web.telemetry-path may not take another endpoint" \
	one_line_error "--web.telemetry-path: /healthz is already an endpoint" serve --web.telemetry-path /healthz

# Whole option names only: getopt_long took any unambiguous prefix, so
# --config /etc/x.yaml silently became --configfs-root and --prof --profile.
unknown_option() { # EXPECTED-RC WORD ARGS...: that exit code, "unknown option ... 'WORD'"
	local want=$1 word=$2 rc=0
	shift 2
	timeout 10 "$ROCEWATCH" "$@" >"$TMPD/out" 2>"$TMPD/err" || rc=$?
	[ "$rc" -eq "$want" ] && [ "$(grep -vc '^$' "$TMPD/err")" -eq 1 ] &&
		{ grep -qF -- "unknown option or missing value: '$word'" "$TMPD/err" ||
			grep -qF -- "unknown option '$word'; did you mean '--" "$TMPD/err"; } ||
		{ echo "  rocewatch $*: exit $rc, stderr: $(cat "$TMPD/err")" >&2; return 1; }
}
check "check --config x: unknown option (not --configfs-root), exit 3" \
	unknown_option 3 --config check --config /etc/x.yaml --from "$SNAP"
check "check --prof NAME: unknown option (not --profile), exit 3" \
	unknown_option 3 --prof check --prof lossless-roce --from "$SNAP"
check "snapshot --config=x: unknown option, exit 2" unknown_option 2 --config=x snapshot --config=x
check "serve --vers: unknown option (not --version), exit 2" unknown_option 2 --vers serve --vers
check "fleet check --prom URL: unknown option (not --prometheus), exit 3" \
	unknown_option 3 --prom fleet check --prom http://127.0.0.1:1 n1
check "report --sinc T: unknown option (not --since), exit 2" \
	unknown_option 2 --sinc report --sinc now x.db
check "the whole name still works: check --profile lossless-roce --from" bash -c \
	"'$ROCEWATCH' check --profile lossless-roce --from '$SNAP' >/dev/null; [ \$? -lt 3 ]"

# The alias reads the same tree as the old name.
timeout 20 "$ROCEWATCH" snapshot --sysfs-root "$TREE" --netdev-exclude '.*' -o "$TMPD/a.json" 2>/dev/null
timeout 20 "$ROCEWATCH" snapshot --path.sysfs "$TREE" --netdev-exclude '.*' -o "$TMPD/b.json" 2>/dev/null
check "--path.sysfs is --sysfs-root" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["rdma_ports"] and [p["fields"] for p in a["rdma_ports"]] == [p["fields"] for p in b["rdma_ports"]]' \
	"$TMPD/a.json" "$TMPD/b.json"

# Log lines: serve says where it listens (info), and "stopping" on SIGTERM.
logline_ok() { # FORMAT
	local port pid
	port=$(free_port)
	"$ROCEWATCH" serve --from "$SNAP" --web.listen-address "127.0.0.1:$port" --log.format "$1" \
		2>"$TMPD/log.$1" &
	pid=$!
	wait_until 20 grep -q listening "$TMPD/log.$1" || { kill $pid; return 1; }
	kill $pid
	wait $pid || return 1
	python3 - "$1" "$TMPD/log.$1" <<'PY'
import json, re, sys
fmt, path = sys.argv[1:3]
lines = [l for l in open(path).read().splitlines() if l]
assert len(lines) >= 2, lines
ts = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
for l in lines:
    if fmt == "json":
        d = json.loads(l)
        assert set(d) == {"ts", "level", "msg"}, d
        assert ts.match(d["ts"]) and d["level"] in ("error", "warn", "info", "debug"), d
    else:
        m = re.match(r'^ts=(\S+) level=(error|warn|info|debug) msg="(.*)"$', l)
        assert m and ts.match(m.group(1)), l
assert any("listening on" in l for l in lines) and "stopping" in lines[-1], lines
PY
}
check "--log.format logfmt: ts=RFC3339 level= msg=\"...\"" logline_ok logfmt
check "--log.format json: one object per line with ts, level, msg" logline_ok json

# serve: the page at --web.telemetry-path, process_* and build_info
port=$(free_port)
"$ROCEWATCH" serve --from "$SNAP" --web.listen-address "127.0.0.1:$port" --interval 100ms \
	--web.telemetry-path /probe/metrics --record "$TMPD/state/deep/rec" >"$TMPD/serve.log" 2>&1 &
on_exit "kill $!"
wait_until 20 curl -sf "http://127.0.0.1:$port/probe/metrics" || die "serve did not come up: $(tail -3 "$TMPD/serve.log")"
curl -sf "http://127.0.0.1:$port/probe/metrics" >"$TMPD/metrics"
check "/metrics is not served when the path is moved" bash -c \
	"[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/metrics)\" = 404 ]"
check "/api/v1/probe without --probe: 404 saying how to turn it on" bash -c \
	"[ \"\$(curl -s -o '$TMPD/probe.json' -w '%{http_code}' http://127.0.0.1:$port/api/v1/probe)\" = 404 ] && grep -q 'start serve with --probe' '$TMPD/probe.json'"
check "the status page links the telemetry path" bash -c "curl -sf http://127.0.0.1:$port/ | grep -q 'href=\"/probe/metrics\"'"
check "process_* metrics" bash -c "for m in process_cpu_seconds_total process_resident_memory_bytes process_open_fds process_max_fds process_start_time_seconds process_virtual_memory_bytes; do grep -Eq \"^\$m [0-9.e+]+\$\" '$TMPD/metrics' || { echo \"missing \$m\" >&2; exit 1; }; done"
check "process_resident_memory_bytes is this process's (> 1 MiB)" \
	awk '$1=="process_resident_memory_bytes"{ok=$2>1048576} END{exit !ok}' "$TMPD/metrics"
check "rocewatch_build_info{version,revision,compiler}" grep -Eq \
	'^rocewatch_build_info\{version="[0-9.]+",revision="([0-9a-f]{7,}|unknown)",compiler="[a-z]+ [0-9.]+"\} 1$' "$TMPD/metrics"
if command -v promtool >/dev/null; then
	check "promtool check metrics accepts the page" bash -c "promtool check metrics <'$TMPD/metrics'"
fi
check "--record created its missing parents" wait_until 20 test -s "$TMPD/state/deep/rec/rocewatch.db"
touch "$TMPD/afile"
check "--record under a file: one line naming it" one_line_error "--record: $TMPD/afile/rec: Not a directory" \
	serve --from "$SNAP" --web.listen-address 127.0.0.1:0 --record "$TMPD/afile/rec"
finish
