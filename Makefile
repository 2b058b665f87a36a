# SPDX-License-Identifier: MIT
# Thin wrapper over meson: `make run` and `make test` install their own
# dependencies (Debian 12), build, and go.
BUILD ?= build
RELEASE ?= build-release
ARGS ?=

.PHONY: all deps build run test bench clean format

all: build

deps:
	@contrib/install-deps.sh test

$(BUILD)/build.ninja:
	meson setup $(BUILD) -Db_sanitize=address,undefined -Db_lundef=false

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

run:
	@contrib/install-deps.sh run
	@$(MAKE) --no-print-directory build
	$(BUILD)/rocewatch serve $(ARGS)

test:
	@contrib/install-deps.sh test
	@$(MAKE) --no-print-directory build
	tests/run-tests.sh $(BUILD)

$(RELEASE)/build.ninja:
	meson setup $(RELEASE) --buildtype=release

bench:
	@contrib/install-deps.sh bench
	@$(MAKE) --no-print-directory $(RELEASE)/build.ninja
	ninja -C $(RELEASE)
	tests/bench/run-bench.sh $(RELEASE)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^tests/fixtures/')

clean:
	rm -rf $(BUILD) $(RELEASE)
