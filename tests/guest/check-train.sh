#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest: test_card_train (one step's gradients on the card against the CPU MLP's, short
# trainings on the digits), then tpu-train on the digits for two epochs, resumed for a third
# from its checkpoint, and tpu-eval of that checkpoint on the card (the format is the CPU
# trainer's). Outputs go to /tmp and vanish with the VM.
#   check-train.sh GUEST_BUILD_DIR      (run-in-vm.sh --datasets: the digits come from the host)
set -eu
b=$1
out=/tmp/train-test
mkdir -p "$out"
"$b/tests/guest/test_card_train" --durations yes --use-colour no
"$b/workloads/train/tpu-train" --data digits --epochs 2 --hidden 32 --out "$out/digits"
"$b/workloads/train/tpu-train" --data digits --epochs 3 --hidden 32 --out "$out/digits" \
	--resume "$out/digits/checkpoint.tpuckpt"
test "$(wc -l < "$out/digits/curves.csv")" -eq 4 || { cat "$out/digits/curves.csv"; exit 1; }
"$b/workloads/infer/tpu-eval" --data digits --quiet --model "$out/digits/checkpoint.tpuckpt"
echo "check-train: passed"
