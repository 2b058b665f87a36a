#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocewatch export --format openmetrics, checked by the real promtool: the
# recording of a synthetic incident becomes TSDB blocks, with the series of
# /metrics (same names, same labels) and the values the node had.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_cmd curl
need_cmd promtool "apt-get install prometheus"

GEN="$SOURCE_DIR/tests/recorder/gen-snapshots.py"
python3 "$GEN" incident 80 "$TMPD/incident.json" >/dev/null
port=$(free_port)
"$ROCEWATCH" serve --from "$TMPD/incident.json" --interval 100ms --web.listen-address "127.0.0.1:$port" \
	--record "$TMPD/rec" >"$TMPD/serve.log" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
committed() { [ "$(curl -sf "http://127.0.0.1:$port/metrics" | awk '$1=="rocewatch_recorder_last_committed_poll"{print $2}')" -ge 85 ]; }
wait_until 60 committed || die "serve did not record: $(tail -5 "$TMPD/serve.log")"
# The last snapshot repeats from poll 80 on: this /metrics is the final state.
curl -sf "http://127.0.0.1:$port/metrics" >"$TMPD/metrics.txt"
kill "$pid"
wait "$pid" || true

check "export exits 0" "$ROCEWATCH" export --db "$TMPD/rec" --format openmetrics -o "$TMPD/rec.om"
check "ends with # EOF" bash -c "[ \"\$(tail -1 '$TMPD/rec.om')\" = '# EOF' ]"
check "each family's samples are together" bash -c \
	"grep -v '^#' '$TMPD/rec.om' | sed 's/[{ ].*//; s/_total\$//' | uniq | sort | uniq -d | (! grep .)"
check "promtool tsdb create-blocks-from openmetrics accepts it" \
	promtool tsdb create-blocks-from openmetrics "$TMPD/rec.om" "$TMPD/tsdb"
# promtool 2.42's dump opens the head's WAL too: give it an empty one.
mkdir -p "$TMPD/tsdb/wal"
promtool tsdb dump "$TMPD/tsdb" >"$TMPD/dump.txt" 2>"$TMPD/dump.err" || echo "  dump: $(cat "$TMPD/dump.err")"

# Compare series identities: /metrics (minus the rocewatch_* and process_* self metrics) vs the TSDB.
compare() {
	python3 - "$TMPD/metrics.txt" "$TMPD/dump.txt" <<'PY'
import re, sys
def ident(name, labels):
    return name + "{" + ",".join(sorted(labels)) + "}"
want = {}
for line in open(sys.argv[1]):
    # the exporter's own metrics are not recorded, but build_info (what dashboards list
    # nodes by); rule results and alerts are recomputed by export as replay does; the
    # health verdict and escalations need serve's memory, so they are not compared
    if line.startswith("#") or not line.strip() or line.startswith(("process_", "ALERTS", "roce_node_verdict", "roce_rule_failure_episodes", "roce_rule_escalated")):
        continue
    if line.startswith("rocewatch_") and not line.startswith("rocewatch_build_info"):
        continue
    m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line.strip())
    # a scrape adds instance and job; export adds the same (the recording's host)
    labels = [("instance", "gpu-node-07"), ("job", "rocewatch")]
    labels += re.findall(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"', m.group(3) or "")
    labels = [l for l in labels if l[1] != ""]  # Prometheus keeps no empty label
    want[ident(m.group(1), ['%s="%s"' % l for l in labels])] = float(m.group(4))
got = {}
for line in open(sys.argv[2]):
    m = re.match(r'\{(.*)\} (\S+) (\d+)$', line.strip())
    if not m:
        continue
    labels = re.findall(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"', m.group(1))
    name = [v for k, v in labels if k == "__name__"][0]
    if name in ("roce_node_verdict", "roce_rule_failure_episodes", "roce_rule_escalated"):
        continue  # need serve's health memory: not compared (see above)
    key = ident(name, ['%s="%s"' % l for l in labels if l[0] != "__name__"])
    ts = int(m.group(3))
    if key not in got or ts >= got[key][0]:
        got[key] = (ts, float(m.group(2)))
# a series that ended (NaN, export's staleness mark) is not on the last /metrics
got = {k: v for k, v in got.items() if v[1] == v[1]}
fail = []
for k in sorted(set(want) - set(got)):
    fail.append("on /metrics, not exported: " + k)
for k in sorted(set(got) - set(want)):
    fail.append("exported, not on /metrics: " + k)
for k in sorted(set(want) & set(got)):
    if abs(got[k][1] - want[k]) > 1e-9 * max(1.0, abs(want[k])):
        fail.append("%s: last exported %s, /metrics %s" % (k, got[k][1], want[k]))
for f in fail[:20]:
    print("  " + f)
print("  %d series compared" % len(set(want) & set(got)))
sys.exit(1 if fail or not want else 0)
PY
}
check "the TSDB holds the /metrics series with their final values" compare
check "the pause storm is there at full resolution (20 increases)" bash -c \
	"[ \$(grep 'roce_pfc_pause_frames_total' '$TMPD/dump.txt' | grep 'priority=\"3\"' | grep 'direction=\"rx\"' | awk '{print \$(NF-1)}' | uniq | wc -l) -ge 21 ]"
check "export --since RFC 3339 --until now" bash -c "
	'$ROCEWATCH' report --db '$TMPD/rec' >/dev/null &&
	'$ROCEWATCH' export --db '$TMPD/rec' --since 2000-01-01T00:00:00Z --until now >/dev/null"
check "export --format text is refused (exit 2)" bash -c \
	"'$ROCEWATCH' export --db '$TMPD/rec' --format text 2>/dev/null; [ \$? -eq 2 ]"

finish
