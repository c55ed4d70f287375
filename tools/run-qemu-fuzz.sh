#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-qemu-fuzz.sh - runs the card's QEMU fuzz targets of the qemu-fuzz-x86_64 that
# tools/build-qemu-fuzz.sh builds (ASan, UBSan):
#   1. generic-fuzz-tpu (x-sync-worker=on): every input in tests/fuzz/qemu/regressions/ once
#      (crashes found before and fixed since), then libFuzzer for SECONDS, from the seed corpus
#      tests/fuzz/qemu/seeds/ (make-seeds.py) and the corpus it keeps in
#      $TPU_CACHE/fuzz-corpus/qemu-tpu, so that a run starts where the last one stopped;
#   2. tpu-unplug (tests/fuzz/qemu/tpu_unplug_fuzz.c: accesses after a hot-unplug) and
#      tpu-ici-peer (tpu_ici_peer_fuzz.c: a link's peer sending arbitrary bytes): every seed in
#      tests/fuzz/qemu/unplug-seeds/ and ici-peer-seeds/ once, then libFuzzer for SECONDS / 4
#      each from them and the corpus in $TPU_CACHE/fuzz-corpus/qemu-<target>.
# A crash, timeout or sanitizer report fails the run; the reproducer is left in build/qemu-fuzz/
# (replay: FUZZ_BINARY --fuzz-target=TARGET FILE; for generic-fuzz-tpu, QTEST_LOG=1 and
# FUZZ_SERIALIZE_QTEST=1 print its accesses). With SECONDS 0 only the regressions and seeds run.
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

# replay NAME TARGET FILE...: runs each input once; a failure ends the run.
replay() {
	local name=$1 target=$2
	shift 2
	echo "qemu-fuzz: $target: $# $name"
	if ! "$binary" "--fuzz-target=$target" "${flags[@]}" "$@" >"$target-$name.log" 2>&1; then
		tail -n 40 "$target-$name.log"
		echo "qemu-fuzz: $target: an input of the $name FAILED (log $out/$target-$name.log)"
		exit 1
	fi
}

# fuzz TARGET SECONDS CORPUS SEEDS: libFuzzer for SECONDS.
fuzz() {
	local target=$1 secs=$2 corpus_dir=$3 seeds=$4
	echo "qemu-fuzz: $target for ${secs}s (corpus $corpus_dir)"
	mkdir -p "$corpus_dir"
	if ! "$binary" "--fuzz-target=$target" "${flags[@]}" -max_total_time="$secs" \
		-print_final_stats=1 "$corpus_dir" "$seeds" >"$target.log" 2>&1; then
		tail -n 60 "$target.log"
		echo "qemu-fuzz: $target FAILED; log $out/$target.log, reproducer in $out"
		exit 1
	fi
	grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$target.log" | tail -n 2
}

regressions=("$repo"/tests/fuzz/qemu/regressions/*)
[ ! -f "${regressions[0]}" ] || replay "regression inputs" generic-fuzz-tpu "${regressions[@]}"
[ "$seconds" -eq 0 ] || fuzz generic-fuzz-tpu "$seconds" "$corpus" "$repo/tests/fuzz/qemu/seeds"

for own in tpu-unplug:unplug-seeds tpu-ici-peer:ici-peer-seeds; do
	seeds=$repo/tests/fuzz/qemu/${own#*:}
	replay seeds "${own%%:*}" "$seeds"/*
	[ "$seconds" -lt 4 ] ||
		fuzz "${own%%:*}" $((seconds / 4)) "$cache/fuzz-corpus/qemu-${own%%:*}" "$seeds"
done

if [ $coverage -eq 1 ]; then
	"$binary" "$target" "${flags[@]}" -runs=0 -print_full_coverage=1 -print_coverage=1 \
		"$corpus" "$repo/tests/fuzz/qemu/seeds" >coverage.log 2>&1
	/usr/bin/python3 "$repo/tools/fuzz-coverage.py" coverage.log 'hw/misc/tpu/tpu[a-z-]*\.c$' |
		sed 's/^/qemu-fuzz: /'
fi
