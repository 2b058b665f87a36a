#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's check examples run as printed: the ```sh block of "### check" is
# taken from README.md line by line and run in a directory that holds what the
# lines name (snapshot.json: one recorded snapshot of a healthy node; job.env;
# site.yaml), with `rocewatch` on PATH.  No line is refused as bad usage, and
# `rocewatch check --from snapshot.json  # a recorded node` says what the README
# says a healthy node gets: OK, exit 0 (one snapshot: counter rules skipped).
. "$(dirname "$0")/../lib.sh"
need_cmd python3

README="$SOURCE_DIR/README.md"
mkdir -p "$TMPD/bin" "$TMPD/run"
ln -s "$(readlink -f "$ROCEWATCH")" "$TMPD/bin/rocewatch"
cp "$SOURCE_DIR/tests/fixtures/snapshots/rules/good-single.json" "$TMPD/run/snapshot.json"
printf 'NCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_SOCKET_IFNAME=eth2\nNCCL_IB_GID_INDEX=3\n' >"$TMPD/run/job.env"
cat >"$TMPD/run/site.yaml" <<'YML'
profile: site
description: a site's own rule, as docs/rules.md writes one
rules:
  - name: jumbo_mtu
    scope: netdev
    expr: mtu >= 9000
    severity: warning
YML

# the block: the first ```sh block after "### check" that runs `rocewatch check --from`
python3 - "$README" >"$TMPD/lines" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
sec = text[text.index("\n### check\n"):]
for block in re.findall(r"```sh\n(.*?)```", sec, re.S):
    if "rocewatch check --from" in block:
        for line in block.splitlines():
            if line.strip():
                print(line)
        break
else:
    sys.exit("no check example block in README.md")
PY
check "the README has the check examples" bash -c "[ \$(wc -l <'$TMPD/lines') -ge 5 ]"
n=0
while IFS= read -r line; do
	n=$((n + 1))
	rc=0
	cmd=$(printf '%s' "${line%%#*}" | sed 's/ *$//')
	(cd "$TMPD/run" && env PATH="$TMPD/bin:$PATH" bash -c "$line") >"$TMPD/out.$n" 2>"$TMPD/err.$n" </dev/null || rc=$?
	echo "$rc" >"$TMPD/rc.$n"
	# bad usage says so on stderr (and check exits 3 for it): never for a printed example
	check "README example runs as printed: $cmd" bash -c \
		"! grep -Eiq 'unknown option|unrecognized|unexpected argument|is not (text|json|a|an) |usage:' '$TMPD/err.$n' ||
		 { cat '$TMPD/err.$n' >&2; false; }"
	case $line in
	*"check --from snapshot.json"*)
		check "  ... a recorded healthy node: OK, exit 0, as the README says" bash -c \
			"[ \$(cat '$TMPD/rc.$n') -eq 0 ] && head -1 '$TMPD/out.$n' | grep -q ': OK\$' &&
			 tail -1 '$TMPD/out.$n' | grep -Eq ', 0 unknown, [0-9]+ skipped: OK\$'"
		;;
	*"rules lint site.yaml"*)
		check "  ... lint of a valid file exits 0" bash -c "[ \$(cat '$TMPD/rc.$n') -eq 0 ]"
		;;
	*"--format json"*)
		check "  ... is JSON" bash -c "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$TMPD/out.$n'"
		;;
	esac
done <"$TMPD/lines"
finish
