#!/bin/sh
# SPDX-License-Identifier: MIT
# Install what rocewatch needs to build, run and test on Debian 12.
# Only calls apt-get when something is missing, so repeated runs are fast.
set -eu

# Each list names what its step runs or links, checked by tracing every exec of
# the test tiers (strace -f -e execve, packages by dpkg -S); Essential packages
# (coreutils, util-linux, bsdutils, findutils, grep, sed, gawk/mawk, dpkg, ...)
# are on every Debian system and not listed.
#   BUILD  compiling rocewatch (meson.build runs python3 for the layering check
#          and rules/gen-builtin-profiles.py, which builds the profiles in;
#          clang, llvm, bpftool and libbpf-dev build the BPF wire view)
#   RUN    running it: rdma-core's udev rules load ib_uverbs and friends, so
#          libibverbs (pulled in by libibverbs-dev with its providers) finds the
#          devices; nothing else is executed by rocewatch
#   TEST   the test tiers: cmocka (unit), curl/python3 (the shell tiers), iproute2
#          and ethtool (netns), prometheus/promtool/alertmanager and victoria-metrics
#          (e2e: fleet check on a second engine), jq, qemu,
#          busybox-static, kmod, cpio, perftest, ibverbs-utils (vm: guests run
#          the host's binaries), librsvg2-bin (the SVG is rendered),
#          prometheus-node-exporter (bench-quick compares against it)
#          openssl (certificates), apache2-utils (htpasswd), wrk (HTTP load),
#          chromium (the status page rendered headless, e2e), strace (proves an
#          excluded RDMA device is never opened: tests/cli/test-rdma-exclude.sh),
#          time (GNU /usr/bin/time: fleet check's peak RSS, tests/fleet/test-fleet.sh),
#          lldpd (the LLDP neighbour the netns tests run in a namespace of their own;
#          installed without ever starting on the host: see SILENT)
#   BENCH  `make bench`: hyperfine on top; strace counts the system calls of a
#          collection in the vm guest (tests/vm/scenarios/perf-live.sh)
#   FUZZ   `make fuzz`: libFuzzer's runtime for Debian 12's clang (14)
BUILD="meson ninja-build pkg-config gcc libc6-dev python3 libmnl-dev
libibverbs-dev libmicrohttpd-dev libcurl4-openssl-dev libbpf-dev bpftool
clang llvm libyaml-dev libjansson-dev libsqlite3-dev zlib1g-dev linux-libc-dev libgnutls28-dev
libcrypt-dev libcap-ng-dev"
RUN="rdma-core"
TEST="libcmocka-dev curl iproute2 ethtool prometheus prometheus-alertmanager
prometheus-node-exporter victoria-metrics jq qemu-system-x86 busybox-static kmod cpio perftest ibverbs-utils
librsvg2-bin openssl apache2-utils wrk chromium strace time lldpd"
# Daemons the tests start themselves, in namespaces or on loopback: their packages start
# them on install, and CI runs on real machines, where an lldpd would send LLDP out of
# every NIC and a victoria-metrics would listen on :8428 for anyone.  They are
# installed with a policy-rc.d that refuses every start, then disabled and masked.
SILENT="lldpd victoria-metrics"
# The vm tier's test-only kernel module (tests/vm/rwnic/) is built against the headers of
# the kernel the guests boot: the newest linux-image-6.1.0-NN-amd64 apt knows, as
# tests/vm/vmlib.sh picks it (gcc and make come with linux-headers' dependencies).
vm_headers() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
		awk '{ print $1 }' | sort -rV | head -n 1 | sed 's/^linux-image-/linux-headers-/'
}
BENCH="hyperfine strace"
# make deb (debian/control's Build-Depends beyond BUILD) and the deploy tests
# (lintian, systemd-analyze and the /bin/kill the unit reloads with, manifest YAML, man pages)
DEB="build-essential debhelper dpkg-dev lintian scdoc libcmocka-dev python3 pkgconf"
DEPLOY="$DEB python3-yaml systemd procps groff-base man-db"
FUZZ="clang libclang-rt-14-dev"

headers=false
case "${1:-all}" in
build) want="$BUILD" ;;
run) want="$BUILD $RUN" ;;
test) want="$BUILD $RUN $TEST $DEPLOY" headers=true ;;
deb) want="$BUILD $DEB" ;;
fuzz) want="$BUILD $FUZZ" ;;
all | bench) want="$BUILD $RUN $TEST $DEPLOY $BENCH $FUZZ" headers=true ;;
*) echo "usage: $0 [build|run|test|deb|bench|fuzz|all]" >&2; exit 2 ;;
esac

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
# the guests' headers, when wanted and not there ("" when apt knows no such kernel)
headers_missing() {
	$headers || return 1
	h=$(vm_headers)
	[ -z "$h" ] || ! installed "$h"
}

missing=""
for p in $want; do
	installed "$p" || missing="$missing $p"
done
[ -z "$missing" ] && ! headers_missing && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq -o DPkg::Lock::Timeout=900
# A fresh machine's apt lists can be empty: the kernel (and so its headers) is known only now.
if $headers; then
	h=$(vm_headers)
	[ -n "$h" ] && ! installed "$h" && missing="$missing $h"
fi
[ -z "$missing" ] && exit 0
loud="" silent=""
for p in $missing; do
	case " $SILENT " in
	*" $p "*) silent="$silent $p" ;;
	*) loud="$loud $p" ;;
	esac
done
echo "Installing:$missing"
if [ -n "$loud" ]; then
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=900 $loud
fi
[ -z "$silent" ] && exit 0

# invoke-rc.d and deb-systemd-invoke ask /usr/sbin/policy-rc.d; 101 is "action forbidden".
# One already there (a container's) is put back afterwards, whatever it said.
policy=/usr/sbin/policy-rc.d saved=/usr/sbin/policy-rc.d.rocewatch-saved
restore_policy() {
	$SUDO rm -f "$policy"
	if [ -e "$saved" ]; then $SUDO mv "$saved" "$policy"; fi
}
if [ -e "$policy" ]; then $SUDO mv "$policy" "$saved"; fi
trap restore_policy EXIT
printf '#!/bin/sh\n# rocewatch install-deps.sh: no service starts during this install\nexit 101\n' |
	$SUDO tee "$policy" >/dev/null
$SUDO chmod 755 "$policy"
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=900 $silent
restore_policy
trap - EXIT
# Never at boot either: the package enabled the unit (or its init script).
for p in $silent; do
	if [ -d /run/systemd/system ]; then
		$SUDO systemctl disable --now "$p.service" >/dev/null 2>&1 || true
	else
		$SUDO systemctl disable "$p.service" >/dev/null 2>&1 || true
	fi
	$SUDO systemctl mask "$p.service" >/dev/null
	$SUDO update-rc.d "$p" disable >/dev/null 2>&1 || true
	if [ -d /run/systemd/system ] && systemctl is-active --quiet "$p.service"; then
		echo "install-deps.sh: $p.service is running after its install; stop it" >&2
		exit 1
	fi
done
