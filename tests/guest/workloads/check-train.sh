#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest: test_card_train and test_card_cnn (one step's gradients on the card against the
# CPU MLP's and CNN's, short trainings on the digits, the CNN's checkpoint resumed bit for bit and
# a profiled step), then tpu-train on the digits for two epochs (with its TensorBoard scalars),
# resumed for a third from its checkpoint, for the MLP (and tpu-eval of its checkpoint on the
# card: the format is the CPU trainer's), for the CNN and for a model spec (tpu_nn, bf16). Outputs
# go to /tmp and vanish with the VM.
#   check-train.sh GUEST_BUILD_DIR      (run-in-vm.sh --datasets: the digits come from the host)
set -eu
b=$1
out=/tmp/train-test
mkdir -p "$out"
"$b/tests/guest/test_card_train" --durations yes --use-colour no
"$b/tests/guest/test_card_cnn" --durations yes --use-colour no
"$b/workloads/train/tpu-train" --data digits --epochs 2 --hidden 32 --out "$out/digits" \
	--tensorboard "$out/tensorboard"
for tag in train/loss train/accuracy train/learning_rate train/samples_per_second \
	card/modelled_ms_per_step card/mxu_utilisation \
	epoch/test_accuracy epoch/samples_per_second; do
	grep -q "$tag" "$out"/tensorboard/events.out.tfevents.* ||
		{ echo "check-train: no $tag in the TensorBoard event file"; exit 1; }
done
"$b/workloads/train/tpu-train" --data digits --epochs 3 --hidden 32 --out "$out/digits" \
	--resume "$out/digits/checkpoint.tpuckpt"
test "$(wc -l < "$out/digits/curves.csv")" -eq 4 || { cat "$out/digits/curves.csv"; exit 1; }
"$b/workloads/infer/tpu-eval" --data digits --quiet --model "$out/digits/checkpoint.tpuckpt"
"$b/workloads/train/tpu-train" --model cnn --data digits --epochs 2 --optimizer adam --lr 0.003 \
	--filters 8 16 --hidden 32 --out "$out/cnn" >"$out/cnn.log"
"$b/workloads/train/tpu-train" --model cnn --data digits --epochs 3 --optimizer adam --lr 0.003 \
	--filters 8 16 --hidden 32 --out "$out/cnn" --resume "$out/cnn/checkpoint.tpuckpt" \
	>"$out/cnn-resumed.log"
cat "$out/cnn.log" "$out/cnn-resumed.log"
grep -q "resumed cnn-8x8x1-c8-c16-d32-10 from .* after epoch 2" "$out/cnn-resumed.log"
test "$(wc -l < "$out/cnn/curves.csv")" -eq 4 || { cat "$out/cnn/curves.csv"; exit 1; }
acc=$(sed -n 's/^accuracy \([0-9.]*\) .*/\1/p' "$out/cnn-resumed.log")
awk -v a="$acc" 'BEGIN { exit !(a > 0.7) }' || { echo "CNN accuracy $acc"; exit 1; }
# A model given as a spec (tpu_nn's graph trainer): a residual block with layer norm, bf16.
spec=cnn-8x8x1-c8-res-d32-10
"$b/workloads/train/tpu-train" --model $spec --data digits --epochs 2 --optimizer adam \
	--lr 0.003 --batch 32 --out "$out/spec" >"$out/spec.log"
"$b/workloads/train/tpu-train" --model $spec --data digits --epochs 3 --optimizer adam \
	--lr 0.003 --batch 32 --out "$out/spec" --resume "$out/spec/checkpoint.tpuckpt" \
	>"$out/spec-resumed.log"
cat "$out/spec.log" "$out/spec-resumed.log"
grep -q "resumed $spec from .* after epoch 2" "$out/spec-resumed.log"
acc=$(sed -n 's/^accuracy \([0-9.]*\) .*/\1/p' "$out/spec-resumed.log")
awk -v a="$acc" 'BEGIN { exit !(a > 0.8) }' || { echo "$spec accuracy $acc"; exit 1; }
echo "check-train: passed"
