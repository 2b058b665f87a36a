# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Helpers for vm-tier scenarios that assert on rocewatch's own output: `snapshot` JSON,
# `check --format json`, and the HTTP endpoints of `serve`. Source after guest-lib.sh:
#     . "$VM_LIB"; . "${VM_LIB%/*}/rw-lib.sh"
# Each helper fails the scenario (vm_fail) with what it saw when rocewatch misbehaves, so a
# scenario reads as a list of expectations. jq does the JSON; every exec costs 0.1-0.3 s of TCG,
# so helpers ask jq for everything they need in one go.

[[ -x ${ROCEWATCH:-} ]] || vm_fail "rocewatch binary '${ROCEWATCH:-}' is not there (build it first)"

# Sanitizer reports end the process with an error; make them say where, and keep leaks on.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# rw_no_sanitizer_report FILE WHAT: fail when a sanitizer wrote to FILE.
rw_no_sanitizer_report() {
	if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$1" 2>/dev/null; then
		vm_fail "$2: sanitizer report: $(grep -m 3 -E 'ERROR: |runtime error:' "$1" | tr '\n' ' ')"
	fi
}

# rw_snapshot OUT [ARGS...]: rocewatch snapshot -o OUT; fail unless it exits 0 with valid JSON.
rw_snapshot() {
	local out=$1 err rc=0
	shift
	err=$("$ROCEWATCH" snapshot -o "$out" "$@" 2>&1) || rc=$?
	[[ -z $err ]] || printf 'rocewatch snapshot: %s\n' "$err" >&2
	((rc == 0)) || vm_fail "rocewatch snapshot $* exited $rc: ${err//$'\n'/ / }"
	# -n and input: jq 1.6's -e alone passes an empty file
	jq -en 'input | .schema == "rocewatch-snapshot"' "$out" >/dev/null ||
		vm_fail "rocewatch snapshot wrote no snapshot JSON to $out"
}

# rw_check OUT [ARGS...]: rocewatch check --format json >OUT; sets RW_CHECK_RC. The Nagios
# codes 0-3 are answers; anything else (a crash, a sanitizer abort) fails the scenario.
rw_check() {
	local out=$1
	shift
	RW_CHECK_RC=0
	"$ROCEWATCH" check --format json "$@" >"$out" 2>"$out.err" || RW_CHECK_RC=$?
	[[ -s $out.err ]] && sed 's/^/rocewatch check: /' "$out.err" >&2
	rw_no_sanitizer_report "$out.err" "rocewatch check"
	((RW_CHECK_RC <= 3)) ||
		vm_fail "rocewatch check $* exited $RW_CHECK_RC: $(head -c 400 "$out.err")"
	[[ $(jq -r type "$out" 2>/dev/null) == object ]] ||
		vm_fail "rocewatch check --format json printed no JSON object (exit $RW_CHECK_RC): $(head -c 300 "$out") $(head -c 300 "$out.err")"
}

# jq filter prelude: port($d; $p), netdev($n) and field(obj; path), which says why a value is
# missing instead of printing null (the message then lands in vm_expect_eq's failure text).
RW_JQ_DEFS='
def port($d; $p): [.rdma_ports[]? | select(.device == $d and .port == ($p | tonumber))] | .[0];
def netdev($n): [.netdevs[]? | select(.name == $n)] | .[0];
def field($o; $f):
  if $o == null then "no such object in the snapshot"
  elif ($o.fields | has($f)) then $o.fields[$f]
  elif ($o.absent | has($f)) then "absent: \($o.absent[$f].reason)"
  else "neither in fields nor in absent" end;
'

# rw_jq FILE ARGS... FILTER: jq -r with the prelude; fail if jq fails.
rw_jq() {
	local file=$1 out
	shift
	local filter=${*: -1}
	out=$(jq -r "${@:1:$#-1}" "$RW_JQ_DEFS $filter" "$file" 2>&1) ||
		vm_fail "jq on ${file##*/}: ${out//$'\n'/ }"
	printf '%s\n' "$out"
}

