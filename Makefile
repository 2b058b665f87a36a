# SPDX-License-Identifier: MIT
# Thin wrapper over meson: `make run` and `make test` install their own
# dependencies (Debian 12), build, and go.  Two build directories:
#   build/          ASan + UBSan, every test tier (`make build`, `make test`)
#   build-release/  optimised (`make run`, `make bench`); `make run` builds
#                   only the rocewatch binary, so it needs no test library
BUILD ?= build
RELEASE ?= build-release
ARGS ?=

.PHONY: all deps build run test bench clean format

all: build

deps:
	@contrib/install-deps.sh test

$(BUILD)/build.ninja:
	meson setup $(BUILD) -Db_sanitize=address,undefined -Db_lundef=false -Dtests=enabled

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

run:
	@contrib/install-deps.sh run
	@$(MAKE) --no-print-directory $(RELEASE)/build.ninja
	ninja -C $(RELEASE) rocewatch
	$(RELEASE)/rocewatch serve $(ARGS)

test:
	@contrib/install-deps.sh test
	@$(MAKE) --no-print-directory build
	tests/run-tests.sh $(BUILD)

# -Dtests=auto: the test targets exist (make bench uses tests/bench_recorder)
# but cmocka is optional, and `make run` builds none of them.
$(RELEASE)/build.ninja:
	meson setup $(RELEASE) --buildtype=release -Dtests=auto

bench:
	@contrib/install-deps.sh bench
	@$(MAKE) --no-print-directory $(RELEASE)/build.ninja
	ninja -C $(RELEASE)
	tests/bench/run-bench.sh $(RELEASE)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^tests/fixtures/')

clean:
	rm -rf $(BUILD) $(RELEASE)
