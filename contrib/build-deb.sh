#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make deb`: build the Debian package from a copy of the checkout (the files git
# tracks, plus new ones it does not ignore), so dpkg-buildpackage's debian/.debhelper,
# obj-*/ and debian/rocewatch/ never land in the source tree.
# Leaves OUT/rocewatch_VERSION_ARCH.deb (OUT: build-deb/ by default).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-deb}
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
work=$(mktemp -d "${TMPDIR:-/tmp}/rocewatch-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/rocewatch-$version" "$out"
# tar keeps the fixtures' symlinks as links; deleted-but-unstaged files are skipped
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -xf - -C "$work/rocewatch-$version"
# the copy has no .git: hand the revision to meson's vcs_tag
git -C "$src" rev-parse --short=12 HEAD >"$work/rocewatch-$version/.tarball-revision" 2>/dev/null ||
	rm -f "$work/rocewatch-$version/.tarball-revision"
(cd "$work/rocewatch-$version" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
	cp "$work/build.log" "$out/build.log"
	tail -40 "$work/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log above)" >&2
	exit 1
}
cp "$work/rocewatch_${version}_${arch}.deb" "$out/"
cp "$work/build.log" "$out/build.log"
echo "$out/rocewatch_${version}_${arch}.deb"
