#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: the optimised build side by side with prometheus-node-exporter.
set -euo pipefail
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/bench.py" "$build/rocewatch" "${@:2}"
