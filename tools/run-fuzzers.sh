#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target of a fuzz build tree for a fixed time each, keeping each target's
# corpus in $TPU_CACHE/fuzz-corpus/<target> so later runs start where earlier ones stopped.
# A crash, leak, timeout or sanitizer report fails the run; the reproducer is left in build/fuzz.
#   tools/run-fuzzers.sh BUILD_DIR SECONDS
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=${2:-60}
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
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
