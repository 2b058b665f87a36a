#!/bin/sh
# SPDX-License-Identifier: MIT
# Slurm epilog: take the job out of the job-mapping directory that
# prolog-rocewatch.sh wrote it into (dcgm-exporter's layout: one file per GPU,
# a job id a line), so that `rocewatch serve --job-mapping-dir` stops exporting
# roce_job_info{job_id} for it.  Every GPU's file is rewritten without the
# job's line (not only those of SLURM_JOB_GPUS: a GPU list the epilog is not
# given, or a job requeued onto other GPUs, leaves no stale line); a file
# emptied stays, as dcgm-exporter's own -init leaves one per GPU.
#
#   Epilog=/etc/slurm/epilog.d/rocewatch.sh       (slurm.conf; run as root, no search path)
#
# Settings: ROCEWATCH_JOB_MAPPING_DIR (or DCGM_HPC_JOB_MAPPING_DIR), in the
# environment or in ROCEWATCH_PROLOG_CONF (default /etc/rocewatch/prolog.conf),
# as for the prolog.  Always exits 0: a job that ended must not drain the node
# because its mapping could not be cleaned (said on stderr, slurmd's log).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
conf=${ROCEWATCH_PROLOG_CONF:-/etc/rocewatch/prolog.conf}
# shellcheck disable=SC1090
[ -r "$conf" ] && . "$conf"
dir=${ROCEWATCH_JOB_MAPPING_DIR:-${DCGM_HPC_JOB_MAPPING_DIR:-}}
[ -n "$dir" ] && [ -d "$dir" ] && [ -n "${SLURM_JOB_ID:-}" ] || exit 0
(
	command -v flock >/dev/null 2>&1 && flock -w 10 9
	for f in "$dir"/*; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		grep -Fqx -- "$SLURM_JOB_ID" "$f" || continue
		g=${f##*/}
		{ grep -Fvx -- "$SLURM_JOB_ID" "$f" || :; } >"$dir/.$g.$$" && mv -f "$dir/.$g.$$" "$f" ||
			echo "rocewatch epilog: could not rewrite $f" >&2
	done
) 9>>"$dir/.lock"
exit 0
