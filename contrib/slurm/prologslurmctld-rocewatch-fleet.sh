#!/bin/sh
# SPDX-License-Identifier: MIT
# Slurm PrologSlurmctld: before a job starts, compare the RoCE configuration of all
# its nodes with `rocewatch fleet check --slurm` (once per job, on the controller;
# every node runs `rocewatch serve`).  slurm.conf:
#
#     PrologSlurmctld=/usr/local/lib/rocewatch/prologslurmctld-rocewatch-fleet.sh
#
# Fail closed.  `fleet check` exits 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (a node that
# did not answer, a rule that could not be decided, bad flags).  Only OK and WARNING
# let the job start: a job must not start on a node nobody could look at, and a
# missing or broken rocewatch is no pass either.  When PrologSlurmctld exits non-zero,
# Slurm requeues a batch job (held, with the reason in its comment below) and cancels
# an interactive one.
#
# Knobs (environment of slurmctld, or edit here):
#   ROCEWATCH                 the binary (default: rocewatch on PATH)
#   ROCEWATCH_FLEET_ARGS      extra arguments, e.g. "--profile lossless-roce" to also run
#                             each node's own rules, "--port 9479", "--client-config FILE"
#   ROCEWATCH_FLEET_STRICT=1  a WARNING (firmware differs on a rail) stops the job too
#   ROCEWATCH_FLEET_LOG       directory for the full report of each job (default
#                             /var/log/rocewatch; skipped if it cannot be written)
#   ROCEWATCH_FLEET_NCCL_ENV  the job's NCCL settings, a KEY=VALUE file (%j: the job id),
#                             judged on every node (`fleet check --nccl-env`: the same
#                             devices on the same rails, a usable GID, the TC's DSCP);
#                             slurmctld does not hand a PrologSlurmctld the job's
#                             environment, so the site's submit path writes it (a
#                             job_submit or cli_filter plugin, a wrapper); a file that
#                             is not there is no pass: the check is UNKNOWN
#
# The job's comment (squeue -o %k, scontrol show job) says what stopped it: every
# rule that failed or could not be decided, worst first (CRITICAL, UNKNOWN, WARNING),
# with its outliers and their values, and the nodes that did not answer, e.g.
#   rocewatch fleet: CRITICAL netdev_mtu: gpu03=1500 (fleet 9000), gpu07=1500; UNKNOWN ...
# rocewatch writes that line itself (`fleet check --format reason`), so this script
# needs no JSON tool.  It is cut at an item with "+N more" to fit 1024 bytes:
# slurmctld refuses a longer comment whole (src/slurmctld/job_mgr.c,
# _test_job_desc_fields: strlen(comment) > 1024 is ESLURM_PATHNAME_TOO_LONG).

# slurmctld gives its prologs no search path (Slurm's Prolog and Epilog Guide): the
# usual directories after whatever PATH it was given
PATH=${PATH:+$PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
ROCEWATCH=${ROCEWATCH:-rocewatch}
LOGDIR=${ROCEWATCH_FLEET_LOG:-/var/log/rocewatch}
job=${SLURM_JOB_ID:-unknown}
prefix="rocewatch fleet: "
comment_max=1024

say() {
	# slurmctld discards PrologSlurmctld output: the syslog and the job keep it
	logger -t rocewatch-fleet -- "job $job: $*" 2>/dev/null || true
	echo "rocewatch-fleet: job $job: $*" >&2
}

# comment TEXT: where the job's user looks (a batch job is requeued held with it)
comment() {
	if command -v scontrol >/dev/null 2>&1 && [ "$job" != unknown ]; then
		scontrol update JobId="$job" \
			Comment="$(printf '%s%s\n' "$prefix" "$1" | cut -b 1-"$comment_max")" \
			>/dev/null 2>&1 || say "scontrol could not set the job's comment"
	fi
}

if ! command -v "$ROCEWATCH" >/dev/null 2>&1; then
	say "rocewatch not found ($ROCEWATCH): refusing to start the job unchecked"
	comment "rocewatch not found ($ROCEWATCH): the job was not started unchecked"
	exit 1
fi
if [ -z "${SLURM_JOB_NODELIST:-}" ]; then
	say "SLURM_JOB_NODELIST is not set: not run as PrologSlurmctld?"
	exit 1
fi

# The full report goes to the log, the one-line reason to stdout (its last line).
log=
if { [ -d "$LOGDIR" ] || mkdir -p "$LOGDIR"; } 2>/dev/null && : 2>/dev/null >"$LOGDIR/fleet-$job.txt"; then
	log=$LOGDIR/fleet-$job.txt
fi
set -- fleet check --slurm --connect-timeout 2s --timeout 10s --color never \
	--format reason --max-bytes $((comment_max - ${#prefix}))
if [ -n "$log" ]; then
	set -- "$@" --report-file "$log"
fi
if [ -n "${ROCEWATCH_FLEET_NCCL_ENV:-}" ]; then
	set -- "$@" --nccl-env "$(printf '%s' "$ROCEWATCH_FLEET_NCCL_ENV" | sed "s/%j/$job/g")"
fi
# A few seconds for 1000 nodes on a LAN; the timeouts bound a node that hangs.
# shellcheck disable=SC2086 # ROCEWATCH_FLEET_ARGS is a list of words
out=$("$ROCEWATCH" "$@" ${ROCEWATCH_FLEET_ARGS:-} 2>&1)
rc=$?
if [ -n "$log" ]; then
	printf '%s\n' "$out" >>"$log" 2>/dev/null || true
fi
# the reason line, or the last word of a check that could not run (bad flags)
reason=$(printf '%s\n' "$out" | tail -n 1)
case $reason in "rocewatch fleet"*": "*) reason=${reason#*: } ;; esac

case $rc in
0)
	exit 0
	;;
1)
	if [ "${ROCEWATCH_FLEET_STRICT:-0}" = 1 ]; then
		say "WARNING (strict): $reason"
	else
		say "WARNING, job allowed: $reason"
		exit 0
	fi
	;;
2) say "CRITICAL: $reason" ;;
3) say "UNKNOWN: $reason" ;;
*)
	say "fleet check failed (exit $rc): $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
	reason="fleet check failed (exit $rc)${reason:+: $reason}"
	;;
esac
comment "${reason:-fleet check exited $rc}"
exit 1
