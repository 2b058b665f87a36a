#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The flight recorder end to end: serve --from replays a synthetic incident
# one snapshot per 100 ms poll into --record DIR; report must find the pause
# storm and the retries at the polls they happened; SIGUSR1 and POST
# /api/v1/capture cut capture files; kill -9 under load loses nothing that was
# committed; retention keeps the database within its age and size bounds.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_cmd curl

GEN="$SOURCE_DIR/tests/recorder/gen-snapshots.py"
export ROCEWATCH_NO_PROGRESS=1
# whole lines to grep; the 80-column layout is checked apart below
export COLUMNS=250

# sql DB QUERY: print the rows, |-separated (python: no sqlite3 CLI needed)
sql() {
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
PY
}

metric() { # PORT NAME: value of an unlabelled sample on /metrics
	curl -sf "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}
export -f sql metric

start_serve() { # PORT DIR FROM [ARGS...]: starts serve, sets $serve_pid
	local port=$1 dir=$2 from=$3
	shift 3
	"$ROCEWATCH" serve --from "$from" --interval 100ms --config-interval 100ms \
		--web.listen-address "127.0.0.1:$port" --record "$dir" "$@" \
		>>"$TMPD/serve.log" 2>&1 &
	serve_pid=$!
	on_exit "kill -9 $serve_pid"
	wait_until 20 curl -sf "http://127.0.0.1:$port/healthz" || die "serve did not start: $(tail -5 "$TMPD/serve.log")"
}

stop_serve() {
	kill "$serve_pid" 2>/dev/null || true
	wait "$serve_pid" 2>/dev/null || true
}

# ---- round trip: the incident, recorded and reported ----
python3 "$GEN" incident 90 "$TMPD/incident.json" >"$TMPD/truth.json"
port=$(free_port)
start_serve "$port" "$TMPD/rec" "$TMPD/incident.json" --record.capture-before 10s --record.capture-after 1s \
	--web.enable-capture-api
wait_until 30 bash -c "[ \"\$(curl -sf http://127.0.0.1:$port/metrics | awk '\$1==\"rocewatch_recorder_last_committed_poll\"{print \$2}')\" -ge 95 ]" ||
	die "the recorder did not commit 95 polls: $(tail -5 "$TMPD/serve.log")"
# The capture below must find data older than its 10 s window: wait for the
# recording to span 11 s (however long the polls take on this machine).
wait_until 60 bash -c "[ \"\$(sql '$TMPD/rec/rocewatch.db' 'SELECT max(t_ms) - min(t_ms) >= 11000 FROM polls')\" = 1 ]" ||
	die "the recording did not reach 11 s: $(tail -5 "$TMPD/serve.log")"

check "POST /api/v1/capture is accepted with the capture's name" bash -c \
	"curl -sf -X POST http://127.0.0.1:$port/api/v1/capture | tee '$TMPD/capture.json' | grep -q '\"file\":\"$TMPD/rec/capture-gpu-node-07-.*-api.db\"'"
check "GET /api/v1/capture is refused (405)" bash -c \
	"[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/api/v1/capture)\" = 405 ]"
check "the capture file appears after --record.capture-after" \
	wait_until 15 bash -c "ls '$TMPD'/rec/capture-gpu-node-07-*-api.db"
stop_serve

"$ROCEWATCH" report --db "$TMPD/rec" --format json >"$TMPD/report.json" 2>"$TMPD/report.err" ||
	die "report failed: $(cat "$TMPD/report.err")"
"$ROCEWATCH" report --db "$TMPD/rec" >"$TMPD/report.txt" 2>&1 || die "text report failed"

# fits WIDTH FILE: no line of FILE is wider than WIDTH (and some line is wider than 60:
# a report squeezed to nothing would pass otherwise)
fits() {
	awk -v w="$1" 'length($0) > w { print FILENAME ":" NR ": " length($0) " columns" > "/dev/stderr"; bad = 1 }
		length($0) > 60 { wide = 1 } END { exit bad || !wide }' "$2"
}
export -f fits
check "report text: 80 columns without COLUMNS (the counter's text under its row)" bash -c \
	"env -u COLUMNS '$ROCEWATCH' report --db '$TMPD/rec' >'$TMPD/r80.txt' && fits 80 '$TMPD/r80.txt' &&
	 grep -Eq '^      local ACK timeouts: [0-9]+ events in [0-9.]+ s, peak ' '$TMPD/r80.txt'"
check "report text: COLUMNS=100 is respected" bash -c \
	"COLUMNS=100 '$ROCEWATCH' report --db '$TMPD/rec' >'$TMPD/r100.txt' && fits 100 '$TMPD/r100.txt'"
check "replay text: 80 columns without COLUMNS" bash -c \
	"env -u COLUMNS '$ROCEWATCH' replay --db '$TMPD/rec' >'$TMPD/p80.txt'; fits 80 '$TMPD/p80.txt' &&
	 grep -Eq '^20[0-9-]+T[0-9:.]+Z  FIRING  pfc_only_on_roce_priority  eth2  critical$' '$TMPD/p80.txt' &&
	 grep -q '^    fatal, action: fix-config; PFC enabled on {3,4}, expected only {3}$' '$TMPD/p80.txt'"
# an alert event says what fired, so the report read later needs nothing else
check "report events: an alert names its rule and what fired" \
	grep -Eq '  alert +no_local_ack_timeouts on mlx5_0: firing: [0-9]+ ACK timeouts' "$TMPD/report.txt"

# poll seq k+1 replayed snapshot k (a fresh database numbers polls from 1)
verify_round_trip() {
	python3 - "$TMPD/rec/rocewatch.db" "$TMPD/report.json" "$TMPD/truth.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rep = json.load(open(sys.argv[2]))
truth = json.load(open(sys.argv[3]))
interval = rep["interval_ms"]
t = {seq - 1: ms for seq, ms in db.execute("SELECT seq, t_ms FROM polls")}
fail = []

def near(what, got, want):
    if abs(got - want) > interval:
        fail.append("%s: %d ms off (got %d, want %d)" % (what, got - want, got, want))

def peak(incs):
    # the poll with the highest rate: the data's peak, given when the polls really ran
    rate = {int(k): v * 1000.0 / (t[int(k)] - t[int(k) - 1]) for k, v in incs.items()}
    k = max(rate, key=rate.get)
    return k, rate[k]

def find(cat, **kw):
    hits = [a for a in rep["activity"] if a["category"] == cat and
            all(a.get(k) == v for k, v in kw.items())]
    if len(hits) != 1:
        fail.append("%s %s: %d episodes, want 1: %s" % (cat, kw, len(hits), hits))
        return None
    return hits[0]

p = truth["pause"]
a = find("pause", device=p["device"], priority=p["priority"], direction="rx")
if a:
    near("pause start", a["start_unix_ms"], t[p["first_poll"] - 1])
    near("pause first increase", a["first_increase_unix_ms"], t[p["first_poll"]])
    near("pause end", a["end_unix_ms"], t[p["last_poll"]])
    k, rate = peak(p["increments"])
    near("pause peak", a["peak_unix_ms"], t[k])
    if abs(a["peak_rate"] - rate) > 1e-6 * rate:
        fail.append("pause peak rate %s, want %s" % (a["peak_rate"], rate))
    if a["total"] != p["frames"]:
        fail.append("pause total %s, want %s" % (a["total"], p["frames"]))
others = [x for x in rep["activity"] if x["category"] == "pause" and x.get("priority") != 3]
if others:
    fail.append("pause on other priorities: %s" % others)
r = truth["retries"]
a = find("retry", device="%s/%d" % (r["device"], r["port"]), counter=r["counter"])
if a:
    near("retry start", a["start_unix_ms"], t[r["first_poll"] - 1])
    near("retry end", a["end_unix_ms"], t[r["last_poll"]])
    k, rate = peak(r["increments"])
    near("retry peak", a["peak_unix_ms"], t[k])
    if abs(a["peak_rate"] - rate) > 1e-6 * rate:
        fail.append("retry peak rate %s, want %s" % (a["peak_rate"], rate))
    if a["total"] != r["total"] or a.get("netdev") != "eth2":
        fail.append("retry total/netdev: %s" % a)
c = truth["config"]
ch = [x for x in rep["config_changes"] if x["field"] == c["field"]]
if len(ch) != 1 or ch[0]["old"] != "[3]" or ch[0]["new"] != "[3,4]":
    fail.append("config changes: %s" % rep["config_changes"])
else:
    near("config change", ch[0]["time_unix_ms"], t[c["poll"]])
if not any(e["kind"] == "capture" and e["name"] == "api" for e in rep["events"]):
    fail.append("capture event missing: %s" % rep["events"])
for f in fail:
    print("  " + f)
sys.exit(1 if fail else 0)
PY
}
check "report: device, priority, start, end, peak within one poll of the truth" verify_round_trip
check "text report names eth2 prio 3 and the retries" bash -c \
	"grep -q 'pause .*rx prio 3 PFC pause frames: 70000 frames' '$TMPD/report.txt' && grep -q 'local ACK timeouts: 145 events' '$TMPD/report.txt' && grep -q 'pfc.enabled: \[3\] -> \[3,4\]' '$TMPD/report.txt'"
check "report --device filters" bash -c \
	"'$ROCEWATCH' report --db '$TMPD/rec' --device mlx5_0 | grep -q local && ! '$ROCEWATCH' report --db '$TMPD/rec' --device mlx5_0 | grep -q 'PFC pause'"
check "report --device the recording never saw: exit 1, naming what it has" bash -c "
	out=\$('$ROCEWATCH' report --db '$TMPD/rec' --device nosuch 2>&1); rc=\$?;
	[ \$rc -eq 1 ] && [ \"\$out\" = \"rocewatch report: $TMPD/rec: no device 'nosuch' in the recording (it has: eth2, mlx5_0)\" ]"
check "report --since past the end of the data: exit 1, not 'nothing moved'" bash -c "
	out=\$('$ROCEWATCH' report --db '$TMPD/rec' --since 2030-01-01T00:00:00Z 2>&1); rc=\$?;
	[ \$rc -eq 1 ] && echo \"\$out\" | grep -q '^rocewatch report: $TMPD/rec: no poll in the window asked for (--since/--until); the recording holds 20' &&
	! echo \"\$out\" | grep -q 'nothing moved'"
check "report --since/--until narrows the window" bash -c \
	"t=\$(python3 -c \"import sqlite3,datetime; ms=sqlite3.connect('$TMPD/rec/rocewatch.db').execute('SELECT t_ms FROM polls WHERE seq=45').fetchone()[0]; print(datetime.datetime.utcfromtimestamp(ms/1000).strftime('%Y-%m-%dT%H:%M:%S.%fZ'))\"); \
	 '$ROCEWATCH' report --db '$TMPD/rec' --since \"\$t\" --format json | python3 -c 'import json,sys; r=json.load(sys.stdin); c=[a[\"category\"] for a in r[\"activity\"]]; sys.exit(0 if \"pause\" not in c and \"retry\" in c else 1)'"
# one panel per object and kind that moved, each on its own scale; the PFC change and
# the alerts listed and marked at their times
svg_panels() {
	"$ROCEWATCH" report --db "$TMPD/rec" --format svg -o "$TMPD/r.svg" &&
		python3 - "$TMPD/r.svg" <<'PY'
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
texts = [n for n in d.getElementsByTagName("text") if n.firstChild]
titles = [n.firstChild.data for n in texts if n.getAttribute("class") == "pt"]
want = ["eth2: pause frames per second, by priority", "eth2: share of the time paused, by priority",
        "eth2: pause storm events per second",
        "mlx5_0/1 (eth2): transport retries and ACK timeouts per second",
        "mlx5_0/1 (eth2): out-of-sequence per second"]
assert titles == want, titles
marks = [n.firstChild.data for n in texts if n.getAttribute("class") == "ml"]
assert any("pfc.enabled: [3] -> [3,4]" in x for x in marks), marks
assert any("alert pfc_only_on_roce_priority on eth2: firing" in x for x in marks), marks
assert any("alert no_local_ack_timeouts on mlx5_0: firing" in x for x in marks), marks
# each panel its own scale: its highest point reaches at least 40 % of its plot height
# (3 ACK timeouts/s on a 20 k/s axis would not); rates depend on the polls' real times,
# so the check is on the drawing, not on values
groups = d.getElementsByTagName("g")
for g in groups:
    grid = [float(l.getAttribute("y1")) for l in g.getElementsByTagName("line") if l.getAttribute("class") == "grid"]
    top, bottom = min(grid), max(grid)
    ys = [float(pt.split(",")[1]) for pl in g.getElementsByTagName("polyline")
          for pt in pl.getAttribute("points").split()]
    assert bottom - min(ys) >= 0.4 * (bottom - top), (bottom, top, min(ys))
# marks drawn in every panel (a line per mark)
for g in groups:
    assert len([l for l in g.getElementsByTagName("line") if l.getAttribute("class") in ("mc", "ma", "mr")]) == len(marks), "marks"
PY
}
check "report --format svg: a panel per object and kind, own scales, changes and alerts marked" svg_panels
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
	# kept as a test artefact, as the status page's screenshots are
	ART="${BUILD_DIR:-$TMPD}/test-artefacts/report-svg"
	mkdir -p "$ART"
	svg_shot() {
		cp "$TMPD/r.svg" "$ART/report.svg" &&
			timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
				--no-first-run --disable-background-networking --disable-component-update \
				--disable-sync --disable-extensions --user-data-dir="$(mktemp -d "$TMPD/chromium.XXXXXX")" \
				--hide-scrollbars --screenshot="$ART/report-svg.png" --window-size=1000,1500 \
				"file://$ART/report.svg" >/dev/null 2>>"$TMPD/chromium.log" &&
			python3 - "$ART/report-svg.png" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
assert struct.unpack(">II", b[16:24]) == (1000, 1500)
assert len(b) > 20000, "nearly empty: %d bytes" % len(b)
PY
	}
	check "the SVG report in headless Chromium: screenshot kept in $ART" svg_shot
fi
if command -v rsvg-convert >/dev/null; then
	check "the SVG renders (rsvg-convert)" bash -c \
		"'$ROCEWATCH' report --db '$TMPD/rec' --format svg -o '$TMPD/r.svg' && rsvg-convert '$TMPD/r.svg' -o '$TMPD/r.png' && [ -s '$TMPD/r.png' ]"
fi

# ---- replay: the rules over the recording, at the recorded times ----
cat >"$TMPD/storm.yaml" <<'YAML'
profile: storm-test
description: PFC pause on the RoCE priority for half a second
rules:
  - name: pausing_on_roce_priority
    scope: netdev
    expr: rate(pfc.rx_pause[3], 1s) == 0
    for: 500ms
    severity: warning
    summary: "{rate(pfc.rx_pause[3], 1s)} pause frames/s on priority 3"
YAML
set +e
"$ROCEWATCH" replay --db "$TMPD/rec" -j >"$TMPD/replay.json" 2>"$TMPD/replay.err"
replay_rc=$?
"$ROCEWATCH" replay --db "$TMPD/rec" --profile "$TMPD/storm.yaml" -j >"$TMPD/replay-storm.json" 2>>"$TMPD/replay.err"
storm_rc=$?
set -e
verify_replay() {
	python3 - "$TMPD/rec/rocewatch.db" "$TMPD/replay.json" "$TMPD/replay-storm.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
t = {seq - 1: ms for seq, ms in db.execute("SELECT seq, t_ms FROM polls WHERE run = 1")}
rep = json.load(open(sys.argv[2]))
storm = json.load(open(sys.argv[3]))
fail = []
def fired(r, name, device, port=None):
    hits = [x for x in r["transitions"] if x["state"] == "firing" and x["alertname"] == name
            and x["device"] == device and x.get("port") == port]
    return hits[0]["time_unix_ms"] if len(hits) == 1 else None
# the default profile: when the counters and the setting changed (gen-snapshots.py)
for name, dev, port, poll in [("no_pause_storm_warnings", "eth2", None, 35),
                              ("no_out_of_sequence", "mlx5_0", "1", 40),
                              ("no_local_ack_timeouts", "mlx5_0", "1", 40),
                              ("pfc_only_on_roce_priority", "eth2", None, 60)]:
    got = fired(rep, name, dev, port)
    if got != t[poll]:
        fail.append("%s@%s: fired at %s, want poll %d at %d" % (name, dev, got, poll, t[poll]))
# the storm rule: pending from poll 20, firing once 500 ms have passed, resolved after
want = min(k for k in t if k >= 20 and t[k] - t[20] >= 500)
got = fired(storm, "pausing_on_roce_priority", "eth2")
if got != t[want]:
    fail.append("storm: fired at %s, want poll %d at %d" % (got, want, t[want]))
res = [x for x in storm["transitions"] if x["state"] == "resolved"]
if len(res) != 1 or not (t[39] < res[0]["time_unix_ms"] <= t[39] + 1000 + 200):
    fail.append("storm: resolved %s, want within 1 s after poll 39 (%d)" % (res, t[39]))
for f in fail:
    print("  " + f)
sys.exit(1 if fail else 0)
PY
}
check "replay: the default profile's alerts fire at the polls the incident caused them" verify_replay
check "replay exits 2 (a critical alert fired) and 1 for warnings only" bash -c \
	"[ $replay_rc = 2 ] && [ $storm_rc = 1 ] || { cat '$TMPD/replay.err'; false; }"
check "replay text names the alert, object and time" bash -c \
	"'$ROCEWATCH' replay --db '$TMPD/rec' | grep -Eq '^20[0-9-]+T[0-9:.]+Z  FIRING +pfc_only_on_roce_priority +eth2 +critical'; [ \${PIPESTATUS[0]} = 2 ]"
check "replay text: each summary once, one name per object (mlx5_0/1 everywhere)" bash -c "
	'$ROCEWATCH' replay --db '$TMPD/rec' >'$TMPD/replay.txt'; [ \$? = 2 ] || exit 1;
	grep -Eq '  FIRING +pfc_only_on_roce_priority +eth2 +critical fatal, action: fix-config; PFC enabled on \{3,4\}, expected only \{3\}\$' '$TMPD/replay.txt' &&
	grep -Eq '  FIRING +no_local_ack_timeouts +mlx5_0/1 +warning +degraded, action: fix-config; ' '$TMPD/replay.txt' &&
	! grep -q ' -- ' '$TMPD/replay.txt' &&
	grep -Eq '  FIRING +no_local_ack_timeouts +mlx5_0/1 ' '$TMPD/replay.txt' &&
	grep -q '^still firing at the end: .*no_local_ack_timeouts@mlx5_0/1' '$TMPD/replay.txt' &&
	! grep -Eq '@mlx5_0( |\$)' '$TMPD/replay.txt'"
check "replay with a bad profile: exit 3, file:line named" bash -c "
	printf 'profile: x\nrules:\n  - name: r\n    scope: netdev\n    expr: mtu ==\n    severity: warning\n' > '$TMPD/bad.yaml';
	out=\$('$ROCEWATCH' replay --db '$TMPD/rec' --profile '$TMPD/bad.yaml' 2>&1); rc=\$?;
	[ \$rc = 3 ] && echo \"\$out\" | grep -q 'bad.yaml:5'"

# the capture: self-contained, the window around the trigger, reported alone
cap=$(ls "$TMPD"/rec/capture-gpu-node-07-*-api.db | head -1)
check "capture: schema, keyframe first, snapshot and reason" bash -c "
	[ \"\$(sql '$cap' 'PRAGMA user_version')\" = 2 ] &&
	[ \"\$(sql '$cap' 'SELECT name FROM profiles')\" = lossless-roce ] &&
	[ \"\$(sql '$cap' 'SELECT keyframe FROM polls ORDER BY t_ms LIMIT 1')\" = 1 ] &&
	[ \"\$(sql '$cap' \"SELECT value FROM meta WHERE key = 'capture_reason'\")\" = api ] &&
	sql '$cap' \"SELECT value FROM meta WHERE key = 'snapshot'\" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"netdevs\"][0][\"name\"] == \"eth2\"' &&
	[ \"\$(sql '$cap' 'SELECT count(*) FROM samples s WHERE NOT EXISTS (SELECT 1 FROM series WHERE id = s.series_id)')\" = 0 ]"
# The window's polls, compared with the recording's own: no wall-clock spacing assumed.
# MUST_COVER 1: data older than the window exists; STOPPED 1: serve stopped before
# trigger + after, which ends the window early.
verify_window() { # CAPTURE BEFORE_MS AFTER_MS MUST_COVER [STOPPED]
	python3 - "$TMPD/rec/rocewatch.db" "$@" <<'PY'
import sqlite3, sys
main = sqlite3.connect(sys.argv[1])
cap = sqlite3.connect(sys.argv[2])
before, after, cover = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
stopped = len(sys.argv) > 6 and sys.argv[6] == "1"
meta = dict(cap.execute("SELECT key, value FROM meta"))
trig, start, end = (int(meta[k]) for k in ("capture_trigger_ms", "window_start_ms", "window_end_ms"))
fail = []
if start != trig - before or not (trig <= end <= trig + after if stopped else end == trig + after):
    fail.append("window [%d, %d], trigger %d: want [trigger - %d, trigger + %d]" % (start, end, trig, before, after))
polls = [t for (t,) in main.execute("SELECT t_ms FROM polls ORDER BY t_ms")]
older = [t for t in polls if t <= start]
if cover and not older:
    fail.append("the recording has no poll at or before the window start: the test did not wait")
first = older[-1] if older else min(t for t in polls if t > start)
want = [t for t in polls if first <= t <= end]
got = [t for (t,) in cap.execute("SELECT t_ms FROM polls ORDER BY t_ms")]
if got != want:
    fail.append("capture polls %d..%d (%d), want the recording's %d..%d (%d)" %
                (got[0] if got else -1, got[-1] if got else -1, len(got), want[0], want[-1], len(want)))
if cover and got and got[0] > start:
    fail.append("first poll %d ms after the window start: the window is not covered" % (got[0] - start))
for f in fail:
    print("  " + f)
sys.exit(1 if fail else 0)
PY
}
check "capture: the window is [trigger - before, trigger + after], from the poll at or before its start" \
	verify_window "$cap" 10000 1000 1
check "capture: report reads it and finds the retries" bash -c \
	"'$ROCEWATCH' report '$cap' | grep -q 'local ACK timeouts'"
check "capture: replay runs the rules over it, the ones serve ran" bash -c \
	"'$ROCEWATCH' replay '$cap' >'$TMPD/cap-replay.txt';
	 grep -q 'FIRING    no_local_ack_timeouts' '$TMPD/cap-replay.txt' &&
	 grep -q '^rules as serve ran them (recorded at .*): profile lossless-roce ' '$TMPD/cap-replay.txt'"
# the recorded state (rule results depend on the history each file holds: --no-rules)
check "capture: the state at its first poll equals the recording's" bash -c "
	t0=\$(sql '$cap' 'SELECT min(t_ms) FROM polls');
	a=\$('$ROCEWATCH' export '$cap' --no-rules --since \"\$(python3 -c \"import datetime; print(datetime.datetime.utcfromtimestamp(\$t0/1000).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]+'Z')\")\" | grep \" \$((t0/1000))\\.\$(printf %03d \$((t0%1000)))\$\" | grep -v '^#' | sort);
	b=\$('$ROCEWATCH' export --db '$TMPD/rec' --no-rules --since \"\$(python3 -c \"import datetime; print(datetime.datetime.utcfromtimestamp(\$t0/1000).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]+'Z')\")\" | grep \" \$((t0/1000))\\.\$(printf %03d \$((t0%1000)))\$\" | grep -v '^#' | sort);
	[ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ]"

# SIGUSR1 cuts a capture too; a stop before `after` finalises it early
port=$(free_port)
start_serve "$port" "$TMPD/rec" "$TMPD/incident.json" --record.capture-after 1m
sleep 0.5
kill -USR1 "$serve_pid"
sleep 0.5
stop_serve
check "SIGUSR1: a capture file, finished when serve stops" bash -c "ls '$TMPD'/rec/capture-gpu-node-07-*-sigusr1.db"
# 5 minutes before the trigger is older than the recording: it starts at the first poll
check "SIGUSR1: a window older than the recording starts at its first poll" \
	verify_window "$(ls "$TMPD"/rec/capture-gpu-node-07-*-sigusr1.db | head -1)" 300000 60000 0 1
check "the second run continued the poll numbering" bash -c \
	"[ \"\$(sql '$TMPD/rec/rocewatch.db' 'SELECT count(*) = max(seq), count(DISTINCT run) FROM polls')\" = '1|2' ]"
check "POST /api/v1/capture without --record: 409" bash -c "
	p=\$(python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); print(s.getsockname()[1])');
	'$ROCEWATCH' serve --from '$TMPD/incident.json' --web.listen-address 127.0.0.1:\$p --web.enable-capture-api >/dev/null 2>&1 & pid=\$!;
	for i in \$(seq 100); do curl -sf http://127.0.0.1:\$p/healthz >/dev/null && break; sleep 0.1; done;
	code=\$(curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:\$p/api/v1/capture);
	kill \$pid; wait \$pid; [ \"\$code\" = 409 ]"

# ---- crash safety: kill -9 under load, three times at different moments ----
python3 "$GEN" load 60 "$TMPD/load.json" 8 300 60
verify_after_crash() { # DB COMMITTED_SEQ
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
fail = []
ic = db.execute("PRAGMA integrity_check").fetchall()
if ic != [("ok",)]:
    fail.append("integrity_check: %s" % ic[:5])
n, lo, hi, dropped = db.execute("SELECT count(*), min(seq), max(seq), sum(dropped) FROM polls").fetchone()
if hi < int(sys.argv[2]):
    fail.append("last poll %d < %s reported committed before the kill" % (hi, sys.argv[2]))
if n + dropped != hi - lo + 1:
    fail.append("polls %d..%d: %d rows + %d dropped" % (lo, hi, n, dropped))
bad = db.execute("""SELECT p.seq, p.n_samples, (SELECT count(*) FROM samples s WHERE s.t_ms = p.t_ms),
                    p.n_config, (SELECT count(*) FROM config c WHERE c.t_ms = p.t_ms)
                    FROM polls p""").fetchall()
bad = [b for b in bad if b[1] != b[2] or b[3] != b[4]]
if bad:
    fail.append("polls whose rows are not all there: %s" % bad[:5])
orphans = db.execute("SELECT count(*) FROM samples WHERE t_ms NOT IN (SELECT t_ms FROM polls)").fetchone()[0]
if orphans:
    fail.append("%d samples of no committed poll" % orphans)
for f in fail:
    print("  " + f)
sys.exit(1 if fail else 0)
PY
}
for delay in 1.3 2.1 3.7; do
	port=$(free_port)
	start_serve "$port" "$TMPD/crash" "$TMPD/load.json" --record.ethtool-include '.*'
	sleep "$delay"
	committed=$(metric "$port" rocewatch_recorder_last_committed_poll)
	kill -9 "$serve_pid"
	wait "$serve_pid" 2>/dev/null || true
	check "kill -9 after ${delay}s: report reads it as left (read-only, WAL not yet replayed)" \
		bash -c "'$ROCEWATCH' report --db '$TMPD/crash' -j | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"polls\"] >= ${committed:-1}'"
	check "kill -9 after ${delay}s: database intact, poll $committed and all before it complete" \
		verify_after_crash "$TMPD/crash/rocewatch.db" "${committed:-1}"
done
# 8 x (300 ethtool + 60 hw) + 8 x 6 per-priority arrays x 8 priorities, all changing
check "under load every recorded poll holds every counter" bash -c \
	"[ \"\$(sql '$TMPD/crash/rocewatch.db' 'SELECT min(n_samples) >= 3264 FROM polls')\" = 1 ]"
check "every counter was recorded (8 x (300 ethtool + 60 hw) series and more)" bash -c \
	"[ \"\$(sql '$TMPD/crash/rocewatch.db' \"SELECT count(*) FROM series WHERE source IN ('ethtool', 'hw')\")\" = 2880 ]"

# ---- retention: size ----
port=$(free_port)
max=$((1024 * 1024))
start_serve "$port" "$TMPD/size" "$TMPD/load.json" --record.ethtool-include '.*' --record.max-size 1MiB
peak=0
for _ in $(seq 50); do
	s=$(( $(stat -c %s "$TMPD/size/rocewatch.db" 2>/dev/null || echo 0) + $(stat -c %s "$TMPD/size/rocewatch.db-wal" 2>/dev/null || echo 0) ))
	[ "$s" -gt "$peak" ] && peak=$s
	sleep 0.1
done
deleted=$(metric "$port" rocewatch_recorder_deleted_polls_total)
committed=$(metric "$port" rocewatch_recorder_last_committed_poll)
stop_serve
echo "  size bound 1 MiB: peak database + WAL $peak bytes, $deleted polls deleted," \
	"$(sql "$TMPD/size/rocewatch.db" 'SELECT count(*) FROM polls') kept"
check "size: database + WAL never above --record.max-size" [ "$peak" -le "$max" ]
check "size: old polls were deleted" [ "${deleted:-0}" -gt 0 ]
# How many polls fit depends on how many of them changed every counter (the
# replay's 60 or the quiet ones after it), so the count is not asserted:
# what is kept must be the newest run of polls, whole, from a keyframe on.
check "size: the newest polls are kept, contiguous, and the oldest left is a keyframe" bash -c "
	[ \"\$(sql '$TMPD/size/rocewatch.db' 'SELECT keyframe FROM polls ORDER BY t_ms LIMIT 1')\" = 1 ] &&
	[ \"\$(sql '$TMPD/size/rocewatch.db' 'SELECT max(seq) >= ${committed:-999999999} FROM polls')\" = 1 ] &&
	[ \"\$(sql '$TMPD/size/rocewatch.db' 'SELECT count(*) >= 2 AND count(*) = max(seq) - min(seq) + 1 FROM polls')\" = 1 ] &&
	[ \"\$(sql '$TMPD/size/rocewatch.db' 'PRAGMA integrity_check')\" = ok ]"

# ---- retention: age ----
port=$(free_port)
start_serve "$port" "$TMPD/age" "$TMPD/load.json" --record.retention 2s
sleep 5
deleted=$(metric "$port" rocewatch_recorder_deleted_polls_total)
stop_serve
span=$(sql "$TMPD/age/rocewatch.db" "SELECT max(t_ms) - min(t_ms) FROM polls")
echo "  age bound 2 s: oldest poll $span ms before the newest, $deleted deleted"
# Retention cuts at the newest keyframe older than 2 s, checked every 0.5 s:
# no keyframe that old may have anything before it left.
check "age: deleted up to the newest keyframe older than retention (+ 0.5 s check period)" bash -c "
	[ \"\$(sql '$TMPD/age/rocewatch.db' 'SELECT keyframe FROM polls ORDER BY t_ms LIMIT 1')\" = 1 ] &&
	[ \"\$(sql '$TMPD/age/rocewatch.db' 'SELECT count(*) FROM polls WHERE keyframe AND t_ms > (SELECT min(t_ms) FROM polls) AND t_ms <= (SELECT max(t_ms) FROM polls) - 2700')\" = 0 ]"
check "age: old polls were deleted" [ "${deleted:-0}" -gt 10 ]

check "serve --record.max-size rejects a bound below 256KiB (exit 2)" bash -c "
	out=\$('$ROCEWATCH' serve --from '$TMPD/incident.json' --record '$TMPD/x' --record.max-size 1000 2>&1);
	[ \$? -eq 2 ] && echo \"\$out\" | grep -q 'not a size of at least 256KiB'"
check "a second serve on the same DIR is refused" bash -c "
	p1=\$(python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); print(s.getsockname()[1])');
	'$ROCEWATCH' serve --from '$TMPD/incident.json' --record '$TMPD/two' --web.listen-address 127.0.0.1:\$p1 >/dev/null 2>&1 & pid=\$!;
	for i in \$(seq 100); do curl -sf http://127.0.0.1:\$p1/healthz >/dev/null && break; sleep 0.1; done;
	out=\$('$ROCEWATCH' serve --from '$TMPD/incident.json' --record '$TMPD/two' --web.listen-address 127.0.0.1:0 2>&1); rc=\$?;
	kill \$pid; wait \$pid; [ \$rc -eq 1 ] && echo \"\$out\" | grep -q 'another rocewatch is recording'"
check "report on a file that is not a recording: one clear line, exit 1" bash -c "
	echo hello > '$TMPD/notdb'; out=\$('$ROCEWATCH' report '$TMPD/notdb' 2>&1); rc=\$?;
	[ \$rc -eq 1 ] && [ \$(echo \"\$out\" | wc -l) -eq 1 ] && echo \"\$out\" | grep -q 'notdb'"
check "report on a missing directory: exit 1 naming it" bash -c "
	out=\$('$ROCEWATCH' report --db '$TMPD/nope' 2>&1); [ \$? -eq 1 ] && echo \"\$out\" | grep -q nope"

finish
