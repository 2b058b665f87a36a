#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# contrib/slurm/prolog-rocewatch.sh fails closed: run as slurmd runs it (no
# search path, env -i) against a fake rocewatch that exits with each code the
# real one can (and some it should not), and a fake scontrol that records its
# arguments.  OK and WARNING start the job; CRITICAL, UNKNOWN, a missing or
# broken binary and a hung check drain the node with a reason and refuse the
# job; warn-only refuses nothing and says so.
. "$(dirname "$0")/../lib.sh"

PROLOG="$SOURCE_DIR/contrib/slurm/prolog-rocewatch.sh"
FAKE="$TMPD/bin/rocewatch"
SCTL="$TMPD/bin/scontrol"
mkdir -p "$TMPD/bin"
cat >"$FAKE" <<'SH'
#!/bin/sh
# a text report like `rocewatch check`, then the exit code asked for
echo "$*" >"$FAKE_DIR/args"
[ -n "$FAKE_SLEEP" ] && sleep "$FAKE_SLEEP"
echo "rocewatch check on n7: lossless-roce (2 samples over 0.1 s)"
echo ""
echo "netdev eth2"
[ "$FAKE_RC" = 2 ] && echo "  fail     critical  pfc_only_on_roce_priority       PFC enabled on {0,3}, expected only {3}"
[ "$FAKE_RC" = 1 ] && echo "  fail     warning   cnp_priority                    NIC sends CNPs on priority 0, expected 6"
[ "$FAKE_RC" = 3 ] && echo "  unknown  critical  trust_dscp                      trust absent: permission"
echo ""
echo "1 passed, 0 failed: DONE"
exit "$FAKE_RC"
SH
cat >"$SCTL" <<'SH'
#!/bin/sh
# records one line per call: its arguments, one per line, then a separator
for a in "$@"; do echo "$a"; done >>"$FAKE_DIR/scontrol"
echo "--" >>"$FAKE_DIR/scontrol"
SH
chmod +x "$FAKE" "$SCTL"

# prolog RC [VAR=VALUE...]: run it as slurmd would, with the fake rocewatch exiting RC
prolog() {
	local rc=$1
	shift
	rm -f "$TMPD/scontrol" "$TMPD/args"
	env -i SLURMD_NODENAME=n7 ROCEWATCH="$FAKE" SCONTROL="$SCTL" FAKE_DIR="$TMPD" FAKE_RC="$rc" \
		ROCEWATCH_PROLOG_CONF=/nonexistent "$@" /bin/sh "$PROLOG" >"$TMPD/out" 2>"$TMPD/err"
}
drained_with() { # REASON: scontrol was called once, to drain n7 with that reason
	local want
	want=$(printf '%s\n' update NodeName=n7 State=DRAIN "Reason=rocewatch: $1" --)
	[ "$(cat "$TMPD/scontrol" 2>/dev/null)" = "$want" ] ||
		{ echo "  scontrol: $(cat "$TMPD/scontrol" 2>/dev/null || echo 'not called')" >&2; return 1; }
}
not_drained() { [ ! -e "$TMPD/scontrol" ] || { echo "  scontrol: $(cat "$TMPD/scontrol")" >&2; return 1; }; }

expect() { # WHAT RC_OF_FAKE WANT_EXIT [drained REASON | not_drained] [VAR=VALUE...]
	local what=$1 rc=$2 want=$3 how=$4 got=0 reason=""
	shift 4
	if [ "$how" = drained ]; then reason=$1; shift; fi
	prolog "$rc" "$@" || got=$?
	[ "$got" -eq "$want" ] || { echo "  $what: prolog exited $got, want $want; stderr: $(cat "$TMPD/err")" >&2; return 1; }
	if [ "$how" = drained ]; then drained_with "$reason"; else not_drained; fi
}

check "OK (0): the job starts, nothing drained" expect ok 0 0 not_drained
check "the check is run by full path, in plain text" bash -c \
	"[ \"\$(cat '$TMPD/args')\" = 'check --color never' ]"
