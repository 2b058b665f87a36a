#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every libFuzzer harness of a -Dfuzz build for SECONDS each, one after
# the other, and fail on any finding.
#
#   tests/fuzz/run-fuzz.sh BUILD_DIR [SECONDS] [HARNESS...]
#
# Each harness starts from its checked-in corpus (tests/fuzz/corpus/NAME,
# read only) and a work corpus in BUILD_DIR/fuzz-work/NAME/corpus, where
# libFuzzer keeps what it finds interesting; a crash, leak, timeout or
# out-of-memory input lands in BUILD_DIR/fuzz-work/NAME/findings/.  Once the
# bug is fixed, copy the input into tests/fuzz/corpus/NAME/ as a regression
# input: `make test` replays it from then on.
set -u

build=${1:?usage: run-fuzz.sh BUILD_DIR [SECONDS] [HARNESS...]}
seconds=${2:-300}
shift $(($# >= 2 ? 2 : $#))
src=$(cd "$(dirname "$0")" && pwd)
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
	# the list meson.build builds, in its order
	mapfile -t harnesses < <(sed -n "s/^  '\([a-z0-9_]*\)',.*/\1/p" "$src/meson.build")
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

found=0
printf '%-15s %12s %9s %7s %7s %7s  %s\n' harness executions exec/s cov ft corpus findings
for name in "${harnesses[@]}"; do
	bin="$build/tests/fuzz/fuzz_$name"
	work="$build/fuzz-work/$name"
	if [ ! -x "$bin" ]; then
		echo "run-fuzz: $bin missing (a build with -Dfuzz=enabled: make fuzz)" >&2
		exit 2
	fi
	mkdir -p "$work/corpus" "$work/findings"
	rm -f "$work/findings"/*
	# -malloc_limit_mb: one allocation past it is a finding (the reader must
	# not allocate by a wild id); -timeout: an input taking 10 s is a hang
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="$work/findings/" \
		"$work/corpus" "$src/corpus/$name" >"$work/log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
	last=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$work/log" | tail -1)
	cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
	findings=$(find "$work/findings" -type f | wc -l)
	verdict="none"
	if [ "$rc" -ne 0 ] || [ "$findings" -gt 0 ]; then
		verdict="FOUND (exit $rc): $(find "$work/findings" -type f -printf '%f ')"
		verdict="$verdict; log: $work/log"
		found=1
	fi
	printf '%-15s %12s %9s %7s %7s %7s  %s\n' "$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" \
		"${ft:-?}" "${corp:-?}" "$verdict"
done
exit $found
