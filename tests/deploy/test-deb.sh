#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package end to end, on this machine (root): build it once from a
# copy of the tree (the checkout stays clean), lintian without errors, install it
# with apt-get, run the installed binary (version, check --from a fixture with
# the installed profiles only), verify the systemd unit and its drop-ins and
# measure its exposure, then purge and show that nothing is left.
. "$(dirname "$0")/../lib.sh"
need_root
for c in dpkg-buildpackage lintian systemd-analyze apt-get git groff; do
	need_cmd "$c" "contrib/install-deps.sh test"
done
dpkg-query -W -f='${Status}' rocewatch 2>/dev/null | grep -q "ok installed" &&
	skip "a rocewatch package is already installed here; not touching it"
[ -d "$SOURCE_DIR/.git" ] || [ -f "$SOURCE_DIR/.git" ] || skip "needs a git checkout"

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
before=$(git -C "$SOURCE_DIR" status --porcelain --untracked-files=all)
deb=$("$SOURCE_DIR/contrib/build-deb.sh" "$TMPD/out" | tail -n 1) ||
	die "make deb failed: $(tail -20 "$TMPD/out/build.log" 2>/dev/null)"
version=$(dpkg-parsechangelog -l "$SOURCE_DIR/debian/changelog" -S Version)
check "the package is rocewatch_${version}_$(dpkg --print-architecture).deb" \
	[ "$(basename "$deb")" = "rocewatch_${version}_$(dpkg --print-architecture).deb" ]
check "building it left the checkout as it was" \
	bash -c "[ \"\$(git -C '$SOURCE_DIR' status --porcelain --untracked-files=all)\" = \"\$1\" ]" _ "$before"

lintian "$deb" >"$TMPD/lintian" 2>&1 || true
grep -v 'running with root privileges' "$TMPD/lintian" | sed 's/^/  lintian: /'
check "lintian: no errors" bash -c "! grep -q '^E:' '$TMPD/lintian'"
check "the package depends on libcurl4, which it opens with dlopen" bash -c \
	"dpkg-deb -f '$deb' Depends | grep -qw libcurl4"
check "the package depends on libibverbs1, which it opens with dlopen" bash -c \
	"dpkg-deb -f '$deb' Depends | grep -qw libibverbs1"
check "the package depends on libcrypt1, which it opens with dlopen" bash -c \
	"dpkg-deb -f '$deb' Depends | grep -qw libcrypt1"

# Purge must not remove state that is not ours: only a DynamicUser, no static user.
check "no rocewatch user before" bash -c "! getent passwd rocewatch"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	-o DPkg::Lock::Timeout=600 "$deb" >"$TMPD/apt.log" 2>&1 || die "apt-get install failed: $(tail -5 "$TMPD/apt.log")"
on_exit "DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq rocewatch"
dpkg -L rocewatch >"$TMPD/files"
for f in /usr/bin/rocewatch /usr/share/rocewatch/profiles/lossless-roce.yaml \
	/usr/share/rocewatch/profiles/lossy-roce.yaml /usr/share/rocewatch/profiles/container.yaml \
	/usr/share/man/man8/rocewatch.8.gz /usr/share/man/man5/rocewatch-rules.5.gz \
	/lib/systemd/system/rocewatch.service /etc/default/rocewatch \
	/usr/share/doc/rocewatch/examples/systemd/wire.conf \
	/usr/share/doc/rocewatch/examples/systemd/debugfs.conf \
	/usr/share/doc/rocewatch/examples/systemd/lldp.conf \
	/usr/share/rocewatch/node-problem-detector/rocewatch-npd.sh \
	/usr/share/bash-completion/completions/rocewatch; do
	check "installed: $f" bash -c "grep -qx '$f' '$TMPD/files' && [ -e '$f' ]"
done
check "the bash completion names the package's profile directory" \
	grep -q '"/usr/share/rocewatch/profiles"' /usr/share/bash-completion/completions/rocewatch
check "/etc/default/rocewatch is a conffile" bash -c "dpkg-query -W -f='\${Conffiles}' rocewatch | grep -q ' /etc/default/rocewatch '"

# The installed binary, with nothing of the checkout in its environment or its bytes.
run_installed() { env -u ROCEWATCH_PROFILE_DIR -u ROCEWATCH PATH=/usr/bin:/bin "$@"; }
check "rocewatch version: the package's version" bash -c \
	"$(declare -f run_installed); run_installed rocewatch version | grep -q '^rocewatch $version (revision '"
check "the binary names no path of the build tree" bash -c "! grep -aq -- '/rocewatch-deb\.' /usr/bin/rocewatch && ! grep -aq -- '$SOURCE_DIR' /usr/bin/rocewatch"
check "rocewatch check --from a fixture: OK with the installed profile" bash -c \
	"$(declare -f run_installed); cd /; run_installed rocewatch check --from '$FX/good.json' --format json >'$TMPD/check.json'"
check "... the profile came from /usr/share/rocewatch/profiles" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exit_code"] == 0, d["exit_code"]
assert [p["file"] for p in d["profiles"]] == ["/usr/share/rocewatch/profiles/lossless-roce.yaml"], d["profiles"]' \
	"$TMPD/check.json"
