#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target of a fuzz build tree for a fixed time each, keeping each target's
# corpus in $TPU_CACHE/fuzz-corpus/<target> so later runs start where earlier ones stopped.
# A crash, leak, timeout or sanitizer report fails the run; the reproducer is left in build/fuzz.
#   tools/run-fuzzers.sh [--build] BUILD_DIR SECONDS
# --build configures (clang, -DTPU_FUZZ=ON) and builds the tree first. The fuzzers are optional:
# when clang cannot link a libFuzzer program, one line says which packages are missing and the
# script exits 0 without fuzzing.
set -euo pipefail
build_first=0
if [ "${1:-}" = --build ]; then
	build_first=1
	shift
fi
dir=$1
seconds=${2:-60}
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}

if [ $build_first -eq 1 ]; then
	probe=$(mktemp -d)
	trap 'rm -rf "$probe"' EXIT
	echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }' \
		>"$probe/probe.cpp"
	if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" \
		>"$probe/log" 2>&1; then
		echo "fuzz: skipped, clang cannot link a libFuzzer program (packages clang, libclang-rt-14-dev)"
		exit 0
	fi
	if [ ! -f "$dir/.configured" ]; then
		CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja ${CMAKE_FLAGS:-} -DTPU_FUZZ=ON
		touch "$dir/.configured"
	fi
	cmake --build "$dir" -j "$(nproc)"
fi
build=$(cd "$dir" && pwd)
passed=0
failed=0
for target in "$build"/tests/fuzz/fuzz_*; do
	[ -x "$target" ] || continue
	name=$(basename "$target")
	corpus=$cache/fuzz-corpus/$name
	mkdir -p "$corpus"
	echo "fuzz: $name for ${seconds}s (corpus $corpus)"
	if (cd "$build" && "$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
		-print_final_stats=1 "$corpus" >"$build/$name.log" 2>&1); then
		passed=$((passed + 1))
		grep -E '^stat::number_of_executed_units|^#.*DONE' "$build/$name.log" | tail -n 2
	else
		failed=$((failed + 1))
		echo "fuzz: $name FAILED; log $build/$name.log, reproducer in $build:"
		tail -n 40 "$build/$name.log"
	fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
