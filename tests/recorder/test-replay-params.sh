#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Replay runs what serve ran (issue 41, item 7).  serve --param min_memlock=64KiB
# records a node whose RLIMIT_MEMLOCK is 64 KiB: memlock_unlimited passes live, so
# replay (the recorded profile and parameters) shows no memlock FIRING; replay's own
# --param min_memlock=0 does, and says which recorded value it overrides.  A recording
# an older rocewatch wrote (no profiles table) replays with the profile defaults and
# says so; a rule file changed since the recording is named with both hashes; a reload
# that changed the rules is recorded as a new set.  Each FIRING line carries the
# health class and the action beside the severity.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_cmd curl
export ROCEWATCH_NO_PROGRESS=1
export COLUMNS=250

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules/memlock-64k.json"

# sql DB QUERY: the rows, |-separated (python's sqlite3: no sqlite3 CLI needed)
sql() {
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
db.commit()
PY
}
export -f sql

committed() { # PORT: the last poll the recorder committed
	curl -sf "http://127.0.0.1:$1/metrics" | awk '$1 == "rocewatch_recorder_last_committed_poll" { print $2 }'
}
export -f committed

# record DIR POLLS ARGS...: serve --from the fixture into DIR until POLLS more polls are
# committed, then stop it (SIGTERM: a clean stop)
record() {
	local dir=$1 polls=$2 port pid
	shift 2
	port=$(free_port)
	"$ROCEWATCH" serve --from "$FX" --interval 100ms --config-interval 100ms \
		--web.listen-address "127.0.0.1:$port" --record "$dir" "$@" >>"$TMPD/serve.log" 2>&1 &
	pid=$!
	on_exit "kill -9 $pid"
	wait_until 30 bash -c "[ \"\$(committed $port)\" -ge $polls ]" ||
		die "serve did not record $polls polls: $(tail -5 "$TMPD/serve.log")"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

# replay_to NAME ARGS...: stdout to $TMPD/NAME.out, stderr to NAME.err, exit status to NAME.rc
replay_to() {
	local name=$1 rc=0
	shift
	"$ROCEWATCH" replay "$@" >"$TMPD/$name.out" 2>"$TMPD/$name.err" || rc=$?
	echo "$rc" >"$TMPD/$name.rc"
}
rc_of() { cat "$TMPD/$1.rc"; }

record "$TMPD/rec" 10 --param min_memlock=64KiB

check "the recording keeps the profile, its source, its text hash and every parameter" bash -c "
	[ \"\$(sql '$TMPD/rec/rocewatch.db' 'PRAGMA user_version')\" = 2 ] &&
	row=\$(sql '$TMPD/rec/rocewatch.db' 'SELECT name, origin, length(text_hash), source FROM profiles') &&
	echo \"\$row\" | grep -Eq '^lossless-roce\|(ROCEWATCH_PROFILE_DIR|built-in)\|16\|.*lossless-roce\.yaml$' &&
	sql '$TMPD/rec/rocewatch.db' 'SELECT params FROM profiles' | python3 -c '
import json, sys
p = {x[\"name\"]: x for x in json.load(sys.stdin)}
assert p[\"min_memlock\"] == {\"name\": \"min_memlock\", \"value\": \"65536\", \"given\": \"64KiB\"}, p[\"min_memlock\"]
assert p[\"roce_priority\"] == {\"name\": \"roce_priority\", \"value\": \"3\"}, p[\"roce_priority\"]'"

# ---- by default: what serve ran ----
replay_to plain --db "$TMPD/rec"
check "replay with the recorded --param: memlock_unlimited never fires (exit 0)" bash -c "
	[ $(rc_of plain) = 0 ] && ! grep -q 'memlock_unlimited' '$TMPD/plain.out' &&
	grep -q '^no alert would have fired or resolved\.$' '$TMPD/plain.out'"
check "replay says it runs the recorded profile and serve's --param" \
	grep -Eq "^rules as serve ran them \(recorded at 20[0-9-]+T[0-9:.]+Z\): profile lossless-roce \(.*lossless-roce\.yaml\), serve's --param min_memlock=64KiB$" "$TMPD/plain.out"
check "replay says nothing of changed rules or overrides when there are none" bash -c "
	! grep -Eq 'changed since|overrides|does not say' '$TMPD/plain.out'"
replay_to plain-json --db "$TMPD/rec" -j
check "replay -j: the parameter's value and where it came from" python3 - "$TMPD/plain-json.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rules_recorded"] is True, d
p = {(x["profile"], x["name"]): x for x in d["parameters"]}
assert p[("lossless-roce", "min_memlock")]["value"] == "65536", p[("lossless-roce", "min_memlock")]
assert p[("lossless-roce", "min_memlock")]["from"] == "serve --param"
assert p[("lossless-roce", "roce_priority")]["from"] == "recording"
assert d["transitions"] == [], d["transitions"]
PY

# ---- a flag overrides, and says so ----
replay_to override --db "$TMPD/rec" --param min_memlock=0
check "replay --param min_memlock=0: memlock_unlimited fires (exit 2)" bash -c "
	[ $(rc_of override) = 2 ] && grep -Eq '  FIRING +memlock_unlimited +node +critical ' '$TMPD/override.out'"
check "replay --param says which recorded value it overrides" \
	grep -qx -- "--param min_memlock=0 overrides the recorded 64KiB" "$TMPD/override.out"
check "FIRING shows the health class and the action beside the severity" \
	grep -Eq '^20[0-9-]+T[0-9:.]+Z  FIRING    memlock_unlimited +node +critical fatal, action: fix-config; RLIMIT_MEMLOCK \(bytes\): 65536$' "$TMPD/override.out"
check "80 columns: class and action lead the text under the row" bash -c "
	env -u COLUMNS '$ROCEWATCH' replay --db '$TMPD/rec' --param min_memlock=0 >'$TMPD/o80.txt'; [ \$? = 2 ] &&
	grep -Eq '^20[0-9-]+T[0-9:.]+Z  FIRING  memlock_unlimited  node  critical$' '$TMPD/o80.txt' &&
	grep -qx '    fatal, action: fix-config; RLIMIT_MEMLOCK (bytes): 65536' '$TMPD/o80.txt' &&
	! awk 'length(\$0) > 80 { bad = 1 } END { exit !bad }' '$TMPD/o80.txt'"
replay_to override-json --db "$TMPD/rec" --param min_memlock=0 -j
check "replay -j: class and action of the transition; the flag's parameter" python3 - "$TMPD/override-json.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = [x for x in d["transitions"] if x["alertname"] == "memlock_unlimited"]
assert len(t) == 1 and t[0]["severity"] == "critical", t
assert t[0]["class"] == "fatal" and t[0]["action"] == "fix-config", t
p = {(x["profile"], x["name"]): x for x in d["parameters"]}
assert p[("lossless-roce", "min_memlock")] == {"profile": "lossless-roce", "name": "min_memlock",
                                                "value": "0", "from": "--param"}
assert "--param min_memlock=0 overrides the recorded 64KiB" in d["notes"], d["notes"]
PY

# ---- a recording without the profiles table (schema 1, an older rocewatch) ----
mkdir "$TMPD/old"
cp "$TMPD/rec/rocewatch.db" "$TMPD/old/"
sql "$TMPD/old/rocewatch.db" "DROP TABLE profiles" >/dev/null
sql "$TMPD/old/rocewatch.db" "PRAGMA user_version = 1" >/dev/null
replay_to old --db "$TMPD/old"
check "schema 1: replays with the profile defaults, and says so" bash -c "
	grep -qx 'the recording does not say which parameters serve ran with: profile defaults' '$TMPD/old.out' &&
	[ $(rc_of old) = 2 ] && grep -Eq '  FIRING +memlock_unlimited +node +critical fatal, action: fix-config; ' '$TMPD/old.out'"
check "schema 1: nothing about recorded rules" bash -c "! grep -q 'as serve ran them' '$TMPD/old.out'"
# serve appending to it upgrades it; the polls before say nothing of the rules
cp -r "$TMPD/old" "$TMPD/upgraded"
record "$TMPD/upgraded" "$(($(sql "$TMPD/upgraded/rocewatch.db" 'SELECT max(seq) FROM polls') + 5))" --param min_memlock=64KiB
replay_to upgraded --db "$TMPD/upgraded"
check "schema 1 appended to: upgraded to 2, the new run's rules recorded, said from when" bash -c "
	[ \"\$(sql '$TMPD/upgraded/rocewatch.db' 'PRAGMA user_version')\" = 2 ] &&
	[ \"\$(sql '$TMPD/upgraded/rocewatch.db' 'SELECT count(*) FROM profiles')\" = 1 ] &&
	grep -Eq '^the recording says which rules serve ran only from 20[0-9-]+T[0-9:.]+Z on: ' '$TMPD/upgraded.out'"

# ---- the rule file changed since: replayed with today's rules, both hashes named ----
mkdir "$TMPD/profiles"
sed 's/^\(  min_memlock: \)0 /\11 /' "$SOURCE_DIR/rules/profiles/lossless-roce.yaml" >"$TMPD/profiles/lossless-roce.yaml"
cmp -s "$SOURCE_DIR/rules/profiles/lossless-roce.yaml" "$TMPD/profiles/lossless-roce.yaml" && die "sed changed nothing"
hash=$(sql "$TMPD/rec/rocewatch.db" 'SELECT text_hash FROM profiles')
# long paths: one line at any width in -j, and on a wide enough terminal
COLUMNS=1000 ROCEWATCH_PROFILE_DIR="$TMPD/profiles" replay_to changed --db "$TMPD/rec"
check "changed rules: one line names the profile and the recorded hash, the replay goes on" bash -c "
	[ \$(grep -c 'changed since the recording' '$TMPD/changed.out') = 1 ] &&
	grep -Eq '^the rules changed since the recording: profile lossless-roce had text hash $hash \(.*\), .*/lossless-roce\.yaml has [0-9a-f]{16}; replayed with today.s rules and the recorded parameters$' '$TMPD/changed.out' &&
	[ $(rc_of changed) = 0 ] && ! grep -q memlock_unlimited '$TMPD/changed.out'"

# ---- a reload that changes the rules: a new set, from the poll it first ran ----
mkdir "$TMPD/live"
cp "$SOURCE_DIR/rules/profiles/lossless-roce.yaml" "$TMPD/live/lossless-roce.yaml"
port=$(free_port)
"$ROCEWATCH" serve --from "$FX" --interval 100ms --config-interval 100ms --web.listen-address "127.0.0.1:$port" \
	--record "$TMPD/reload" --profile "$TMPD/live/lossless-roce.yaml" >>"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
wait_until 30 bash -c "[ \"\$(committed $port)\" -ge 5 ]" || die "serve did not record: $(tail -5 "$TMPD/serve.log")"
sed -i 's/^\(  min_memlock: \)0 /\165536 /' "$TMPD/live/lossless-roce.yaml"
kill -HUP "$pid"
wait_until 30 bash -c "[ \"\$(sql '$TMPD/reload/rocewatch.db' 'SELECT count(DISTINCT t_ms) FROM profiles')\" = 2 ]" ||
	die "the reload was not recorded: $(tail -5 "$TMPD/serve.log")"
n=$(committed "$port")
wait_until 30 bash -c "[ \"\$(committed $port)\" -ge $((n + 5)) ]" || die "serve stopped recording"
kill "$pid"
wait "$pid" 2>/dev/null || true
check "reload: the second set has the new text hash and the file's new default" bash -c "
	[ \"\$(sql '$TMPD/reload/rocewatch.db' 'SELECT count(DISTINCT text_hash) FROM profiles')\" = 2 ] &&
	sql '$TMPD/reload/rocewatch.db' 'SELECT origin, params FROM profiles ORDER BY t_ms DESC LIMIT 1' | grep -q '^file|.*\"name\":\"min_memlock\",\"value\":\"65536\"}'"
t2=$(sql "$TMPD/reload/rocewatch.db" 'SELECT max(t_ms) FROM profiles')
since=$(python3 -c "import datetime, sys; t = int(sys.argv[1]); print(datetime.datetime.fromtimestamp(t / 1000, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (t % 1000))" "$t2")
replay_to reload-all --db "$TMPD/reload"
check "reload: from the start, the first set (memlock fires), the change and the edited file named" bash -c "
	[ $(rc_of reload-all) = 2 ] && grep -Eq '  FIRING +memlock_unlimited ' '$TMPD/reload-all.out' &&
	grep -Eq '^serve ran other rules from $since \(a reload or a restart\): this replay runs those recorded at ' '$TMPD/reload-all.out' &&
	grep -q '^the rules changed since the recording: profile lossless-roce ($TMPD/live/lossless-roce.yaml) had text hash ' '$TMPD/reload-all.out'"
replay_to reload-after --db "$TMPD/reload" --since "$since"
check "reload: --since the reload runs the second set (no memlock firing, no change to name)" bash -c "
	[ $(rc_of reload-after) = 0 ] && ! grep -Eq 'memlock_unlimited|changed since|other rules' '$TMPD/reload-after.out' &&
	grep -q '^rules as serve ran them (recorded at $since): profile lossless-roce ($TMPD/live/lossless-roce.yaml), with the profile defaults (serve had no --param)$' '$TMPD/reload-after.out'"

# a recording is outside input: a rule file it names is read only if it is a regular file
mkdir "$TMPD/fifo"
cp "$TMPD/reload/rocewatch.db" "$TMPD/fifo/"
mkfifo "$TMPD/fifo/rules.yaml"
sql "$TMPD/fifo/rocewatch.db" "UPDATE profiles SET source = '$TMPD/fifo/rules.yaml'" >/dev/null
check "a recorded rule file that is a FIFO here is refused, not read (exit 3, --profile named)" bash -c "
	timeout 20 '$ROCEWATCH' replay --db '$TMPD/fifo' >/dev/null 2>'$TMPD/fifo.err'; [ \$? = 3 ] &&
	grep -qF 'the recording names the rule file $TMPD/fifo/rules.yaml (serve'\''s --profile), not a regular file here: --profile replays with another' '$TMPD/fifo.err'"

# ---- --profile replaces the recorded profile; serve's --param still applies ----
replay_to other --db "$TMPD/rec" --profile lossy-roce
check "--profile: says it replaces the recorded profile; serve's --param applies where declared" bash -c "
	grep -Eq \"^--profile lossy-roce replaces the rules serve ran \(recorded at .*: profile lossless-roce \(.*\)\); serve's --param min_memlock=64KiB still applies where they declare it$\" '$TMPD/other.out' &&
	! grep -q memlock_unlimited '$TMPD/other.out'"

finish
