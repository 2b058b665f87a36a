#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A serve restart is no new incident: a failure that was firing when serve
# stopped fires again at once when it starts on the same --record DIR, but
# writes no second capture (its capture was written the first time), and the
# recording says it was already firing.  A failure that was not standing
# still gets its capture.
. "$(dirname "$0")/../lib.sh"
need_cmd curl
need_cmd python3
export ROCEWATCH_NO_PROGRESS=1

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
sql() {
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
PY
}
export -f sql

captures_ok() { # PORT: captures this serve wrote
	curl -sf "http://127.0.0.1:$1/metrics" | awk '$1=="rocewatch_recorder_captures_total{result=\"ok\"}"{print $2}'
}
export -f captures_ok
# run_serve FIXTURE [usr1]: serve until the alert fired and one capture was written, then
# stop.  usr1: the capture is SIGUSR1's (a capture the alert asked for would have taken it
# over and been named after the alert: the positive control for "none was asked for").
run_serve() {
	local port pid
	port=$(free_port)
	"$ROCEWATCH" serve --from "$1" --interval 100ms --config-interval 100ms \
		--web.listen-address "127.0.0.1:$port" --record "$TMPD/rec" \
		--record.capture-before 1s --record.capture-after 1s >>"$TMPD/serve.log" 2>&1 &
	pid=$!
	on_exit "kill -9 $pid"
	wait_until 30 bash -c "curl -sf http://127.0.0.1:$port/metrics | grep -q '^roce_alert_firing{alertname=\"pfc_only_on_roce_priority\"'" ||
		die "serve never fired: $(tail -5 "$TMPD/serve.log")"
	[ "${2:-}" = usr1 ] && kill -USR1 "$pid"
	wait_until 30 bash -c "[ \"\$(captures_ok $port)\" -ge 1 ]" ||
		die "no capture written: $(tail -5 "$TMPD/serve.log")"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}
captures() { find "$TMPD/rec" -name 'capture-*-pfc_only_on_roce_priority.db' | wc -l; }

run_serve "$FX/pfc-0-and-3.json"
check "the first run writes the failure's capture" [ "$(captures)" -eq 1 ]
run_serve "$FX/pfc-0-and-3.json" usr1
check "a restart with the failure still standing writes none (SIGUSR1's is there)" bash -c \
	"[ \"\$(find '$TMPD/rec' -name 'capture-*-pfc_only_on_roce_priority.db' | wc -l)\" -eq 1 ] &&
	 [ \"\$(find '$TMPD/rec' -name 'capture-*-sigusr1.db' | wc -l)\" -eq 1 ]"
check "the recording says it was already firing" bash -c \
	"sql '$TMPD/rec/rocewatch.db' \"SELECT detail FROM events WHERE kind = 'alert' AND name = 'pfc_only_on_roce_priority' ORDER BY id\" |
	 tail -1 | grep -q '^firing (already when the last serve stopped): '"
# fixed while serve ran (good.json): resolved; broken again after a restart: a new incident
run_serve_good() {
	local port pid
	port=$(free_port)
	"$ROCEWATCH" serve --from "$FX/good.json" --interval 100ms --config-interval 100ms \
		--web.listen-address "127.0.0.1:$port" --record "$TMPD/rec" >>"$TMPD/serve.log" 2>&1 &
	pid=$!
	wait_until 30 bash -c "sql '$TMPD/rec/rocewatch.db' \"SELECT detail FROM events WHERE kind = 'alert' AND name = 'pfc_only_on_roce_priority' ORDER BY id\" | tail -1 | grep -q '^resolved'" ||
		echo "  never resolved: $(tail -3 "$TMPD/serve.log")" >&2
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}
run_serve_good
sleep 1 # capture names have a one-second resolution
run_serve "$FX/pfc-0-and-3.json"
check "a failure that was resolved and comes back after a restart gets its capture" [ "$(captures)" -eq 2 ]
finish
