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
	 expect warning 1 0 not_drained && grep -q 'RoCE check WARNING (cnp_priority(eth2)); the job starts' '$TMPD/err'"
check "CRITICAL (2): refused, drained with the failing rule" \
	expect critical 2 1 drained "RoCE check CRITICAL: pfc_only_on_roce_priority(eth2)"
check "UNKNOWN (3): refused, drained (fail closed)" \
	expect unknown 3 1 drained "RoCE check UNKNOWN, could not decide: trust_dscp(eth2)"
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
	expect badmode 3 1 drained "RoCE check UNKNOWN, could not decide: trust_dscp(eth2)" ROCEWATCH_PROLOG_MODE=maybe
printf 'ROCEWATCH=%s\nROCEWATCH_ARGS="--profile site --param roce_priority=5"\n' "$FAKE" >"$TMPD/prolog.conf"
conf_file() {
	rm -f "$TMPD/args"
	env -i SLURMD_NODENAME=n7 SCONTROL="$SCTL" FAKE_DIR="$TMPD" FAKE_RC=0 \
		ROCEWATCH_PROLOG_CONF="$TMPD/prolog.conf" /bin/sh "$PROLOG" >/dev/null 2>&1 &&
		[ "$(cat "$TMPD/args")" = "check --color never --profile site --param roce_priority=5" ]
}
check "settings from ROCEWATCH_PROLOG_CONF: the binary and its flags" conf_file
# the real rocewatch, as slurmd runs it (env -i, no COLUMNS, no search path)
real_prolog() { # SNAPSHOT: run the prolog with the real rocewatch on that snapshot
	rm -f "$TMPD/scontrol"
	env -i SLURMD_NODENAME=n7 ROCEWATCH="$ROCEWATCH" ROCEWATCH_PROFILE_DIR="$ROCEWATCH_PROFILE_DIR" \
		SCONTROL="$SCTL" FAKE_DIR="$TMPD" ROCEWATCH_PROLOG_CONF=/nonexistent \
		ROCEWATCH_ARGS="--from $1" /bin/sh "$PROLOG" >/dev/null 2>"$TMPD/err"
}
# a healthy node recorded in one snapshot: its counter rules are skipped, not undecided
real_single() {
	real_prolog "$SOURCE_DIR/tests/fixtures/snapshots/rules/good-single.json" && not_drained
}
check "with the real rocewatch: one healthy snapshot starts the job, nothing drained" real_single
# a pause storm on a node with nine warnings and two unreadable facts: the drain reason
# starts with the critical rule and its object, warnings next, unknowns last, in 255 bytes
# (the alphabetical first five once left the critical no_pause_storm_errors out)
real_storm() {
	local got=0 reason
	real_prolog "$SOURCE_DIR/tests/fixtures/snapshots/rules/incident.json" || got=$?
	[ "$got" -eq 1 ] || { echo "  exit $got" >&2; return 1; }
	reason=$(sed -n 's/^Reason=//p' "$TMPD/scontrol")
	echo "  reason (${#reason} bytes): $reason" >&2
	case $reason in
	"rocewatch: RoCE check CRITICAL: no_pause_storm_errors(eth2); warning: iommu_passthrough(node) gpu_pcie_link_width(node) no_pause_storm_warnings(eth2) "*) ;;
	*) return 1 ;;
	esac
	[ "$(printf '%s' "$reason" | wc -c)" -le 255 ] &&
		printf '%s' "$reason" | grep -q 'no_discards_on_roce_priority(eth2,eth3)'
}
check "with the real rocewatch: a pause storm drains with the critical rule first, in 255 bytes" real_storm
# everything fits or is counted: a reason never just stops
real_unknown() {
	local got=0 reason
	python3 - "$SOURCE_DIR/tests/fixtures/snapshots/rules/good-single.json" >"$TMPD/nomemlock.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
del s["node"]["fields"]["memlock_unlimited"]
s["node"]["absent"]["memlock_unlimited"] = {"reason": "permission", "errno": 13}
print(json.dumps(s))
PY
	real_prolog "$TMPD/nomemlock.json" || got=$?
	reason=$(sed -n 's/^Reason=//p' "$TMPD/scontrol")
	[ "$got" -eq 1 ] || { echo "  exit $got: $(cat "$TMPD/err")" >&2; return 1; }
	[ "$reason" = "rocewatch: RoCE check UNKNOWN, could not decide: memlock_unlimited(node)" ] ||
		{ echo "  reason: $reason" >&2; return 1; }
}
check "with the real rocewatch: an undecided critical rule drains, naming rule and object" real_unknown
# The job mapping (dcgm-exporter's layout): a job that starts is written into the file of
# each GPU it was given, one that is refused is not, the epilog takes it out, and a real
# serve --job-mapping-dir exports exactly one roce_job_info per job the node runs.
EPILOG="$SOURCE_DIR/contrib/slurm/epilog-rocewatch.sh"
JM="$TMPD/jobmap"
mapped() { # JOB GPUS RC [VAR=VALUE...]: the prolog for that job, the fake check exiting RC
	local job=$1 gpus=$2 rc=$3
	shift 3
	prolog "$rc" ROCEWATCH_JOB_MAPPING_DIR="$JM" SLURM_JOB_ID="$job" SLURM_JOB_GPUS="$gpus" "$@"
}
files_are() { # WANT: every GPU file as "name:line,line" in name order
	local got
	got=$(for f in "$JM"/*; do printf '%s:%s ' "${f##*/}" "$(paste -sd, "$f")"; done)
	[ "$got" = "$1 " ] || { echo "  mapping: $got" >&2; return 1; }
}
check "job mapping: an OK job is written to its GPUs' files" bash -c \
	"$(declare -f prolog mapped files_are); TMPD='$TMPD' FAKE='$FAKE' SCTL='$SCTL' PROLOG='$PROLOG' JM='$JM';
	 mapped 1001 0,1 0 && files_are '0:1001 1:1001'"