# rw_port_field SNAP DEV PORT PATH: the field's value (JSON for lists), or why there is none.
rw_port_field() {
	rw_jq "$1" -c --arg d "$2" --arg p "$3" --arg f "$4" \
		'field(port($d; $p); $f) | if type == "string" then . else tojson end'
}

# rw_netdev_field SNAP NAME PATH
rw_netdev_field() {
	rw_jq "$1" -c --arg n "$2" --arg f "$3" \
		'field(netdev($n); $f) | if type == "string" then . else tojson end'
}

# --- serve -----------------------------------------------------------------------------------

RW_SERVE_PID=""
RW_SERVE_PORT=""

# rw_http PORT PATH: GET over bash's /dev/tcp (no exec: cheap under TCG); sets RW_HTTP_STATUS
# and RW_HTTP_BODY. Meant for small answers (/healthz, /api/v1/checks); bash reads byte by byte.
rw_http() {
	local fd resp
	RW_HTTP_STATUS=000
	RW_HTTP_BODY=""
	# The braces matter: a redirection on exec itself would stay on the shell for good.
	{ exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&"$fd"
	IFS= read -r -d '' resp <&"$fd"
	exec {fd}>&-
	[[ $resp =~ ^HTTP/1\.[01]\ ([0-9]{3}) ]] || return 1
	RW_HTTP_STATUS=${BASH_REMATCH[1]}
	RW_HTTP_BODY=${resp#*$'\r\n\r\n'}
}

rw_healthz_ok() { rw_http "$RW_SERVE_PORT" /healthz && [[ $RW_HTTP_STATUS == 200 ]]; }

# rw_fetch PATH OUT: a larger answer (/metrics, /api/v1/state) with curl; fail unless 200.
rw_fetch() {
	local code
	code=$(curl -sS --max-time 30 -o "$2" -w '%{http_code}' "http://127.0.0.1:$RW_SERVE_PORT$1" 2>&1) ||
		vm_fail "GET $1: curl: $code"
	[[ $code == 200 ]] || vm_fail "GET $1: HTTP $code: $(head -c 300 "$2")"
}

# rw_serve_start PORT ARGS...: start `rocewatch serve` on 127.0.0.1:PORT (log in
# $VM_OUT/serve.log) and wait until /healthz answers 200. RW_SERVE_HOST= (empty) listens on
# every address instead, for a peer to reach.
rw_serve_start() {
	local host=${RW_SERVE_HOST-127.0.0.1}
	RW_SERVE_PORT=$1
	shift
	vm_log "+ rocewatch serve --web.listen-address $host:$RW_SERVE_PORT $*"
	"$ROCEWATCH" serve --web.listen-address "$host:$RW_SERVE_PORT" "$@" \
		>"$VM_OUT/serve.log" 2>&1 &
	RW_SERVE_PID=$!
	local deadline=$((SECONDS + 20))
	until rw_healthz_ok; do
		if ! kill -0 "$RW_SERVE_PID" 2>/dev/null; then
			wait "$RW_SERVE_PID"
			vm_fail "rocewatch serve exited ($?) at start: $(tail -n 5 "$VM_OUT/serve.log" | tr '\n' ' ')"
		fi
		((SECONDS < deadline)) ||
			vm_fail "rocewatch serve: /healthz not 200 within 20 s (last: $RW_HTTP_STATUS $RW_HTTP_BODY)"
		sleep 0.2
	done
	vm_log "ok: serve up (pid $RW_SERVE_PID), /healthz 200"
}

# rw_serve_alive: fail when serve has died (a crash shows here, not only at the end).
rw_serve_alive() {
	kill -0 "$RW_SERVE_PID" 2>/dev/null && return 0
	wait "$RW_SERVE_PID"
	local rc=$?
	RW_SERVE_PID=""
	vm_fail "rocewatch serve died (exit $rc): $(tail -n 8 "$VM_OUT/serve.log" | tr '\n' ' ')"
}

# rw_serve_stop: SIGTERM; serve must exit 0 within 10 s, sanitizers silent.
rw_serve_stop() {
	local rc=0 i
	[[ -n $RW_SERVE_PID ]] || return 0
	rw_serve_alive
	kill -TERM "$RW_SERVE_PID"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$RW_SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$RW_SERVE_PID" 2>/dev/null; then
		kill -KILL "$RW_SERVE_PID"
		RW_SERVE_PID=""
		vm_fail "rocewatch serve did not stop within 10 s of SIGTERM"
	fi
	wait "$RW_SERVE_PID" || rc=$?
	RW_SERVE_PID=""
	rw_no_sanitizer_report "$VM_OUT/serve.log" "rocewatch serve"
	((rc == 0)) || vm_fail "rocewatch serve exited $rc on SIGTERM: $(tail -n 5 "$VM_OUT/serve.log" | tr '\n' ' ')"
	vm_log "ok: serve stopped cleanly"
}

# For EXIT traps: stop serve without judging it (the scenario has already failed). Nothing in
# an EXIT trap may fail: under set -e that would replace the scenario's own exit status.
rw_serve_kill() {
	[[ -n $RW_SERVE_PID ]] || return 0
	kill -KILL "$RW_SERVE_PID" 2>/dev/null || true
	wait "$RW_SERVE_PID" 2>/dev/null || true
	RW_SERVE_PID=""
}

# rw_metric FILE NAME LABEL=VALUE...: values of the series NAME whose labels include all the
# given pairs (LABEL=VALUE, unquoted), one per line.
rw_metric() {
	local file=$1 name=$2
	shift 2
	awk -v name="$name" -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		$0 !~ /^#/ {
			i = index($0, "{")
			if (i == 0) { metric = $1; labels = "" }
			else { metric = substr($0, 1, i - 1); labels = substr($0, i, index($0, "}") - i + 1) }
			if (metric != name) next
			for (k = 1; k <= n; k++) {
				eq = index(w[k], "=")
				pair = substr(w[k], 1, eq - 1) "=\"" substr(w[k], eq + 1) "\""
				if (index(labels, "{" pair ",") == 0 && index(labels, "," pair ",") == 0 &&
				    index(labels, "," pair "}") == 0 && index(labels, "{" pair "}") == 0)
					next
			}
			print $NF
		}' "$file"
}

# --- reference tools ---------------------------------------------------------------------------

# rw_ibv_port DEV PORT OUT: `ibv_devinfo -v` of one port, saved for rw_ibv_attr.
rw_ibv_port() {
	ibv_devinfo -v -d "$1" -i "$2" >"$3" 2>&1 || vm_fail "ibv_devinfo -v -d $1 -i $2: $(head -c 300 "$3")"
}

# rw_ibv_attr FILE NAME: the first word after "NAME:" ("active_mtu: 4096 (5)" -> 4096).
rw_ibv_attr() {
	awk -v k="$2:" '$1 == k { print $2; exit }' "$1"
}

# rw_ibv_gids FILE: "INDEX GID TYPE" per GID line of ibv_devinfo -v, GID expanded to the
# eight four-digit groups sysfs prints ("::ffff:10.98.0.1" -> "0000:...:ffff:0a62:0001").
rw_ibv_gids() {
	local idx gid type
	while IFS= read -r line; do
		[[ $line =~ GID\[\ *([0-9]+)\]:[[:space:]]+([0-9a-fA-F:.]+),\ (.*)$ ]] || continue
		idx=${BASH_REMATCH[1]} gid=${BASH_REMATCH[2]} type=${BASH_REMATCH[3]}
		printf '%s %s %s\n' "$idx" "$(rw_gid_expand "$gid")" "$type"
	done <"$1"
}

# rw_gid_expand IPV6: full form, lower case, as /sys/class/infiniband/*/ports/*/gids/N.
rw_gid_expand() {
	local g=${1,,} head tail out="" i n
	local -a h t all
	if [[ $g =~ ^(.*:)([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
		g=${BASH_REMATCH[1]}$(printf '%x:%x' $((BASH_REMATCH[2] << 8 | BASH_REMATCH[3])) \
			$((BASH_REMATCH[4] << 8 | BASH_REMATCH[5])))
	fi
	if [[ $g == *::* ]]; then
		head=${g%%::*} tail=${g#*::}
		IFS=: read -r -a h <<<"$head"
		IFS=: read -r -a t <<<"$tail"
		n=$((8 - ${#h[@]} - ${#t[@]}))
		all=("${h[@]}")
		for ((i = 0; i < n; i++)); do all+=(0); done
		all+=("${t[@]}")
	else
		IFS=: read -r -a all <<<"$g"
	fi
	for i in "${all[@]}"; do out+=$(printf '%04x:' "0x$i"); done
	printf '%s\n' "${out%:}"
}

# rw_sysfs_gids DEV PORT: "INDEX GID TYPE NETDEV" for every non-zero GID in sysfs (reading an
# unused entry's gid_attrs fails with EINVAL, so those are skipped).
rw_sysfs_gids() {
	local p=/sys/class/infiniband/$1/ports/$2 f i gid type ndev
	for f in "$p"/gids/*; do
		i=${f##*/}
		read -r gid <"$f" || continue
		[[ $gid == 0000:0000:0000:0000:0000:0000:0000:0000 ]] && continue
		type=$(<"$p/gid_attrs/types/$i") || continue
		ndev=$(<"$p/gid_attrs/ndevs/$i") || ndev=""
		printf '%s %s %s %s\n' "$i" "$gid" "$type" "$ndev"
	done | sort -n
}

# --- check results -----------------------------------------------------------------------------

# rw_rule CHECK_JSON RULE DEVICE...: "OUTCOME<TAB>SUMMARY" of RULE's result for the object named
# by one of DEVICE... (a netdev for netdev rules, an RDMA device for rdma_port rules), or why
# there is none. Exactly one result must match. The same JSON comes from `check --format json`
# and from serve's /api/v1/checks.
rw_rule() {
	local file=$1 rule=$2
	shift 2
	rw_jq "$file" --arg r "$rule" --arg objs "$*" '
		($objs | split(" ")) as $o |
		[.results[]? | select(.rule == $r and (.object.device as $d | $o | index($d)))] |
		if length == 1 then "\(.[0].outcome)\t\(.[0].summary // "")\(.[0].reason // "" | if . == "" then "" else " (\(.))" end)"
		elif length == 0 then "no result for rule \($r) on \($objs)"
		else "\(length) results for rule \($r) on \($objs)" end'
}

# rw_expect_rule CHECK_JSON RULE OUTCOME WHAT DEVICE...: fail unless RULE's result is OUTCOME;
# sets RW_RULE_SUMMARY.
rw_expect_rule() {
	local file=$1 rule=$2 want=$3 what=$4 res
	shift 4
	res=$(rw_rule "$file" "$rule" "$@")
	RW_RULE_SUMMARY=${res#*$'\t'}
	[[ ${res%%$'\t'*} == "$want" ]] ||
		vm_fail "$what: rule $rule on $*: got '${res%%$'\t'*}' ($RW_RULE_SUMMARY), expected '$want'"
	vm_log "ok: $what: $rule $want: $RW_RULE_SUMMARY"
}

# rw_hw_metrics_match STAT_JSON METRICS DEV: every counter of `rdma -j statistic show link
# DEV/1` (STAT_JSON) is on /metrics (METRICS) for DEV port 1 with the same value. Curated names
# for rxe's packet counters (src/core/fields.c hw_counter_descs), the rest under the driver's
# own name, roce_rdma_hw_<name>_total (the meanings also have roce_rdma_<meaning>_total).
rw_hw_metrics_match() {
	local stat=$1 metrics=$2 dev=$3 name value metric got n=0
	local -A curated=(
		[sent_pkts]=roce_rdma_sent_packets_total
		[rcvd_pkts]=roce_rdma_received_packets_total
	)
	while read -r name value; do
		metric=${curated[$name]:-roce_rdma_hw_${name}_total}
		got=$(rw_metric "$metrics" "$metric" device="$dev" port=1)
		[[ $got == "$value" ]] ||
			vm_fail "/metrics $metric{device=\"$dev\",port=\"1\"} is '$got', rdma statistic $name is $value"
		n=$((n + 1))
	done < <(jq -r '.[0] | del(.ifname, .port) | to_entries[] | "\(.key) \(.value)"' "$stat")
	((n > 0)) || vm_fail "rdma statistic listed no counters for $dev"
	vm_log "ok: /metrics has all $n hw counters of $dev/1 with rdma statistic's values"
}
