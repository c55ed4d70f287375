#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tpu-train-cpu end to end on digits: trains 3 epochs, resumes to 5, checks the files it leaves
# (4+1 curve rows, the evaluation, a checkpoint), that the resumed curve continues the first, and
# that the test accuracy is that of a model that learned (> 85%).
#   train_cpu_test.sh TPU_TRAIN_CPU
set -euo pipefail
bin=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" --data digits --hidden 64 --epochs 3 --out "$out" >"$out/first.log"
"$bin" --data digits --hidden 64 --epochs 5 --out "$out" --resume "$out/checkpoint.tpuckpt" \
	>"$out/resumed.log"
grep -q "resumed mlp-64-64-10 from .* after epoch 3" "$out/resumed.log"
[ "$(wc -l <"$out/curves.csv")" -eq 6 ] || { cat "$out/curves.csv"; exit 1; }
cut -d, -f1 "$out/curves.csv" | tail -n +2 | tr '\n' ' ' | grep -qx "1 2 3 4 5 "
test -s "$out/evaluation.csv"
acc=$(sed -n 's/^accuracy \([0-9.]*\) .*/\1/p' "$out/resumed.log")
awk -v a="$acc" 'BEGIN { exit !(a > 0.85) }' || { echo "accuracy $acc"; exit 1; }
if "$bin" --data digits --data-dir "$out" >"$out/missing.log" 2>&1; then exit 1; fi
grep -q "digits.csv.gz: cannot open: No such file or directory" "$out/missing.log"
echo "tpu-train-cpu: trained, resumed, evaluated (accuracy $acc)"
