#!/bin/sh
# SPDX-License-Identifier: MIT
# Slurm prolog: refuse to start a job on a node whose RoCE configuration is
# wrong, and fail closed: a check that cannot tell (UNKNOWN), cannot run
# (rocewatch missing, not executable, killed, timed out) or says CRITICAL
# stops the job and drains the node with a reason saying why.
#
#   Prolog=/etc/slurm/prolog.d/rocewatch.sh       (slurm.conf; Slurm runs it as
#                                                  root, with no search path)
#
# Settings: environment variables, or KEY=VALUE lines in the file named by
# ROCEWATCH_PROLOG_CONF (default /etc/rocewatch/prolog.conf, read if present):
#   ROCEWATCH        full path of rocewatch (default /usr/local/bin/rocewatch;
#                    a Debian package installs /usr/bin/rocewatch)
#   ROCEWATCH_ARGS   extra `rocewatch check` flags, e.g. "--profile site --param roce_priority=5"
#   ROCEWATCH_TIMEOUT  seconds before the check counts as hung (default 60)
#   ROCEWATCH_PROLOG_MODE
#                    fail-closed (default): CRITICAL, UNKNOWN, and a check that
#                      cannot run exit 1 (Slurm requeues the job) after draining
#                      the node with `scontrol update ... State=DRAIN Reason=...`
#                    warn-only: say so on stderr (slurmd's log) and exit 0 - for a
#                      first rollout, never for production
#   SCONTROL         full path of scontrol (default /usr/bin/scontrol)
#   ROCEWATCH_JOB_MAPPING_DIR
#                    when set (or DCGM_HPC_JOB_MAPPING_DIR is), a job that starts is
#                    written into this job-mapping directory, dcgm-exporter's layout:
#                    its id appended to the file of each GPU Slurm gave it (named by
#                    the GPU's index: SLURM_JOB_GPUS, else CUDA_VISIBLE_DEVICES, else
#                    GPU_DEVICE_ORDINAL), which `rocewatch serve --job-mapping-dir`
#                    exports as roce_job_info{job_id} (`fleet check --job`).
#                    contrib/slurm/epilog-rocewatch.sh takes it out again.  The same
#                    directory can serve dcgm-exporter (DCGM_HPC_JOB_MAPPING_DIR).
#
# `rocewatch check` exits 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; WARNING lets
# the job start and says why on stderr.  This script exits 0 (start the job)
# or 1 (do not).
# slurmd gives a prolog no search path: the tools this script uses are found here
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
conf=${ROCEWATCH_PROLOG_CONF:-/etc/rocewatch/prolog.conf}
# shellcheck disable=SC1090
[ -r "$conf" ] && . "$conf"
ROCEWATCH=${ROCEWATCH:-/usr/local/bin/rocewatch}
SCONTROL=${SCONTROL:-/usr/bin/scontrol}
ROCEWATCH_TIMEOUT=${ROCEWATCH_TIMEOUT:-60}
mode=${ROCEWATCH_PROLOG_MODE:-fail-closed}
node=${SLURMD_NODENAME:-$(hostname -s 2>/dev/null || hostname)}

# map_job: this job into the job-mapping directory (one file per GPU, a job id a line).
# Rewritten through a temporary file and a rename, under flock where there is one, so
# that serve never reads half a file and two prologs never lose each other's line.
map_job() {
	dir=${ROCEWATCH_JOB_MAPPING_DIR:-${DCGM_HPC_JOB_MAPPING_DIR:-}}
	[ -n "$dir" ] && [ -n "${SLURM_JOB_ID:-}" ] || return 0
	gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-${GPU_DEVICE_ORDINAL:-}}}
	if [ -z "$gpus" ]; then
		echo "rocewatch prolog: $node: job $SLURM_JOB_ID has no GPU: not in $dir" >&2
		return 0
	fi
	mkdir -p "$dir" 2>/dev/null
	(
		command -v flock >/dev/null 2>&1 && flock -w 10 9
		for g in $(printf '%s' "$gpus" | tr ',' ' '); do
			case $g in
			'' | *[!0-9]*) continue ;; # an index; a UUID list is the pod's business
			esac
			f=$dir/$g
			{ [ -f "$f" ] && grep -Fvx -- "$SLURM_JOB_ID" "$f"; echo "$SLURM_JOB_ID"; } >"$dir/.$g.$$" &&
				mv -f "$dir/.$g.$$" "$f" ||
				echo "rocewatch prolog: $node: could not write $f" >&2
		done
	) 9>>"$dir/.lock"
}

