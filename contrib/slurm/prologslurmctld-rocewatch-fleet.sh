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
ROCEWATCH=${ROCEWATCH:-rocewatch}
LOGDIR=${ROCEWATCH_FLEET_LOG:-/var/log/rocewatch}
job=${SLURM_JOB_ID:-unknown}

say() {
	# slurmctld discards PrologSlurmctld output: the syslog and the job keep it
	logger -t rocewatch-fleet -- "job $job: $*" 2>/dev/null || true
	echo "rocewatch-fleet: job $job: $*" >&2
}

if ! command -v "$ROCEWATCH" >/dev/null 2>&1; then
	say "rocewatch not found ($ROCEWATCH): refusing to start the job unchecked"
	exit 1
fi
if [ -z "${SLURM_JOB_NODELIST:-}" ]; then
	say "SLURM_JOB_NODELIST is not set: not run as PrologSlurmctld?"
	exit 1
fi

# A few seconds for 1000 nodes on a LAN; the timeouts bound a node that hangs.
# shellcheck disable=SC2086 # ROCEWATCH_FLEET_ARGS is a list of words
out=$("$ROCEWATCH" fleet check --slurm --connect-timeout 2s --timeout 10s --color never \
	${ROCEWATCH_FLEET_ARGS:-} 2>&1)
rc=$?

if [ -d "$LOGDIR" ] || mkdir -p "$LOGDIR" 2>/dev/null; then
	printf '%s\n' "$out" >"$LOGDIR/fleet-$job.txt" 2>/dev/null || true
fi
verdict=$(printf '%s\n' "$out" | tail -n 1)

case $rc in
0)
	exit 0
	;;
1)
	if [ "${ROCEWATCH_FLEET_STRICT:-0}" = 1 ]; then
		say "WARNING (strict): $verdict"
	else
		say "WARNING, job allowed: $verdict"
		exit 0
	fi
	;;
2) say "CRITICAL: $verdict" ;;
3) say "UNKNOWN (a node did not answer or the check could not run): $verdict" ;;
*) say "fleet check failed (exit $rc): $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')" ;;
esac
# name the outliers where users look: the job's comment (squeue -o %k, scontrol show job)
reason=$(printf '%s\n' "$out" | grep -E '^  (fail|unknown) ' | head -n 3 |
	sed 's/^  *//; s/  */ /g' | tr '\n' ';' | cut -c 1-240)
if command -v scontrol >/dev/null 2>&1 && [ "$job" != unknown ]; then
	scontrol update JobId="$job" Comment="rocewatch fleet: ${reason:-$verdict}" \
		>/dev/null 2>&1 || true
fi
exit 1
