#!/bin/sh
# SPDX-License-Identifier: MIT
# The typed store macros of src/core/cli.h: a row whose member is not of its
# kind's type stops the build (a static assertion), a right one compiles.
set -u
CC=${CC:-cc}
src=${SOURCE_DIR:-$(dirname "$0")/../..}
f=$src/tests/unit/cli_typed_rows.c
fail=0
$CC -std=gnu11 -fsyntax-only -Wall -Wextra -Werror -I"$src/src/core" "$f" || { echo "FAIL: the good rows do not compile"; fail=1; }
for bad in BAD_DURATION BAD_FLAG BAD_STRING BAD_STRDUP BAD_COUNT BAD_COUNT_BOOL BAD_CHOICE; do
	out=$($CC -std=gnu11 -fsyntax-only -I"$src/src/core" -D$bad "$f" 2>&1)
	if [ $? -eq 0 ]; then
		echo "FAIL: $bad compiles"
		fail=1
	elif ! printf '%s' "$out" | grep -q "option row: struct t"; then
		echo "FAIL: $bad: not the row's own message:"; printf '%s\n' "$out" | head -5
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "ok: typed rows"
exit $fail