case $mode in
fail-closed | warn-only) ;;
*)
	echo "rocewatch prolog: ROCEWATCH_PROLOG_MODE='$mode' is not fail-closed or warn-only; failing closed" >&2
	mode=fail-closed
	;;
esac

# stop REASON: drain this node with REASON and refuse the job (or only warn)
stop() {
	echo "rocewatch prolog: $node: $1" >&2
	if [ "$mode" = warn-only ]; then
		echo "rocewatch prolog: warn-only: the job starts anyway" >&2
		map_job
		exit 0
	fi
	# 255 bytes: what slurmdbd keeps of a reason (a long path must not lose the rest)
	if ! "$SCONTROL" update NodeName="$node" State=DRAIN \
		Reason="$(printf 'rocewatch: %s' "$1" | cut -b1-255)"; then
		echo "rocewatch prolog: $SCONTROL could not drain $node" >&2
	fi
	exit 1
}

if [ ! -x "$ROCEWATCH" ]; then
	stop "$ROCEWATCH not found or not executable (set ROCEWATCH in $conf)"
fi
# shellcheck disable=SC2086
if command -v timeout >/dev/null 2>&1; then
	out=$(timeout "$ROCEWATCH_TIMEOUT" "$ROCEWATCH" check --color never $ROCEWATCH_ARGS 2>&1)
else
	out=$("$ROCEWATCH" check --color never $ROCEWATCH_ARGS 2>&1)
fi
rc=$?
# The drain reason: the failing and undecided rules with their objects, worst first
# as check prints them (critical failures, warnings, then what it could not decide;
# info rules never change the verdict), e.g.
#   "no_pause_storm_errors(eth2); warning: iommu_passthrough(node) ...; unknown: ..."
# cut to fit Slurm's reason field: slurmdbd keeps a node event's reason in a TINYTEXT
# column (255 bytes), and `sinfo -R` shows its start.  Rows read
# "  fail     critical  rule  text"; an object's header ("netdev eth2") follows a
# blank line; a wrapped fix text never starts a line with two spaces and a word.
# reasons MAX: the list of at most MAX bytes ("+N more" when some did not fit)
reasons() {
	printf '%s\n' "$out" | awk -v max="$1" '
	function short(line,   w) {
		split(line, w, " ")
		if (w[1] == "node") return "node"
		if (w[1] == "job") return "job"
		return w[2]
	}
	/^$/ { blank = 1; next }
	blank && /^(node|netdev|rdma_port|job) / { obj = short($0) }
	{ blank = 0 }
	/^  (fail|unknown) +(critical|warning) +[^ ]/ {
		grp = $1 == "unknown" ? "unknown" : $2
		key = grp " " $3
		if (!(key in objs)) { order[++n] = key; group[n] = grp; rule[n] = $3; objs[key] = ""; cnt[key] = 0 }
		cnt[key]++
		if (cnt[key] <= 3) objs[key] = objs[key] (cnt[key] > 1 ? "," : "") obj
	}
	END {
		line = ""
		for (i = 1; i <= n; i++) {
			key = order[i]
			o = objs[key]
			if (cnt[key] > 3) o = o ",+" (cnt[key] - 3)
			item = rule[i] (o != "" ? "(" o ")" : "")
			if (i == 1) sep = ""
			else if (group[i] != group[i - 1]) sep = "; " group[i] ": "
			else sep = " "
			more = i < n ? 12 : 0 # room for " +NNN more" after this one
			if (length(line) + length(sep) + length(item) + more > max) {
				line = line " +" (n - i + 1) " more"
				break
			}
			line = line sep item
		}
		print line
	}'
}
case $rc in
0)
	map_job
	exit 0
	;;
1)
	echo "rocewatch prolog: $node: RoCE check WARNING ($(reasons 400)); the job starts" >&2
	printf '%s\n' "$out" >&2
	map_job
	exit 0
	;;
2)
	printf '%s\n' "$out" >&2
	# "rocewatch: RoCE check CRITICAL: " and the list in 255 bytes
	rules=$(reasons 223)
	stop "RoCE check CRITICAL: ${rules:-see rocewatch check}"
	;;
3)
	printf '%s\n' "$out" >&2
	rules=$(reasons 205)
	stop "RoCE check UNKNOWN, could not decide: ${rules:-$(printf '%s\n' "$out" | tail -1 | cut -c1-200)}"
	;;
124) stop "rocewatch check did not finish in ${ROCEWATCH_TIMEOUT}s" ;;
126 | 127) stop "$ROCEWATCH could not be run (exit $rc): $(printf '%s\n' "$out" | tail -1)" ;;
*)
	printf '%s\n' "$out" >&2
	stop "rocewatch check failed (exit $rc)"
	;;
esac
