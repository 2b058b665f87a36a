#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: the optimised build against its floor and prometheus-node-exporter on
# generated sysfs trees, `fleet check` of 1024 nodes on loopback and of 8 000 snapshot
# files, detection latency against node_exporter + Prometheus (fault -> Alertmanager),
# then the live RDMA path (netlink against sysfs) in a qemu guest with soft-RoCE devices
# when the vm tier can run here (root, qemu, a static busybox; BENCH_VM=0 leaves it out).
set -euo pipefail
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
# an uninstalled binary finds the rule profiles only through this
export ROCEWATCH_PROFILE_DIR=${ROCEWATCH_PROFILE_DIR:-$here/../../rules/profiles}
python3 "$here/bench.py" "$build/rocewatch" "${@:2}"
python3 "$here/bench_fleet.py" "$build/rocewatch" "${@:2}"
# fleet check of 8 000 snapshot files (a 64 000-GPU job; BENCH_FLEET_BEFORE=BINARY also runs
# an older build on the same files and compares the verdicts)
python3 "$here/bench_fleet_files.py" "$build/rocewatch" \
	${BENCH_FLEET_BEFORE:+--before "$BENCH_FLEET_BEFORE"} "${@:2}"
# fleet check --prometheus of 8 000 nodes backfilled into a real Prometheus (minutes to
# backfill; BENCH_FLEET_PROM_TSDB=DIR keeps the TSDB for the next run, =0 leaves it out)
if [[ ${BENCH_FLEET_PROM_TSDB:-} != 0 ]]; then
	python3 "$here/bench_fleet_prom.py" "$build/rocewatch" \
		${BENCH_FLEET_PROM_TSDB:+--tsdb "$BENCH_FLEET_PROM_TSDB"}
fi
# fleet check --job on Prometheus and VictoriaMetrics, 8 000 nodes (and 32 000 on
# VictoriaMetrics), compared on the engine and client-side (BENCH_FLEET_ENGINES=0 leaves it
# out, =QUICK runs 200 nodes)
case ${BENCH_FLEET_ENGINES:-} in
0) ;;
QUICK) python3 "$here/bench_fleet_engines.py" "$build/rocewatch" --quick ;;
*) python3 "$here/bench_fleet_engines.py" "$build/rocewatch" --runs 1 ;;
esac
# fault -> alert at Alertmanager, rocewatch vs node_exporter + Prometheus (root: the netns part;
# ~45 s a trial: BENCH_DETECT_TRIALS=0 leaves it out, `make bench-detect` runs it alone)
if [[ ${BENCH_DETECT_TRIALS:-20} != 0 ]]; then
	python3 "$here/bench_detect.py" "$build/rocewatch" --trials "${BENCH_DETECT_TRIALS:-20}"
fi
if [[ ${BENCH_VM:-1} != 0 ]]; then
	echo
	echo "live RDMA path, 8 soft-RoCE devices in a qemu guest (TCG; compare the ratios):"
	rc=0
	"$here/../vm/run-scenario" --builddir "$build" --timeout 600 \
		--results "$build/vm-results/perf-live" "$here/../vm/scenarios/perf-live.sh" || rc=$?
	if [[ -f $build/vm-results/perf-live/guest0/perf-live.txt ]]; then
		cat "$build/vm-results/perf-live/guest0/perf-live.txt"
	elif ((rc != 77)); then
		echo "perf-live did not finish (exit $rc): $build/vm-results/perf-live"
	fi
fi
# the fleet probe over the simulated transport: 1 000 nodes x 8 rails full rail mesh and 8 000
# nodes sparse, 5 trials each; the findings must equal the injected faults (exit 1 if not)
echo
"$build/tests/bench_probe" --trials "${BENCH_PROBE_TRIALS:-5}"
