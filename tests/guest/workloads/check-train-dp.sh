#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest with four cards on a 2 x 2 torus: tpu-train --cards 1, 2 and 4 trains the CNN on
# the first 3,200 Fashion-MNIST images, one epoch of 100 steps of the same global batch (32) and
# seed, fp32 with Adam, then checks that the 2- and 4-card runs' train loss (the epoch's mean)
# and test loss equal the one-card run's within 1e-5 relative and their test accuracies within
# 0.5 points, that every run's replicas were bit-identical at every check (tpu-train fails loudly
# otherwise), that the modelled weak-scaling efficiency on 4 cards is at least 90%, and that the
# 4-card checkpoint evaluates in tpu-eval and its TensorBoard file has the data-parallel scalars;
# it prints each run's summary (images/s in wall and modelled card time, the compute /
# all-reduce split, the efficiency). Outputs go to /tmp.
#   check-train-dp.sh GUEST_BUILD_DIR      (run-in-vm.sh --cards 4 --datasets)
set -eu
b=$1
out=/tmp/train-dp
mkdir -p "$out"
for n in 1 2 4; do
	"$b/workloads/train/tpu-train" --model cnn --data fashion-mnist --limit 3200 --batch 32 \
		--epochs 1 --precision fp32 --optimizer adam --cards "$n" --replica-check-steps 25 \
		--out "$out/cards$n" --tensorboard "$out/tb$n" >"$out/cards$n.log" 2>&1 ||
		{ cat "$out/cards$n.log"; echo "check-train-dp: tpu-train --cards $n failed"; exit 1; }
	grep -E "^training|images/s|^modelled|replicas|^accuracy" "$out/cards$n.log"
done
for n in 2 4; do
	grep -q "the $n replicas' weights and optimiser state were identical" "$out/cards$n.log" ||
		{ echo "check-train-dp: no replica check on $n cards"; exit 1; }
done
for tag in data_parallel/modelled_ms_per_step data_parallel/allreduce_share; do
	grep -q "$tag" "$out"/tb4/events.out.tfevents.* ||
		{ echo "check-train-dp: no $tag in the 4-card run's TensorBoard event file"; exit 1; }
done
# curves.csv: epoch,train_loss,train_accuracy,test_loss,test_accuracy,...
row() { sed -n 2p "$out/cards$1/curves.csv"; }
for n in 2 4; do
	echo "cards 1: $(row 1)"
	echo "cards $n: $(row "$n")"
	awk -v a="$(row 1)" -v b="$(row "$n")" -v n="$n" 'BEGIN {
		split(a, x, ","); split(b, y, ",")
		for (i = 2; i <= 4; i += 2) {
			d = x[i] - y[i]; if (d < 0) d = -d
			if (d > 1e-5 * x[i]) { printf "cards %d: loss %s against %s\n", n, y[i], x[i]; exit 1 }
		}
		d = x[5] - y[5]; if (d < 0) d = -d
		if (d > 0.005) { printf "cards %d: test accuracy %s against %s\n", n, y[5], x[5]; exit 1 }
	}'
done
eff=$(sed -n 's/.*modelled weak-scaling efficiency \([0-9.]*\)%.*/\1/p' "$out/cards4.log")
awk -v e="$eff" 'BEGIN { exit !(e >= 90) }' ||
	{ echo "check-train-dp: modelled weak-scaling efficiency on 4 cards $eff%"; exit 1; }
"$b/workloads/infer/tpu-eval" --data fashion-mnist --quiet \
	--model "$out/cards4/checkpoint.tpuckpt"
echo "check-train-dp: passed"