check "  ... a second job (WARNING) on GPUs 1 and 2 is added, the first kept" bash -c \
	"$(declare -f prolog mapped files_are); TMPD='$TMPD' FAKE='$FAKE' SCTL='$SCTL' PROLOG='$PROLOG' JM='$JM';
	 mapped 1002 1,2 1 && files_are '0:1001 1:1001,1002 2:1002'"
check "  ... a job refused (CRITICAL) is not written" bash -c \
	"$(declare -f prolog mapped files_are); TMPD='$TMPD' FAKE='$FAKE' SCTL='$SCTL' PROLOG='$PROLOG' JM='$JM';
	 ! mapped 1003 3 2 && files_are '0:1001 1:1001,1002 2:1002'"
check "  ... the prolog run again for a job writes its line once" bash -c \
	"$(declare -f prolog mapped files_are); TMPD='$TMPD' FAKE='$FAKE' SCTL='$SCTL' PROLOG='$PROLOG' JM='$JM';
	 mapped 1001 0,1 0 && files_are '0:1001 1:1002,1001 2:1002'"
p=$(free_port)
"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$p" --interval 200ms \
	--from "$SOURCE_DIR/tests/fixtures/snapshots/fleet/good.json" --job-mapping-dir "$JM" \
	>"$TMPD/serve-jm.log" 2>&1 &
stop_at_exit $!
wait_until 20 curl -sf "http://127.0.0.1:$p/healthz" || die "serve did not come up"
jobs_exported() { # WANT: the roce_job_info series of /metrics, and no job label elsewhere
	local m got
	m=$(curl -sf "http://127.0.0.1:$p/metrics") || return 1
	got=$(printf '%s\n' "$m" | grep '^roce_job_info' | paste -sd' ')
	[ "$got" = "$1" ] || { echo "  exported: $got" >&2; return 1; }
	! printf '%s\n' "$m" | grep -v -e '^roce_job_info' -e '^#' | grep -q 'job_id='
}
check "serve --job-mapping-dir: one roce_job_info per job, no job label elsewhere" \
	jobs_exported 'roce_job_info{job_id="1001"} 1 roce_job_info{job_id="1002"} 1'
epilog_done() { # JOB: the epilog as slurmd runs it
	env -i ROCEWATCH_PROLOG_CONF=/nonexistent ROCEWATCH_JOB_MAPPING_DIR="$JM" SLURM_JOB_ID="$1" \
		/bin/sh "$EPILOG"
}
check "the epilog takes job 1001 out of every file, emptied files stay" bash -c \
	"$(declare -f files_are epilog_done); JM='$JM' EPILOG='$EPILOG'; epilog_done 1001 && files_are '0: 1:1002 2:1002'"
check "  ... and serve drops its series at the next poll (the directory changed)" \
	wait_until 10 jobs_exported 'roce_job_info{job_id="1002"} 1'
ln -s /etc/passwd "$JM/7"
check "  ... a link planted in the directory is refused, logged naming it" \
	wait_until 10 grep -q "job-mapping-dir $JM/7: a symbolic link: refused" "$TMPD/serve-jm.log"
check "  ... and counted" bash -c "curl -sf 'http://127.0.0.1:$p/metrics' | grep -qx 'rocewatch_job_mapping_bad_files 1'"
finish
