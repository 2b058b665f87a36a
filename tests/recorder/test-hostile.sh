#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A recording as an attacker or a damaged disk leaves it: a real one (serve --record)
# with hostile rows added by python's sqlite3 (times of INT64_MAX, INT64_MIN, negative,
# NULL and text; values of text, +-1e300 and INT64_MIN; an unknown object; a NULL id;
# an absurd interval and row count; events with terminal escapes and binary text).
# report (text, json, svg), replay and export must name every bad row on one line,
# report the rest, print no raw control byte, and stay UBSan/ASan-clean.
. "$(dirname "$0")/../lib.sh"
need_cmd curl
need_cmd python3

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
port=$(free_port)
"$ROCEWATCH" serve --from "$FX/good.json" --interval 100ms --web.listen-address "127.0.0.1:$port" \
	--record "$TMPD/rec" >"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
enough_polls() {
	python3 -c 'import sqlite3,sys; n=sqlite3.connect(sys.argv[1], timeout=10).execute("SELECT count(*) FROM polls").fetchone()[0]; sys.exit(n < 12)' \
		"$TMPD/rec/rocewatch.db"
}
wait_until 30 enough_polls || die "no 12 polls recorded: $(tail -5 "$TMPD/serve.log")"
kill "$pid"
wait "$pid" 2>/dev/null || true

python3 - "$TMPD/rec/rocewatch.db" "$TMPD/bad.db" <<'PY'
import shutil, sqlite3, sys
I64MAX, I64MIN = 2**63 - 1, -2**63
shutil.copy(sys.argv[1], sys.argv[2])
db = sqlite3.connect(sys.argv[2])
# a hostile writer need not keep the NOT NULL and type constraints
for t in ("polls", "samples", "events", "runs", "series"):
    db.execute(f"CREATE TABLE x_{t} AS SELECT * FROM {t}")
    db.execute(f"DROP TABLE {t}")
    db.execute(f"ALTER TABLE x_{t} RENAME TO {t}")
times = [r[0] for r in db.execute("SELECT t_ms FROM polls ORDER BY t_ms")]
seq = db.execute("SELECT max(seq) FROM polls").fetchone()[0]
cnt = db.execute("SELECT id FROM series WHERE source IN ('hw', 'port', 'ethtool') ORDER BY id LIMIT 1").fetchone()[0]
for i, t in enumerate([I64MAX, I64MIN, -5000, None, "yesterday"]):
    db.execute("INSERT INTO polls VALUES (?,?,1,1,0,1,0,0)", (900 + i, t))
    if t is not None:
        db.execute("INSERT INTO samples VALUES (?,?,1)", (t, cnt))
