#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `meson install` alone (into a DESTDIR) puts in what an operator needs: the
# binary, the profiles, the man pages, the unit with this prefix's paths, the
# defaults file, the drop-ins and the NPD plugin.
. "$(dirname "$0")/../lib.sh"
[ -f "$BUILD_DIR/build.ninja" ] || skip "needs the meson build directory"
prefix=$(meson introspect "$BUILD_DIR" --buildoptions | python3 -c '
import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
unitdir=$(meson introspect "$BUILD_DIR" --buildoptions | python3 -c '
import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "systemdunitdir"))')
[ -n "$unitdir" ] || { [ "$prefix" = /usr ] && unitdir=$(pkg-config --variable=systemdsystemunitdir systemd); }
[ -n "$unitdir" ] || unitdir=$prefix/lib/systemd/system
sysconf=$prefix/etc
[ "$prefix" = /usr ] && sysconf=/etc

DESTDIR="$TMPD/root" meson install -C "$BUILD_DIR" --no-rebuild --quiet >"$TMPD/install.log" 2>&1 ||
	die "meson install failed: $(tail -5 "$TMPD/install.log")"
R="$TMPD/root"
for f in "$prefix/bin/rocewatch" "$prefix/share/rocewatch/profiles/lossless-roce.yaml" \
	"$prefix/share/rocewatch/profiles/lossy-roce.yaml" "$prefix/share/rocewatch/profiles/container.yaml" \
	"$unitdir/rocewatch.service" "$sysconf/default/rocewatch" \
	"$prefix/share/doc/rocewatch/examples/systemd/wire.conf" \
	"$prefix/share/doc/rocewatch/examples/systemd/debugfs.conf" \
	"$prefix/share/doc/rocewatch/examples/systemd/lldp.conf" \
	"$prefix/share/rocewatch/node-problem-detector/rocewatch-npd.sh" \
	"$prefix/share/rocewatch/node-problem-detector/rocewatch-plugin.json" \
	"$prefix/share/bash-completion/completions/rocewatch"; do
	check "installs $f" test -s "$R$f"
done
if command -v scdoc >/dev/null; then
	check "installs rocewatch(8) and rocewatch-rules(5)" bash -c \
		"test -s '$R$prefix/share/man/man8/rocewatch.8' && test -s '$R$prefix/share/man/man5/rocewatch-rules.5'"
fi
check "the unit runs $prefix/bin/rocewatch" grep -qx "ExecStart=$prefix/bin/rocewatch serve \$ROCEWATCH_ARGS" "$R$unitdir/rocewatch.service"
check "the unit reads $sysconf/default/rocewatch" grep -qx "EnvironmentFile=-$sysconf/default/rocewatch" "$R$unitdir/rocewatch.service"
check "the bash completion searches this prefix's profiles, no @placeholder@ left" bash -c \
	"grep -q '\"$prefix/share/rocewatch/profiles\"' '$R$prefix/share/bash-completion/completions/rocewatch' &&
	 ! grep -q '@[A-Z_]*@' '$R$prefix/share/bash-completion/completions/rocewatch'"
check "no @placeholder@ left in the unit" bash -c "! grep -q '@[a-z]*@' '$R$unitdir/rocewatch.service'"
check "the NPD wrapper is executable" test -x "$R$prefix/share/rocewatch/node-problem-detector/rocewatch-npd.sh"
# Not run from its DESTDIR it would find its profiles in $prefix/share, then in
# itself: where none are installed on this machine, the built-in copy loads, and
# an unknown name's error names that directory alone and the built-in names.
if [ -e "$prefix/share/rocewatch/profiles/lossless-roce.yaml" ]; then
	echo "SKIP: profiles are installed in $prefix/share here; not checking the lookup"
else
	check "the installed binary looks for profiles in $prefix/share, then in itself" bash -c \
		"cd / && env -u ROCEWATCH_PROFILE_DIR '$R$prefix/bin/rocewatch' check --profile nope --from '$SOURCE_DIR/tests/fixtures/snapshots/rules/good.json' 2>&1 | grep -q \"looked in $prefix/share/rocewatch/profiles; built in: container, fleet, lossless-roce, lossy-roce)\""
	check "nothing installed in $prefix/share: the installed binary runs its built-in profile" bash -c \
		"cd / && env -u ROCEWATCH_PROFILE_DIR '$R$prefix/bin/rocewatch' rules list | head -1 | grep -qx 'profile lossless-roce (built into this binary)'"
fi
finish
