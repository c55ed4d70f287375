# SPDX-License-Identifier: MIT
# Drives the whole stack. The two commands a new user needs:
#   make demo   set everything up (first run: packages, guest kernel, QEMU build), boot a VM with
#               the emulated card, load the driver and run a matmul on the card
#   make test   host tests of the engine and runtime, then the guest tests in the VM, one summary
# Other targets: deps, qemu, module, all (default), vm, fuzz, bench, check, clean. Heavy artefacts live in
# $(TPU_CACHE) (default ~/.cache/tpu-stack), keyed by their inputs; build trees in build/.

TPU_CACHE ?= $(HOME)/.cache/tpu-stack
export TPU_CACHE
JOBS ?= $(shell nproc)
HOST_BUILD := build/host
GUEST_BUILD := build/guest
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
DEMO_ARGS ?=

.PHONY: all deps qemu module host guest test demo vm fuzz bench check clean

all: host guest module

# Host packages (apt) and the guest kernel + headers, unpacked into the cache.
deps: $(TPU_CACHE)/.deps-done
$(TPU_CACHE)/.deps-done: tools/setup-host.sh tools/fetch-guest-kernel.sh
	tools/setup-host.sh
	tools/fetch-guest-kernel.sh
	@mkdir -p $(TPU_CACHE) && touch $@

$(HOST_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(HOST_BUILD) -G Ninja $(CMAKE_FLAGS)

$(GUEST_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(GUEST_BUILD) -G Ninja $(CMAKE_FLAGS) -DTPU_GUEST=ON

host: $(HOST_BUILD)/CMakeCache.txt
	cmake --build $(HOST_BUILD) -j $(JOBS)

guest: $(GUEST_BUILD)/CMakeCache.txt
	cmake --build $(GUEST_BUILD) -j $(JOBS)

# QEMU 10.0.2 from Debian's source with -device tpu and our engine linked in.
qemu: $(HOST_BUILD)/CMakeCache.txt
	cmake --build $(HOST_BUILD) -j $(JOBS) --target tpuengine
	tools/build-qemu.sh $(HOST_BUILD)/qemu-device/engine/libtpuengine.a

module: | deps
	$(MAKE) -C driver

test: deps qemu all
	ctest --test-dir $(HOST_BUILD) --output-on-failure

demo: deps qemu all
	tests/vm/run-in-vm.sh --log build/vm-logs/demo.log -- $(GUEST_BUILD)/tools/tpu-demo/tpu-demo $(DEMO_ARGS)

# Fast-mode GEMM throughput against oneDNN on this host, in one run (BENCH_ARGS: see bench/README.md).
BENCH_ARGS ?=
bench: host
	$(HOST_BUILD)/bench/tpu-bench-gemm $(BENCH_ARGS)

# libFuzzer over the engine (clang, ASan, UBSan), FUZZ_SECONDS per target.
fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja $(CMAKE_FLAGS) -DTPU_FUZZ=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	tools/run-fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

vm: deps qemu all
	tests/vm/run-in-vm.sh --interactive

check: | deps
	tools/fetch-checkpatch.sh
	$(MAKE) -C driver W=1
	$(MAKE) -C driver check
	clang-format --dry-run --Werror $$(git ls-files '*.cpp' '*.hpp' | grep -v '^driver/')

clean:
	rm -rf build
	$(MAKE) -C driver clean