db.execute("INSERT INTO polls VALUES (910,?,1,1,0,?,0,0)", (times[-1] + 50, I64MAX))
db.execute("DELETE FROM samples WHERE series_id=? AND t_ms IN (?,?,?,?)", (cnt, *times[5:9]))
db.execute("INSERT INTO samples VALUES (?,?,?)", (times[5], cnt, I64MIN))
db.execute("INSERT INTO samples VALUES (?,?,?)", (times[6], cnt, "lots"))
db.execute("INSERT INTO samples VALUES (?,?,?)", (times[7], cnt, -1e300))
db.execute("INSERT INTO samples VALUES (?,?,?)", (times[8], cnt, 1e300))
nid = db.execute("SELECT max(id) FROM series").fetchone()[0] + 1
db.execute("INSERT INTO series VALUES (?, 'switch', 'sw1', 0, '', 'field', 'x', -1, 0)", (nid,))
db.execute("INSERT INTO series VALUES (NULL, 'netdev', 'eth9', 0, '', 'field', 'mtu', -1, 0)")
ev = "INSERT INTO events (id, t_ms, kind, object, device, name, detail) VALUES (?,?,?,?,?,?,?)"
db.execute(ev, (1, times[5], "alert", "netdev", "eth2", "rule\x1b[2J", "firing \x1b[31mred\x07"))
db.execute(ev, (2, I64MAX, "alert", "netdev", "eth2", "r", "far future"))
db.execute(ev, (3, -1, "restart", None, None, None, None))
db.execute(ev, (4, "noon", "capture", "", "", "", ""))
db.execute(ev, (5, times[6], "capture", "", "", "bin", b"\x00\x01bin\xff"))
db.execute("UPDATE runs SET interval_ms=?", (I64MAX,))
# the rules serve ran: rows without a time, a hash, a name or JSON, and a --param with escapes
db.execute("CREATE TABLE x_profiles AS SELECT * FROM profiles")
db.execute("DROP TABLE profiles")
db.execute("ALTER TABLE x_profiles RENAME TO profiles")
t0, name, source, origin, h, params = db.execute("SELECT t_ms, name, source, origin, text_hash, params FROM profiles").fetchone()
pr = "INSERT INTO profiles VALUES (?,?,?,?,?,?,?)"
db.execute(pr, ("noon", 0, name, source, origin, h, params))
db.execute(pr, (t0, 1, None, source, origin, h, params))
db.execute(pr, (t0, 2, "p2", source, origin, "xyz", params))
db.execute(pr, (t0, 3, "p3", source, origin, h, "{not json"))
db.execute(pr, (t0, 4, "p4", source, origin, h, '[{"value": "3"}]'))
db.execute("UPDATE profiles SET params = replace(params, '\"name\":\"roce_priority\",\"value\":\"3\"',"
           " '\"name\":\"roce_priority\",\"value\":\"3\",\"given\":\"3\\u001b[31m\"') WHERE pos = 0")
db.commit()
PY

