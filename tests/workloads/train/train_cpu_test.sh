#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tpu-train-cpu end to end on digits: trains 3 epochs, resumes to 5, checks the files it leaves
# (4+1 curve rows, the evaluation, a checkpoint), that the resumed curve continues the first, and
# that the test accuracy is that of a model that learned (> 85%); the same for a model spec.
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
# A model given as a spec (tpu_nn): a residual net with layer norm, trained, resumed from its
# checkpoint (the graph's parameter tensors) and evaluated; a bad spec is refused by its token.
spec=cnn-8x8x1-c8-res-d32-10
"$bin" --data digits --model $spec --optimizer adam --lr 0.003 --batch 32 --epochs 3 \
	--out "$out/spec" >"$out/spec.log"
"$bin" --data digits --model $spec --optimizer adam --lr 0.003 --batch 32 --epochs 4 \
	--out "$out/spec" --resume "$out/spec/checkpoint.tpuckpt" >"$out/spec-resumed.log"
grep -q "resumed $spec from .* after epoch 3" "$out/spec-resumed.log"
spec_acc=$(sed -n 's/^accuracy \([0-9.]*\) .*/\1/p' "$out/spec-resumed.log")
awk -v a="$spec_acc" 'BEGIN { exit !(a > 0.85) }' || { echo "spec accuracy $spec_acc"; exit 1; }
if "$bin" --data digits --model cnn-8x8x1-c8-rez-10 >"$out/bad.log" 2>&1; then exit 1; fi
grep -q 'token 4 "rez": unknown layer' "$out/bad.log"
if "$bin" --data digits --model cnn-28x28x1-c8-10 >"$out/shape.log" 2>&1; then exit 1; fi
grep -q "takes inputs of 28x28x1, digits's are 8x8x1" "$out/shape.log"
if "$bin" --data digits --model $spec --hidden 64 >"$out/hidden.log" 2>&1; then exit 1; fi
grep -q "a model spec says its layers itself" "$out/hidden.log"
echo "tpu-train-cpu: trained, resumed, evaluated (accuracy $acc; $spec: $spec_acc)"
