#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every test tier through meson and end with "N passed, N failed, N skipped".
# Skipped tests are listed with the reason they gave; failed ones with a few lines that say
# why, just above the summary (a CI log's tail is often all anyone sees of it).
set -u
build=${1:-build}
log="$build/meson-logs/testlog.json"

meson test -C "$build" --print-errorlogs --num-processes 2 "${@:2}"
rc=$?

if [ ! -f "$log" ]; then
	echo "0 passed, 1 failed"
	exit 1
fi
python3 - "$log" <<'PY'
import json, re, sys
passed = failed = skipped = 0
reasons = []
whys = []
# what a failing tier prints about its failure: TAP, run-scenario, cmocka, our own die()
SAYS = re.compile(r"^(not ok\b|FAIL\b|FAIL:|\[  FAILED  \]|.*\bFAIL: |error:|.*Assertion|.*ERROR:)")


def said(t):
    text = (t.get("stdout") or "") + "\n" + (t.get("stderr") or "")
    out = [l for l in text.splitlines() if l.strip()]
    lines = [l for l in out if SAYS.match(l.strip())] or out[-3:]
    return [l.strip()[:300] for l in lines[:6]]


for line in open(sys.argv[1]):
    t = json.loads(line)
    r = t["result"]
    if r in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif r == "SKIP":
        skipped += 1
        why = [l for l in (t.get("stdout") or "").splitlines() if l.startswith("SKIP:")]
        reasons.append("%s: %s" % (t["name"], why[-1][5:].strip() if why else "no reason given"))
    else:
        failed += 1
        whys += ["%s: %s" % (t["name"], l) for l in said(t)] or ["%s: (no output)" % t["name"]]
for r in reasons:
    print("skipped:", r)
for w in whys:
    print("failed:", w)
line = "%d passed, %d failed" % (passed, failed)
if skipped:
    line += ", %d skipped" % skipped
print(line)
sys.exit(1 if failed else 0)
PY
prc=$?
[ $rc -eq 0 ] && [ $prc -eq 0 ]
