#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Link health rules through the real binary: each one fails on the sequence made to break
# exactly it and passes on a healthy node, in both shipped profiles; a counter reset is no
# event and an event after a reset is not lost; five degraded episodes escalate to fatal,
# across a kill -9 and a restart of serve (the state file), and a corrupt state file is
# said in one line and replaced.
. "$(dirname "$0")/../lib.sh"
need_cmd curl
need_cmd python3

FX="$SOURCE_DIR/tests/fixtures/snapshots/health"
export COLUMNS=250 NO_COLOR=

# failing FIXTURE PROFILE [args]: "rule@device ..." of the failing results, sorted; and the exit code
failing() {
	local fx=$1 profile=$2 rc=0
	shift 2
	"$ROCEWATCH" check --from "$FX/$fx" --profile "$profile" --format json "$@" >"$TMPD/o.json" 2>"$TMPD/e" || rc=$?
	python3 - "$TMPD/o.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exit_code"] == int(sys.argv[2])
assert not [r for r in d["results"] if r["outcome"] == "unknown"], "unknown results"
print(" ".join(sorted("%s@%s" % (r["rule"], r["object"].get("device", "node"))
                      for r in d["results"] if r["outcome"] == "fail")), d["verdict"], d["exit_code"])
PY
}

health_rules=$(awk '{print $1}' "$FX/cases.txt" | tr '\n' ' ')
# the healthy node: every health rule evaluated (not skipped), none fails
evaluated() {
	"$ROCEWATCH" check --from "$FX/healthy.json" --profile "$1" --format json >"$TMPD/h.json" || [ $? -le 2 ] || return 1
	python3 - "$TMPD/h.json" "${2:+-}" $health_rules <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = set(a for a in sys.argv[2:] if a not in ("-", ""))
seen = {r["rule"] for r in d["results"] if r["outcome"] == "pass"}
assert want <= seen, "not evaluated: %s" % sorted(want - seen)
assert len(sys.argv) > 2 and sys.argv[2] == "-" or d["verdict"] == "healthy", d["verdict"]
assert not [r for r in d["results"] if r["rule"] in want and r.get("action") and r["outcome"] == "fail"]
PY
}
check "lossless-roce: healthy node, every health rule passes" evaluated lossless-roce
# (the healthy node has PFC: lossy-roce fails it for that, not for its health)
check "lossy-roce: healthy node, every health rule passes" evaluated lossy-roce nohealthy
check "lossless-roce: healthy node, nothing fails" [ "$(failing healthy.json lossless-roce)" = " healthy 0" ]

while read -r rule obj fx; do
	args=()
	# a burst above 10/s is above 120/h too: raise the hourly bound to see the burst alone
	[ "$rule" = symbol_error_burst ] && args=(--param symbol_errors_per_hour=1000000)
	got=$(failing "$fx" lossless-roce "${args[@]}")
	check "$rule fails alone on $fx" [ "${got%% *}" = "$rule@$obj" ]
	got=$(failing "$fx" lossy-roce "${args[@]}" 2>/dev/null || true)
	check "$rule fails on $fx in lossy-roce too" bash -c "[[ ' $got ' == *' $rule@$obj '* ]]"
done <"$FX/cases.txt"

check "a fatal rule: verdict fatal, exit 2, its action" bash -c \
	"'$ROCEWATCH' check --from '$FX/break-link-not-downed.json' --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert (d[\"verdict\"], d[\"actions\"], d[\"exit_code\"]) == (\"fatal\", [\"reseat-or-replace-cable\"], 2), d[\"verdict\"]'"
check "a degraded rule: verdict degraded, exit 1" bash -c \
	"'$ROCEWATCH' check --from '$FX/break-carrier-stable.json' --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert (d[\"verdict\"], d[\"exit_code\"]) == (\"degraded\", 1)'"
check "the text report says the verdict and the action" bash -c \
	"'$ROCEWATCH' check --from '$FX/break-carrier-stable.json' | grep -q '^node verdict: degraded; do: reseat-or-replace-cable\$'"

# counter resets (driver reload, reboot, 32-bit wrap): no event; an event after one: counted
check "counters reset to 0: no event, nothing fails" [ "$(failing driver-reload.json lossless-roce)" = " healthy 0" ]
check "a link down after the reset is not lost" [ "$(failing driver-reload-then-downed.json lossless-roce)" = "link_not_downed@mlx5_0 fatal 2" ]