check "WARNING (1): the job starts, nothing drained, the warning on stderr" bash -c \
	"$(declare -f prolog expect drained_with not_drained); TMPD='$TMPD' FAKE='$FAKE' SCTL='$SCTL' PROLOG='$PROLOG';
	 expect warning 1 0 not_drained && grep -q 'RoCE check WARNING (cnp_priority); the job starts' '$TMPD/err'"
check "CRITICAL (2): refused, drained with the failing rule" \
	expect critical 2 1 drained "RoCE check CRITICAL: pfc_only_on_roce_priority"
check "UNKNOWN (3): refused, drained (fail closed)" \
	expect unknown 3 1 drained "RoCE check UNKNOWN (could not decide: trust_dscp)"
check "rocewatch not found (127): refused, drained" \
	expect missing 0 1 drained "/nonexistent/rocewatch not found or not executable (set ROCEWATCH in /nonexistent)" \
	ROCEWATCH=/nonexistent/rocewatch
check "rocewatch that cannot run (exit 127 from it): refused, drained" \
	expect broken 127 1 drained "$FAKE could not be run (exit 127): 1 passed, 0 failed: DONE"
check "a crash (exit 139): refused, drained" \
	expect crash 139 1 drained "rocewatch check failed (exit 139)"
check "a hung check (ROCEWATCH_TIMEOUT): refused, drained" \
	expect hung 0 1 drained "rocewatch check did not finish in 1s" ROCEWATCH_TIMEOUT=1 FAKE_SLEEP=5
check "warn-only: UNKNOWN starts the job, nothing drained, said on stderr" bash -c \
	"$(declare -f prolog expect drained_with not_drained); TMPD='$TMPD' FAKE='$FAKE' SCTL='$SCTL' PROLOG='$PROLOG';
	 expect warn3 3 0 not_drained ROCEWATCH_PROLOG_MODE=warn-only && grep -q 'warn-only: the job starts anyway' '$TMPD/err'"
check "warn-only: not found starts the job too" \
	expect warn127 0 0 not_drained ROCEWATCH_PROLOG_MODE=warn-only ROCEWATCH=/nonexistent/rocewatch
check "an unknown mode fails closed" \
	expect badmode 3 1 drained "RoCE check UNKNOWN (could not decide: trust_dscp)" ROCEWATCH_PROLOG_MODE=maybe
printf 'ROCEWATCH=%s\nROCEWATCH_ARGS="--profile site --param roce_priority=5"\n' "$FAKE" >"$TMPD/prolog.conf"
conf_file() {
	rm -f "$TMPD/args"
	env -i SLURMD_NODENAME=n7 SCONTROL="$SCTL" FAKE_DIR="$TMPD" FAKE_RC=0 \
		ROCEWATCH_PROLOG_CONF="$TMPD/prolog.conf" /bin/sh "$PROLOG" >/dev/null 2>&1 &&
		[ "$(cat "$TMPD/args")" = "check --color never --profile site --param roce_priority=5" ]
}
check "settings from ROCEWATCH_PROLOG_CONF: the binary and its flags" conf_file
# the real rocewatch: a check that cannot decide (no RDMA here) must not let the job through
real_unknown() {
	local got=0
	rm -f "$TMPD/scontrol"
	env -i SLURMD_NODENAME=n7 ROCEWATCH="$ROCEWATCH" ROCEWATCH_PROFILE_DIR="$ROCEWATCH_PROFILE_DIR" SCONTROL="$SCTL" FAKE_DIR="$TMPD" \
		ROCEWATCH_PROLOG_CONF=/nonexistent \
		ROCEWATCH_ARGS="--from $SOURCE_DIR/tests/fixtures/snapshots/rules/good-single.json" \
		/bin/sh "$PROLOG" >/dev/null 2>"$TMPD/err" || got=$?
	[ "$got" -eq 1 ] && grep -q '^Reason=rocewatch: RoCE check UNKNOWN (could not decide: [a-z_]* [a-z_]*' "$TMPD/scontrol"
}
check "with the real rocewatch: UNKNOWN (one sample) drains, naming the undecided rules" real_unknown
finish
