#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The recorder on a disk that fills and frees again, without root: serve runs under a
# file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored, so a write past it fails with EFBIG
# as on a full disk), then prlimit lifts the limit.  The failure is logged once, the
# recovery is logged with the polls lost, and a second fill is logged again.
. "$(dirname "$0")/../lib.sh"
need_cmd curl
need_cmd prlimit

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
port=$(free_port)
# 256 KiB: the schema and a few polls fit, a few seconds of them do not
(
	trap '' XFSZ
	ulimit -S -f 256 # soft only: prlimit may lift it again without privilege
	exec "$ROCEWATCH" serve --from "$FX/good-8nic.json" --interval 100ms \
		--web.listen-address "127.0.0.1:$port" --record "$TMPD/rec"
) >"$TMPD/log" 2>&1 &
pid=$!
on_exit "kill $pid"
wait_until 20 curl -sf "http://127.0.0.1:$port/healthz" || die "serve did not start: $(cat "$TMPD/log")"

fails() { grep -c 'polls are not recorded until a write works again' "$TMPD/log"; }
check "the fill is logged" wait_until 60 grep -q 'polls are not recorded until a write works again' "$TMPD/log"
check "... once, while it lasts" bash -c "sleep 1; [ \$(grep -c 'polls are not recorded' '$TMPD/log') -eq 1 ]"
prlimit --pid "$pid" --fsize=unlimited:
check "the recovery is logged, with the polls lost" wait_until 30 \
	grep -Eq 'recorder: .*rocewatch.db: recording again from poll [0-9]+ \([1-9][0-9]* polls were not recorded\)' "$TMPD/log"
size=$(stat -c %s "$TMPD/rec/rocewatch.db")
prlimit --pid "$pid" --fsize=$(( (size + 4096) / 1024 * 1024 )):
check "a second fill is logged again" wait_until 60 bash -c "[ \$(grep -c 'polls are not recorded' '$TMPD/log') -eq 2 ]"
check "no sanitizer report" bash -c "! grep -q Sanitizer '$TMPD/log'"

finish
