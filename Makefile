# SPDX-License-Identifier: MIT
# Thin wrapper over meson: `make run` and `make test` install their own
# dependencies (Debian 12), build, and go.  Two build directories:
#   build/          ASan + UBSan, every test tier (`make build`, `make test`)
#   build-release/  optimised (`make run`, `make bench`); `make run` builds
#                   only the rocewatch binary, so it needs no test library
BUILD ?= build
RELEASE ?= build-release
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_HARNESSES ?=
ARGS ?=

.PHONY: all deps build run test bench bench-detect fuzz clean format deb check-recipes

all: build

deps:
	@contrib/install-deps.sh test

$(BUILD)/build.ninja:
	meson setup $(BUILD) -Db_sanitize=address,undefined -Db_lundef=false -Dtests=enabled

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

# The binary has its profiles built in; ROCEWATCH_PROFILE_DIR makes an edit of
# rules/profiles take effect without a rebuild.
run:
	@contrib/install-deps.sh run
	@$(MAKE) --no-print-directory $(RELEASE)/build.ninja
	ninja -C $(RELEASE) rocewatch
	ROCEWATCH_PROFILE_DIR=$(CURDIR)/rules/profiles $(RELEASE)/rocewatch serve $(ARGS)

test:
	@contrib/install-deps.sh test
	@$(MAKE) --no-print-directory build
	tests/run-tests.sh $(BUILD)

# hacking.md's recipes still name every value-type switch and builtin (no build needed)
check-recipes:
	python3 tests/recipes/check-recipes.py $(CURDIR)

# -Dtests=auto: the test targets exist (make bench uses tests/bench_recorder)
# but cmocka is optional, and `make run` builds none of them.
$(RELEASE)/build.ninja:
	meson setup $(RELEASE) --buildtype=release -Dtests=auto

bench:
	@contrib/install-deps.sh bench
	@$(MAKE) --no-print-directory $(RELEASE)/build.ninja
	ninja -C $(RELEASE)
	tests/bench/run-bench.sh $(RELEASE)

# Detection latency alone (fault -> Alertmanager, rocewatch against node_exporter +
# Prometheus, TRIALS a case; about half an hour at 20): what README's table comes from.
TRIALS ?= 20
bench-detect:
	@contrib/install-deps.sh bench
	@$(MAKE) --no-print-directory $(RELEASE)/build.ninja
	ninja -C $(RELEASE) rocewatch
	tests/bench/bench_detect.py $(RELEASE)/rocewatch --trials $(TRIALS) $(ARGS)

# The Debian package, built from a copy of the tree: build-deb/rocewatch_VERSION_ARCH.deb
deb:
	@contrib/install-deps.sh deb
	contrib/build-deb.sh

# libFuzzer needs clang, and meson one compiler per build directory: the
# fuzzers get their own (ASan + UBSan, coverage on every room).  Each harness
# runs FUZZ_SECONDS; any finding fails (tests/fuzz/run-fuzz.sh prints the table).
$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzz=enabled -Dwire=disabled \
		-Db_sanitize=address,undefined -Db_lundef=false

fuzz:
	@contrib/install-deps.sh fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD) fuzzers
	tests/fuzz/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^tests/fixtures/')

clean:
	rm -rf $(BUILD) $(RELEASE) $(FUZZ_BUILD) build-deb