# run NAME ARGS...: exit 0 (replay: 0-2, the alerts that fired), stdout and stderr
# kept, no sanitizer report
run() {
	local name=$1 rc=0 max=0
	shift
	[ "$name" = replay ] && max=2
	"$ROCEWATCH" "$@" >"$TMPD/$name.out" 2>"$TMPD/$name.err" || rc=$?
	[ "$rc" -le "$max" ] || { echo "  $name: exit $rc: $(tail -3 "$TMPD/$name.err")" >&2; return 1; }
	! grep -Eq 'runtime error|Sanitizer' "$TMPD/$name.err" || { grep -E 'runtime error|Sanitizer' "$TMPD/$name.err" >&2; return 1; }
}
# names NAME PREFIX: every bad row named, each on one line
names() {
	local err="$TMPD/$1.err" p="$2: $TMPD/bad.db" ok=0 l
	for l in \
		"poll 900: t_ms 9223372036854775807 is not a time in range (ms since 1970 up to 9223372036854); skipped" \
		"poll 901: t_ms -9223372036854775808 is not a time in range" \
		"poll 902: t_ms -5000 is not a time in range" \
		"poll 903: t_ms NULL is not a time in range" \
		"poll 904: t_ms 'yesterday' is not a time in range" \
		"poll 910: claims 9223372036854775807 samples and 0 configuration rows; skipped" \
		"run 1: interval_ms 9223372036854775807 out of range 1..86400000; skipped" \
		"series $nid: object 'switch' unknown to this rocewatch; skipped" \
		"a series with id NULL; skipped"; do
		grep -qF "$p: $l" "$err" || { echo "  $1: no line '$p: $l'" >&2; ok=1; }
	done
	return $ok
}
read -r cnt nid < <(python3 -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(d.execute("SELECT id FROM series WHERE source IN (\"hw\", \"port\", \"ethtool\") ORDER BY id LIMIT 1").fetchone()[0], d.execute("SELECT max(id) FROM series").fetchone()[0])' "$TMPD/bad.db")
polls=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM polls").fetchone()[0])' "$TMPD/rec/rocewatch.db")

check "report: exit 0, sanitizer-clean" run report report --db "$TMPD/bad.db"
check "report: every bad row named" names report "rocewatch report"
check "report: a text value and +-1e300 named as no counter value" bash -c "
	grep -qF 'of series $cnt (' '$TMPD/report.err' &&
	grep -qF \"value 'lots' is no number; skipped\" '$TMPD/report.err' &&
	grep -qF '-1e+300 is no counter value; skipped' '$TMPD/report.err' &&
	grep -qF '1e+300 is no counter value; skipped' '$TMPD/report.err'"
check "report: events out of range or without a kind named" bash -c "
	grep -qF 'event 2: t_ms 9223372036854775807 is not a time in range' '$TMPD/report.err' &&
	grep -qF 'event 3: t_ms -1 is not a time in range' '$TMPD/report.err' &&
	grep -qF \"event 4: t_ms 'noon' is not a time in range\" '$TMPD/report.err'"
check "report: the escape sequences shown, not sent to the terminal" bash -c "
	grep -qF 'rule\\x1b[2J on eth2: firing \\x1b[31mred\\x07' '$TMPD/report.out' &&
	grep -qF '\\x00\\x01bin' '$TMPD/report.out' &&
	! grep -q \$'[\\x01-\\x08\\x0b-\\x1f\\x7f]' '$TMPD/report.out' '$TMPD/report.err'"
check "report --format json: the good polls all reported" bash -c "
	'$ROCEWATCH' report --db '$TMPD/bad.db' --format json 2>'$TMPD/rj.err' |
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"polls\"] == $polls, d[\"polls\"]; assert d[\"interval_ms\"] == 1000, d' &&
	! grep -Eq 'runtime error|Sanitizer' '$TMPD/rj.err'"
check "report --format svg: exit 0, sanitizer-clean" run svg report --db "$TMPD/bad.db" --format svg
check "replay: exit 0-2, sanitizer-clean" run replay replay --db "$TMPD/bad.db" --format json
check "replay: every bad row named" names replay "rocewatch replay"
check "replay: every bad row of the profiles table named, the good one run" bash -c "
	grep -qF \"rocewatch replay: $TMPD/bad.db: profiles: t_ms 'noon' is not a time in range; skipped\" '$TMPD/replay.err' &&
	grep -qF 'position 1: a column is empty; skipped' '$TMPD/replay.err' &&
	grep -qF 'position 2: text_hash is no 64-bit hex; skipped' '$TMPD/replay.err' &&
	grep -qF 'position 3: params is not a JSON array; skipped' '$TMPD/replay.err' &&
	grep -qF 'position 4: a parameter without a name or a value; skipped' '$TMPD/replay.err' &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[\"profiles\"] == [\"lossless-roce\"], d; assert \"roce_priority=3\\\\x1b[31m\" in d[\"notes\"][0], d[\"notes\"]' '$TMPD/replay.out'"
check "replay: the good polls evaluated" bash -c "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[\"polls\"] == $polls, d' '$TMPD/replay.out'"
check "export: exit 0, sanitizer-clean, ends in # EOF" bash -c "
	'$ROCEWATCH' export --db '$TMPD/bad.db' -o '$TMPD/x.om' 2>'$TMPD/export.err' &&
	! grep -Eq 'runtime error|Sanitizer' '$TMPD/export.err' && tail -1 '$TMPD/x.om' | grep -qx '# EOF'"
check "export: every bad row named" names export "rocewatch export"
check "export: the text value named" grep -qF "value 'lots' is no number; skipped" "$TMPD/export.err"

# the first REC_BAD_SHOWN (20) bad rows one line each, then a count
python3 - "$TMPD/bad.db" "$TMPD/many.db" <<'PY'
import shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
db = sqlite3.connect(sys.argv[2])
db.executemany("INSERT INTO events (id, t_ms, kind) VALUES (?, -1, 'x')", [(100 + i,) for i in range(500)])
db.commit()
PY
check "500 bad events: 20 lines, then one count" bash -c "
	'$ROCEWATCH' report --db '$TMPD/many.db' >/dev/null 2>'$TMPD/many.err' &&
	[ \$(grep -c 'skipped\$' '$TMPD/many.err') -eq 20 ] &&
	grep -q 'more bad rows are skipped without a line each' '$TMPD/many.err' &&
	grep -Eq 'bad.db|many.db: 5[0-9]{2} bad rows skipped in all' '$TMPD/many.err'"

finish
