#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every flag a command's --help names is in the man page and the README, and
# the man pages render without a warning (groff -ww).
. "$(dirname "$0")/../lib.sh"

MAN="$SOURCE_DIR/docs/man/rocewatch.8.scd"
README="$SOURCE_DIR/README.md"

flags_of() { # COMMAND...: the long flags its --help names, one a line
	"$ROCEWATCH" "$@" --help | grep -oE -- '--[a-z][a-z0-9.-]*[a-z0-9]' | sort -u
}
# the man page escapes _ and writes --collector.*NAME*; compare the plain text
plain_man=$(sed -e 's/\\_/_/g' -e 's/\*//g' "$MAN")
for cmd in serve check snapshot "rules" report replay export "fleet check" probe; do
	missing_man="" missing_readme=""
	# shellcheck disable=SC2086
	for f in $(flags_of $cmd); do
		case $f in --help | --collector.NAME | --no-collector.NAME) continue ;; esac
		grep -qF -- "$f" <<<"$plain_man" || missing_man="$missing_man $f"
		grep -qF -- "$f" "$README" || missing_readme="$missing_readme $f"
	done
	check "$cmd: every flag of --help is in rocewatch(8)${missing_man:+ (missing:$missing_man)}" [ -z "$missing_man" ]
	check "$cmd: every flag of --help is in the README${missing_readme:+ (missing:$missing_readme)}" [ -z "$missing_readme" ]
done
# the collectors and their defaults, as --help lists them, are in the page's table
while read -r name def; do
	check "rocewatch(8) lists collector $name as $def" \
		grep -qE "^\|  ${name//_/\\\\_}\$" "$MAN"
done < <("$ROCEWATCH" serve --help | sed -n 's/^  \([a-z_]*\) *\[\(on\|off\)\].*/\1 \2/p')

if [ -n "${BUILD_DIR:-}" ] && [ -f "$BUILD_DIR/rocewatch.8" ]; then
	for p in rocewatch.8 rocewatch-rules.5; do
		check "$p renders without a warning (groff -ww -man -z)" bash -c \
			"out=\$(groff -ww -man -z '$BUILD_DIR/$p' 2>&1); [ -z \"\$out\" ] || { echo \"\$out\" >&2; false; }"
	done
else
	echo "SKIP: man pages not built (no scdoc)"
fi
finish
