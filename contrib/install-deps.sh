#!/bin/sh
# SPDX-License-Identifier: MIT
# Install what rocewatch needs to build, run and test on Debian 12.
# Only calls apt-get when something is missing, so repeated runs are fast.
set -eu

BUILD="meson ninja-build pkg-config gcc libc6-dev libmnl-dev libnl-3-dev libnl-route-3-dev
libibverbs-dev libmicrohttpd-dev libcurl4-openssl-dev libbpf-dev bpftool clang llvm
libyaml-dev libjansson-dev libsqlite3-dev zlib1g-dev linux-libc-dev"
RUN="iproute2 ethtool rdma-core ibverbs-utils"
TEST="libcmocka-dev python3 curl prometheus prometheus-alertmanager qemu-system-x86
busybox-static kmod cpio perftest sqlite3"
BENCH="prometheus-node-exporter wrk hyperfine"
# libFuzzer's runtime for Debian 12's clang (14); `make fuzz` only
FUZZ="clang libclang-rt-14-dev"

case "${1:-all}" in
build) want="$BUILD" ;;
run) want="$BUILD $RUN" ;;
test) want="$BUILD $RUN $TEST" ;;
fuzz) want="$BUILD $FUZZ" ;;
all | bench) want="$BUILD $RUN $TEST $BENCH $FUZZ" ;;
*) echo "usage: $0 [build|run|test|bench|fuzz|all]" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "Installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq -o DPkg::Lock::Timeout=900
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=900 $missing
