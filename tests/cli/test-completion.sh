#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bash completion the build installs (build/rocewatch.bash, installed as
# bash-completion/completions/rocewatch): commands, each command's options as
# its --help names them, the values of --format and --color, profile names for
# --profile.  Completion is driven as bash drives it: COMP_WORDS/COMP_CWORD
# set, the function called, COMPREPLY read.
. "$(dirname "$0")/../lib.sh"

COMP="$BUILD_DIR/rocewatch.bash"
[ -f "$COMP" ] || die "no $COMP: the build configures it from contrib/bash-completion/rocewatch.in"

# complete WORD...: the candidates for the last word, sorted, one a line
complete_words() {
	# shellcheck disable=SC1090
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rocewatch;
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$COMP" "$ROCEWATCH" "$@"
}
has() { # WANT WORD...: WANT is among the candidates
	local want=$1
	shift
	complete_words "$@" | grep -qx -- "$want" ||
		{ echo "  '$want' not among: $(complete_words "$@" | tr '\n' ' ')" >&2; return 1; }
}
exactly() { # "A B ..." WORD...: the candidates are exactly these
	local want=$1 got
	shift
	got=$(complete_words "$@" | tr '\n' ' ')
	[ "$got" = "$want " ] || { echo "  got '$got', want '$want'" >&2; return 1; }
}

check "the completion loads and registers for rocewatch" bash -c \
	". '$COMP' && complete -p rocewatch | grep -q -- '-F _rocewatch'"
check "commands" exactly "--help --version check export fleet probe replay report rules serve snapshot version" ""
check "a command's prefix" exactly "replay report" "re"
check "check's options come from its --help" has --nccl-env check --n
check "check's options: --profile, -j" bash -c \
	"$(declare -f complete_words has); COMP='$COMP' ROCEWATCH='$ROCEWATCH'; has --profile check -- && has -j check -"
check "serve's own options (--web.listen-address, --collector.wire)" bash -c \
	"$(declare -f complete_words has); COMP='$COMP' ROCEWATCH='$ROCEWATCH';
	 has --web.listen-address serve --web && has --collector.wire serve --collector.w &&
	 has --no-collector.verbs check --no-coll"
check "fleet's subcommand, then fleet check's options" bash -c \
	"$(declare -f complete_words has exactly); COMP='$COMP' ROCEWATCH='$ROCEWATCH';
	 exactly check fleet '' && has --max-names fleet check --max"
check "rules' subcommands" exactly "lint list" rules l
check "--format lists check's formats" exactly "json nfd text" check --format ""
check "--format lists report's formats" exactly "json svg text" report --format ""
check "--format lists fleet check's formats" exactly "json reason text" fleet check --format ""
check "--report-file completes a file" has "$COMP" fleet check --report-file "$(dirname "$COMP")/"
check "--color" exactly "always auto never" check --color ""
# profile names from ROCEWATCH_PROFILE_DIR (the tests point it at rules/profiles)
check "--profile: the profile names" exactly "container fleet lossless-roce lossy-roce" check --profile ""
check "--profile: a prefix" exactly "lossless-roce lossy-roce" serve --profile loss
check "--profile elsewhere: the installed directory is searched" bash -c \
	"grep -q '\"$(meson introspect "$BUILD_DIR" --buildoptions 2>/dev/null | python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"] + "/" + o["datadir"] + "/rocewatch/profiles")')\"' '$COMP'"
finish
