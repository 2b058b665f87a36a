#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: the optimised build side by side with prometheus-node-exporter, then
# `fleet check` of 1024 nodes on loopback.
set -euo pipefail
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
# an uninstalled binary finds the rule profiles only through this
export ROCEWATCH_PROFILE_DIR=${ROCEWATCH_PROFILE_DIR:-$here/../../rules/profiles}
python3 "$here/bench.py" "$build/rocewatch" "${@:2}"
python3 "$here/bench_fleet.py" "$build/rocewatch" "${@:2}"
