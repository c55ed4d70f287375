#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-qemu-fuzz.sh - runs the card's QEMU fuzzer, target generic-fuzz-tpu of the qemu-fuzz-x86_64
# that tools/build-qemu-fuzz.sh builds (ASan, UBSan, x-sync-worker=on):
#   1. every input in tests/fuzz/qemu/regressions/ once: crashes found before and fixed since;
#   2. libFuzzer for SECONDS, from the seed corpus tests/fuzz/qemu/seeds/ (make-seeds.py) and the
#      corpus it keeps in $TPU_CACHE/fuzz-corpus/qemu-tpu, so that a run starts where the last
#      one stopped.
# A crash, timeout or sanitizer report fails the run; the reproducer is left in build/qemu-fuzz/
# (replay: FUZZ_BINARY --fuzz-target=generic-fuzz-tpu FILE; with QTEST_LOG=1 and
# FUZZ_SERIALIZE_QTEST=1 it prints its accesses). With SECONDS 0 only the regressions run.
#   tools/run-qemu-fuzz.sh [--coverage] FUZZ_BINARY SECONDS
# --coverage: afterwards, the functions, edges and lines of the card's sources (tpu.c, tpu-queue.c,
# tpu-ici.c, tpu-ici-link.c) the corpus reaches (tools/fuzz-coverage.py; libFuzzer's report is
# kept in build/qemu-fuzz/coverage.log).
set -euo pipefail

coverage=0
if [ "${1:-}" = --coverage ]; then
	coverage=1
	shift
fi
[ $# -eq 2 ] || {
	echo "usage: $0 [--coverage] FUZZ_BINARY SECONDS" >&2
	exit 2
}
binary=$(readlink -f "$1")
seconds=$2
repo=$(dirname "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")")
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
out=$repo/build/qemu-fuzz
corpus=$cache/fuzz-corpus/qemu-tpu
target=--fuzz-target=generic-fuzz-tpu
mkdir -p "$out" "$corpus"
cd "$out"
# UBSan's reports end the run like ASan's; QEMU's allocations live as long as the process.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=0
flags=(-timeout=20 -rss_limit_mb=4096 "-artifact_prefix=$out/")

regressions=("$repo"/tests/fuzz/qemu/regressions/*)
if [ -f "${regressions[0]}" ]; then
	echo "qemu-fuzz: ${#regressions[@]} regression inputs"
	if ! "$binary" "$target" "${flags[@]}" "${regressions[@]}" >regressions.log 2>&1; then
		tail -n 40 regressions.log
		echo "qemu-fuzz: a regression input FAILED (log $out/regressions.log)"
		exit 1
	fi
fi

if [ "$seconds" -gt 0 ]; then
	echo "qemu-fuzz: generic-fuzz-tpu for ${seconds}s (corpus $corpus)"
	if ! "$binary" "$target" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 \
		"$corpus" "$repo/tests/fuzz/qemu/seeds" >fuzz.log 2>&1; then
		tail -n 60 fuzz.log
		echo "qemu-fuzz: FAILED; log $out/fuzz.log, reproducer in $out"
		exit 1
	fi
	grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' fuzz.log | tail -n 2
fi

if [ $coverage -eq 1 ]; then
	"$binary" "$target" "${flags[@]}" -runs=0 -print_full_coverage=1 -print_coverage=1 \
		"$corpus" "$repo/tests/fuzz/qemu/seeds" >coverage.log 2>&1
	/usr/bin/python3 "$repo/tools/fuzz-coverage.py" coverage.log 'hw/misc/tpu/tpu[a-z-]*\.c$' |
		sed 's/^/qemu-fuzz: /'
fi