# escalation within one run: five flap episodes in 24 h make carrier_stable fatal
python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1])) + json.load(open(sys.argv[2])), open(sys.argv[3], 'w'))" \
	"$FX/escalate-part1.json" "$FX/escalate-part2.json" "$TMPD/escalate-all.json"
esc() {
	"$ROCEWATCH" check --from "$1" --format json "${@:2}" >"$TMPD/x.json" || true
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[r for r in d["results"] if r["rule"]=="carrier_stable" and r["object"]["device"]=="eth2"][0]; print(r["episodes"], r["escalated"], r["severity"], r["outcome"], d["verdict"])' "$TMPD/x.json"
}
check "5 degraded episodes in 24 h: escalated, critical, fatal (while it passes now)" \
	[ "$(esc "$TMPD/escalate-all.json")" = "5 True critical fail fatal" ]
check "3 episodes: still degraded (and passing now)" [ "$(esc "$FX/escalate-part1.json")" = "3 False warning pass healthy" ]
check "escalate_after=6: not yet" [ "$(esc "$TMPD/escalate-all.json" --param escalate_after=6)" = "5 False warning pass healthy" ]

# ---- across kill -9 and a restart: serve --state-dir ----
port=$(free_port)
url="http://127.0.0.1:$port"
state="$TMPD/state"
mkdir -p "$state"
serve_pid=
start() { # FIXTURE [serve args]
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" --interval 100ms "${@:2}" \
		--from "$1" >>"$TMPD/serve.log" 2>&1 &
	serve_pid=$!
	wait_until 10 curl -sf "$url/healthz" || die "serve did not come up: $(cat "$TMPD/serve.log")"
}
on_exit '[ -n "$serve_pid" ] && kill -9 $serve_pid 2>/dev/null'
result() { # RULE DEVICE: episodes escalated outcome
	curl -sf "$url/api/v1/checks" | python3 -c 'import json,sys; d=json.load(sys.stdin); r=[r for r in d["results"] if r["rule"]==sys.argv[1] and r["object"]["device"]==sys.argv[2]]; print(r[0].get("episodes"), r[0]["escalated"], r[0]["outcome"], d["verdict"]) if r else print("none")' "$1" "$2" 2>/dev/null
}
is() { [ "$(result "$1" "$2")" = "$3" ]; }
kill9() { kill -9 "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=; }

# (escalation and counter history across kill -9 against a real kernel: netns/test-health-serve.sh)

# a corrupt or foreign file: one line, a fresh start, then a good file again
printf 'not a state file\n' >"$state/health.state"
: >"$TMPD/serve.log"
start "$FX/escalate-part1.json" --state-dir "$state"
check "a foreign file is reported in one line" wait_until 5 grep -q "rules: health memory: $state/health.state: not a rocewatch health state file" "$TMPD/serve.log"
check "... and only once" [ "$(grep -c 'health memory:' "$TMPD/serve.log")" -eq 1 ]
check "... and started afresh: one episode (serve replays in live time), not more" wait_until 10 is carrier_stable eth2 "1 False fail degraded"
check "... and replaced by a good file" wait_until 10 grep -q "^rocewatch-health-state 1$" "$state/health.state"
check "/api/v1/state carries the verdict, the action and the failing rule beside the model" bash -c \
	"curl -sf '$url/api/v1/state' | python3 -c 'import json,sys; d=json.load(sys.stdin); h=d[\"health\"]; assert d[\"schema\"]==\"rocewatch-snapshot\"; assert (h[\"verdict\"], h[\"actions\"], [(f[\"rule\"], f[\"object\"][\"device\"], f[\"class\"]) for f in h[\"failing\"]]) == (\"degraded\", [\"reseat-or-replace-cable\"], [(\"carrier_stable\", \"eth2\", \"degraded\")]), h'"
kill9
printf 'rocewatch-health-state 1\nboot x\nesc zz\n' >"$state/health.state"
: >"$TMPD/serve.log"
start "$FX/escalate-part1.json" --state-dir "$state"
check "a corrupt record is refused alone, with its line" wait_until 5 grep -q "health.state: 1 of 1 records refused (line 3: not a 16-digit hex key); the rest is kept" "$TMPD/serve.log"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
check "SIGTERM saves the state (the corrupt file's 'boot x' is gone)" grep -qx "boot $(cat /proc/sys/kernel/random/boot_id)" "$state/health.state"

# ---- issue 42: the state directory, guarded like the recorder's ----
# issue 36: memory keyed by what does not move. eth2 renamed ens1f0np0 at "reboot" (the same
# PCI function) keeps its escalation memory; a new card under that name starts fresh.
python3 - "$FX/escalate-part1.json" "$TMPD" <<'PY'
import copy, json, sys
seq = json.load(open(sys.argv[1]))
def rename(s, bus=None, name="ens1f0np0"):
    for nd in s["netdevs"]:
        if nd["name"] == "eth2":
            nd["name"] = name
            if bus:
                nd["fields"]["bus"] = bus
    for p in s["rdma_ports"]:
        if p["netdev"] == "eth2":
            p["netdev"] = name
            p["fields"]["netdev_name"] = name
            if bus:
                p["fields"]["node_guid"] = "0e42:a1ff:fe00:00ff"
    return s
json.dump([rename(copy.deepcopy(s)) for s in seq], open(sys.argv[2] + "/renamed.json", "w"))
json.dump([rename(copy.deepcopy(s), "0000:99:00.0") for s in seq], open(sys.argv[2] + "/newcard.json", "w"))
PY
rstate="$TMPD/rstate"
mkdir -p "$rstate"
: >"$TMPD/serve.log"
start "$FX/escalate-part1.json" --state-dir "$rstate"
wait_until 10 is carrier_stable eth2 "1 False fail degraded" || true
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
esc_line() { grep "^esc .* = $1 $2\$" "$rstate/health.state" | head -1; }
first=$(esc_line eth2 pci:0000:17:00.0)
check "the state file names the object and its identity beside the key" test -n "$first"
start "$TMPD/renamed.json" --state-dir "$rstate"
check "eth2 back as ens1f0np0: its memory carried over, said once" \
	wait_until 10 grep -q "rules: health memory: ens1f0np0 (pci:0000:17:00.0) was eth2 before: its memory carried over" "$TMPD/serve.log"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
# the same record (key, first episode's time), now under the new name
same_record() {
	local now
	now=$(esc_line ens1f0np0 pci:0000:17:00.0)
	[ -n "$now" ] && [ "$(echo "$first" | cut -d' ' -f2,6)" = "$(echo "$now" | cut -d' ' -f2,6)" ] ||
		{ echo "  before: $first; after: $now" >&2; return 1; }
}
check "... the same record: its key and its first episode, under the new name" same_record
: >"$TMPD/serve.log"
start "$TMPD/newcard.json" --state-dir "$rstate"
check "another card under the name ens1f0np0: starts fresh, said once" \
	wait_until 10 grep -q "rules: health memory: ens1f0np0 is new hardware (pci:0000:99:00.0, was pci:0000:17:00.0): its escalation memory starts fresh" "$TMPD/serve.log"
check "... once" bash -c "[ \$(grep -c 'ens1f0np0 is new hardware' '$TMPD/serve.log') -eq 1 ]"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=

# a second serve on the same --state-dir would erase the first one's memory: refused
start "$FX/escalate-part1.json" --state-dir "$state"
rc=0
"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$(free_port)" --from "$FX/escalate-part1.json" \
	--state-dir "$state" >"$TMPD/second.log" 2>&1 || rc=$?
check "a second serve on one --state-dir is refused, naming the first one's pid" \
	bash -c "[ $rc -ne 0 ] && grep -q 'state-dir $state is in use by another rocewatch serve (pid $serve_pid)' '$TMPD/second.log'"
check "... and the first one goes on" curl -sf "$url/healthz"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=

# a FIFO as health.state: start-up does not hang before the listener
rm -f "$state/health.state"; mkfifo "$state/health.state"
: >"$TMPD/serve.log"
start "$FX/escalate-part1.json" --state-dir "$state"
check "a FIFO as the state file: refused in one line, serve answers" \
	grep -q "health.state: a FIFO, not a regular file: refused; starting afresh" "$TMPD/serve.log"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
check "... and replaced by a regular file at exit" test -f "$state/health.state" -a ! -p "$state/health.state"

# a FIFO as health.state.tmp: no save blocks (the poll, /metrics and SIGTERM go on)
mkfifo "$state/health.state.tmp"
: >"$TMPD/serve.log"
start "$FX/escalate-part1.json" --state-dir "$state"
check "a FIFO planted as the temporary file: /metrics answers" curl -sf -o /dev/null "$url/metrics"
kill -TERM "$serve_pid"
check "... SIGTERM stops serve" wait_until 10 bash -c "! kill -0 $serve_pid 2>/dev/null"
wait "$serve_pid" 2>/dev/null || true; serve_pid=
check "... and the state was written past it" bash -c "[ ! -p '$state/health.state.tmp' ] && grep -qx 'rocewatch-health-state 1' '$state/health.state'"

# a symlink planted as health.state.tmp: its target is never written (root writes the state)
printf 'precious\n' >"$TMPD/victim"
ln -s "$TMPD/victim" "$state/health.state.tmp"
start "$FX/escalate-part1.json" --state-dir "$state"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
check "a symlink planted as the temporary file: its target is untouched" \
	bash -c "[ \"\$(cat '$TMPD/victim')\" = precious ] && [ ! -L '$state/health.state.tmp' ] && grep -qx 'rocewatch-health-state 1' '$state/health.state'"

# strace: the temporary file is created O_EXCL|O_NOFOLLOW, the state file opened O_NONBLOCK
if command -v strace >/dev/null; then
	sport=$(free_port)
	strace -f -qq -e trace=openat -o "$TMPD/state.strace" "$ROCEWATCH" serve \
		--web.listen-address "127.0.0.1:$sport" --interval 100ms --from "$FX/escalate-part1.json" \
		--state-dir "$state" >"$TMPD/strace-serve.log" 2>&1 &
	spid=$!
	wait_until 20 curl -sf "http://127.0.0.1:$sport/healthz" >/dev/null
	wait_until 20 grep -q 'health.state.tmp' "$TMPD/state.strace"
	pkill -TERM -f "127.0.0.1:$sport" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	check "strace: health.state.tmp is opened O_CREAT|O_EXCL|O_NOFOLLOW" \
		bash -c "grep -F 'health.state.tmp\", O_WRONLY|O_CREAT|O_EXCL|' '$TMPD/state.strace' | grep -q O_NOFOLLOW"
	check "strace: no open of health.state.tmp without O_EXCL" \
		bash -c "! grep 'health.state.tmp\"' '$TMPD/state.strace' | grep -v O_EXCL"
	check "strace: health.state is opened O_NONBLOCK|O_NOFOLLOW" \
		grep -qE 'health\.state", O_RDONLY\|O_NONBLOCK\|O_NOFOLLOW' "$TMPD/state.strace"
else
	check "strace is installed (contrib/install-deps.sh)" false
fi

# issue 41 item 8: kept memory is a metric too
start "$FX/escalate-part1.json" --state-dir "$state"
check "a state dir that works: rocewatch_health_memory_kept 1" bash -c \
	"curl -sf '$url/metrics' | grep -qx 'rocewatch_health_memory_kept 1'"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=

# a world-writable state file is refused (anyone could have planted an escalation)
chmod 0666 "$state/health.state"
: >"$TMPD/serve.log"
start "$FX/escalate-part1.json" --state-dir "$state"
check "a world-writable state file: refused in one line" \
	grep -q "health.state: world-writable (mode 0666): anyone could have written it; refused" "$TMPD/serve.log"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
check "... and replaced by rocewatch's own (0600)" [ "$(stat -c %a "$state/health.state")" = 600 ]

# a --state-dir that cannot be made: said as it is, memory not kept
: >"$TMPD/serve.log"
start "$FX/escalate-part1.json" --state-dir "$TMPD/victim/sub"
check "a --state-dir that cannot be created: 'health memory off'" \
	grep -q "state-dir $TMPD/victim/sub: Not a directory: health memory off (not kept across restarts" "$TMPD/serve.log"
check "... and never 'health memory in'" bash -c "! grep -q 'health memory in' '$TMPD/serve.log'"
check "... rocewatch_health_memory_kept 0 on /metrics" bash -c \
	"curl -sf '$url/metrics' | grep -qx 'rocewatch_health_memory_kept 0'"
kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
check "no sanitizer reports" bash -c "! grep -E 'ERROR: AddressSanitizer|runtime error' '$TMPD/serve.log'"
finish