check "check --from a misconfigured node: CRITICAL, exit 2" bash -c \
	"$(declare -f run_installed); run_installed rocewatch check --from '$FX/mtu-1500.json' >/dev/null; [ \$? = 2 ]"
check "the container profile is installed too" bash -c \
	"$(declare -f run_installed); run_installed rocewatch check --from '$FX/pod-given.json' --profile lossless-roce --profile container >/dev/null"
check "man rocewatch renders without a warning" bash -c \
	"[ -z \"\$(MANWIDTH=80 man -l /usr/share/man/man8/rocewatch.8.gz 2>&1 >/dev/null)\" ] && zcat /usr/share/man/man8/rocewatch.8.gz | groff -ww -man -z 2>&1 | { ! grep .; }"
check "man rocewatch-rules renders without a warning" bash -c \
	"zcat /usr/share/man/man5/rocewatch-rules.5.gz | groff -ww -man -z 2>&1 | { ! grep .; }"

# systemd: the unit as installed, and with each documented drop-in
unit=/lib/systemd/system/rocewatch.service
check "the unit runs the installed binary and reads /etc/default/rocewatch" bash -c \
	"grep -qx 'ExecStart=/usr/bin/rocewatch serve \$ROCEWATCH_ARGS' $unit && grep -qx 'EnvironmentFile=-/etc/default/rocewatch' $unit"
check "the unit keeps its state in StateDirectory=rocewatch, as a DynamicUser" bash -c \
	"grep -qx 'StateDirectory=rocewatch' $unit && grep -qx 'DynamicUser=yes' $unit && ! grep -q '^LimitMEMLOCK' $unit"
systemd-analyze verify "$unit" >"$TMPD/verify" 2>&1 || true
# Without systemd as PID 1 (a container) verify cannot resolve the default
# dependencies' targets; anything else it says about our unit is a defect.
grep -v -e 'sysinit.target not found' -e 'Failed to create rocewatch.service/start' "$TMPD/verify" \
	| sed 's/^/  verify: /' | tee "$TMPD/verify.own"
check "systemd-analyze verify: nothing to say about the unit" bash -c "! [ -s '$TMPD/verify.own' ]"
exposure() { # UNIT_FILE: the overall figure
	systemd-analyze security --offline=yes "$1" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
cp "$unit" "$TMPD/rocewatch.service"
e=$(exposure "$TMPD/rocewatch.service")
echo "  systemd-analyze security: exposure $e (default collectors)"
check "exposure <= 3.0" python3 -c "import sys; sys.exit(0 if 0 < float('$e') <= 3.0 else 1)"
for d in wire debugfs lldp; do
	mkdir -p "$TMPD/$d/rocewatch.service.d"
	cp "$unit" "$TMPD/$d/"
	cp "/usr/share/doc/rocewatch/examples/systemd/$d.conf" "$TMPD/$d/rocewatch.service.d/"
	e=$(exposure "$TMPD/$d/rocewatch.service")
	echo "  systemd-analyze security: exposure $e (with the $d drop-in)"
	check "with the $d drop-in: exposure <= 3.0" python3 -c "import sys; sys.exit(0 if 0 < float('$e') <= 3.0 else 1)"
done
check "the wire drop-in grants CAP_BPF and CAP_NET_ADMIN and no more" bash -c \
	"systemd-analyze security --offline=yes '$TMPD/wire/rocewatch.service' 2>/dev/null | grep '✗ CapabilityBoundingSet' | grep -o 'CAP_[A-Z_]*' | sort | tr '\n' ' ' | grep -qx 'CAP_BPF CAP_NET_ADMIN '"

# What systemd would have made at run time, so purge has it to remove.
mkdir -p /var/lib/private/rocewatch && ln -sfn private/rocewatch /var/lib/rocewatch
touch /var/lib/private/rocewatch/rocewatch.db
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=600 rocewatch >"$TMPD/purge.log" 2>&1 ||
	die "apt-get purge failed: $(tail -5 "$TMPD/purge.log")"
check "purged: dpkg knows no rocewatch" bash -c "! dpkg-query -W -f='\${Status}' rocewatch 2>/dev/null | grep -q installed"
# files and links (directories such as /usr/bin are shared; ours are checked below)
left=$(while read -r f; do
	if [ ! -d "$f" ] && { [ -e "$f" ] || [ -L "$f" ]; }; then echo "$f"; fi
done <"$TMPD/files")
check "purged: every file the package had is gone (${left:-none left})" [ -z "$left" ]
check "purged: its directories and the conffile are gone" bash -c \
	"! [ -e /usr/share/rocewatch ] && ! [ -e /usr/share/doc/rocewatch ] && ! [ -e /etc/default/rocewatch ]"
check "purged: the state directory is gone" bash -c "! [ -e /var/lib/rocewatch ] && ! [ -e /var/lib/private/rocewatch ]"
check "purged: no rocewatch user or group (DynamicUser)" bash -c "! getent passwd rocewatch && ! getent group rocewatch"
finish
