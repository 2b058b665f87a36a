#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh KVER OUTDIR: build rwnic.ko for kernel KVER (Debian's 6.1.0-NN-amd64) into OUTDIR,
# from a copy of the sources so that the source tree stays clean.  Prints the .ko's path.
# Exit 0 built (or already up to date), 77 with a one-line reason on stdout when the kernel's
# headers are not installed (linux-headers-KVER, which `contrib/install-deps.sh test`
# installs for the kernel the VM tier boots), 1 when the build itself failed.
set -euo pipefail

kver=${1:?usage: build.sh KVER OUTDIR}
out=${2:?usage: build.sh KVER OUTDIR}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kdir=/lib/modules/$kver/build
[[ -e $kdir/Makefile ]] || kdir=/usr/src/linux-headers-$kver
if [[ ! -e $kdir/Makefile ]]; then
	echo "no headers for the guest kernel $kver (apt-get install linux-headers-$kver, or contrib/install-deps.sh test)"
	exit 77
fi
if ! command -v make >/dev/null || ! command -v gcc >/dev/null; then
	echo "make and gcc are needed to build rwnic"
	exit 77
fi

# Kbuild wants M= absolute.
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Two runs at once (two checkouts' tests sharing a build directory) must not race in one make.
exec 9>"$out/.lock"
flock 9
# Only copy what changed, so that make sees an up-to-date module as such.
for f in rwnic.c Kbuild; do
	cmp -s "$src/$f" "$out/$f" || cp "$src/$f" "$out/$f"
done
log=$out/build.log
if ! make -C "$kdir" M="$out" modules >"$log" 2>&1; then
	echo "rwnic build against $kdir failed:" >&2
	tail -n 30 "$log" >&2
	exit 1
fi
# A warning in a test module is a bug like any other.
if grep -q 'warning:' "$log"; then
	echo "rwnic build against $kdir warned:" >&2
	grep -A3 'warning:' "$log" >&2
	exit 1
fi
printf '%s\n' "$out/rwnic.ko"
