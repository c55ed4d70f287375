#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The summary at the end of `make demo` (run-demo.sh), from the files the demo left in OUT: the
# CNN's and the int8 model's test accuracy on the card (eval.log), time per epoch and samples/s
# (cnn/curves.csv), one training step on the card against the guest CPU (train.log), the
# training's samples/s against PyTorch's best on the host and the modelled card time of a step
# (bench-train.log: bench/train/bench_train.py), serving
# throughput and latency per concurrency (loadgen.csv), the data-parallel run on 4 cards
# (cnn-4cards/curves.csv, train-4cards.log: accuracy, all-reduce share of a step, modelled
# scaling efficiency), and where everything was saved.
#   summary.sh OUT TRAIN_SECONDS TOTAL_SECONDS [PARALLEL_SECONDS]
set -euo pipefail
out=$1
train_s=$2
total_s=$3
parallel_s=${4:-}

# "  accuracy 91.23%, 812 images/s on the card" of each evaluated model, in order (bf16, int8).
mapfile -t acc < <(sed -n 's/^  accuracy \([0-9.]*\)%, \([0-9]*\) images\/s on the card.*/\1 \2/p' \
	"$out/eval.log")
mapfile -t exact < <(sed -n 's/.*CPU reference of the same arithmetic.*: \([a-zA-Z-]*\) .*/\1/p' \
	"$out/eval.log")
step=$(sed -n 's/^one training step of batch \([0-9]*\).*card \([0-9.]*\) ms, CPU \([0-9.]*\) ms.*/\1 \2 \3/p' \
	"$out/train.log" | tail -n1)

echo "=================================== demo summary ==================================="
if [ ${#acc[@]} -ge 2 ]; then
	read -r bf16 bf16_rate <<<"${acc[0]}"
	read -r int8 int8_rate <<<"${acc[1]}"
	awk -v b="$bf16" -v i="$int8" -v br="$bf16_rate" -v ir="$int8_rate" \
		-v eb="${exact[0]:-?}" -v ei="${exact[1]:-?}" 'BEGIN {
		printf "test accuracy (Fashion-MNIST, 10,000 images, on the card):\n"
		printf "  CNN bf16  %6.2f%%  (target >= 91%%: %s)  %s img/s, logits %s against the CPU reference\n",
			b, (b >= 91 ? "met" : "MISSED"), br, eb
		printf "  CNN int8  %6.2f%%  (%+.2f points; target within 1: %s)  %s img/s, logits %s\n",
			i, i - b, ((i - b >= -1) ? "met" : "MISSED"), ir, ei
	}'
else
	echo "test accuracy: not measured (see $out/eval.log)"
fi
awk -F, 'NR > 1 { n++; s += $6; r += $7; acc = $5 } END {
	if (n) printf "training: %d epoch(s), %.1f s per epoch, %.0f samples/s on the card, test accuracy %.2f%% after the last\n",
		n, s / n, r / n, acc * 100 }' "$out/cnn/curves.csv"
if [ -n "$step" ]; then
	read -r batch card cpu <<<"$step"
	awk -v b="$batch" -v c="$card" -v g="$cpu" 'BEGIN {
		printf "one training step (batch %d): card %.1f ms, guest CPU %.1f ms: the card is %.1fx the guest CPU\n",
			b, c, g, g / c }'
fi
# bench_train.py's "  PyTorch 1.13 bf16 2 threads:   5159.7 samples/s ..." lines and its card line
# "... modelled card time 4.166 ms a step = 15362.5 samples/s; ...".
best=$(sed -n 's/^  PyTorch .*: *\([0-9.]*\) samples\/s.*/\1/p' "$out/bench-train.log" 2>/dev/null |
	sort -g | tail -n1 || true)
modelled=$(sed -n 's/.*modelled card time \([0-9.]*\) ms a step = \([0-9.]*\) samples\/s.*/\1 \2/p' \
	"$out/bench-train.log" 2>/dev/null | tail -n1 || true)
if [ -n "$best" ] && [ -n "$modelled" ]; then
	read -r step_ms step_rate <<<"$modelled"
	awk -F, -v best="$best" -v ms="$step_ms" -v mr="$step_rate" 'NR > 1 { n++; r += $7 } END {
		if (n) printf "against PyTorch on the host (bench-train.log; its best %.0f samples/s): the card in the VM %.2fx; modelled card time %.3f ms a step, %.2fx\n",
			best, r / n / best, ms, mr / best }' "$out/cnn/curves.csv"
else
	echo "against PyTorch: not measured (see $out/bench-train.log)"
fi
if [ -s "$out/loadgen.csv" ]; then
	echo "serving the int8 CNN (tpu-serve, KServe v2, from the host through the forwarded port):"
	awk -F, 'NR > 1 { printf "  concurrency %3d, %-6s: %7.1f requests/s, p50 %6.1f ms, p90 %6.1f ms, p99 %6.1f ms, %d errors, %d answered 503\n",
		$1, $12, $6, $8, $9, $11, $4, $3 }' "$out/loadgen.csv"
else
	echo "serving: no load-generator results (see $out/serve.log)"
fi
# "modelled step 1.234 ms: compute 1.0 ms, all-reduce 0.2 ms (16.2% of the step); modelled
# weak-scaling efficiency 83.8%" and "training on 4 cards: 123.4 images/s in wall time, ..."
split=$(sed -n 's/.*all-reduce \([0-9.]*\) ms (\([0-9.]*\)% of the step); modelled weak-scaling efficiency \([0-9.]*\)%.*/\1 \2 \3/p' \
	"$out/train-4cards.log" 2>/dev/null | tail -n1)
rate=$(sed -n 's/^training on 4 cards: \([0-9.]*\) images\/s in wall time, \([0-9.]*\) images\/s in modelled.*/\1 \2/p' \
	"$out/train-4cards.log" 2>/dev/null | tail -n1)
if [ -n "$split" ] && [ -s "$out/cnn-4cards/curves.csv" ]; then
	read -r comm_ms share efficiency <<<"$split"
	read -r wall_rate model_rate <<<"${rate:-? ?}"
	awk -F, -v s="$share" -v e="$efficiency" -v c="$comm_ms" -v w="$wall_rate" -v m="$model_rate" \
		'NR > 1 { n++; acc = $5 } END {
		printf "data-parallel on 4 cards (2 x 2 torus, gradients all-reduced over the links), %d epoch(s):\n", n
		printf "  test accuracy %.2f%%; all-reduce %.1f%% of a modelled step (%.3f ms); modelled scaling efficiency %.1f%%\n",
			acc * 100, s, c, e
		printf "  %s images/s in wall time, %s in modelled card time\n", w, m }' "$out/cnn-4cards/curves.csv"
else
	echo "data-parallel on 4 cards: no results (see $out/train-4cards.log)"
fi
echo "time: training $((train_s / 60)) min $((train_s % 60)) s, the whole demo $((total_s / 60)) min $((total_s % 60)) s${parallel_s:+ (the 4-card part $((parallel_s / 60)) min $((parallel_s % 60)) s)}"
echo "saved in $out:"
echo "  cnn/checkpoint.tpuckpt, cnn/int8.tpuckpt   the trained model and its int8 quantisation"
echo "  cnn/curves.csv, cnn/curves.png             learning curves (loss, accuracy per epoch)"
echo "  cnn/evaluation.csv                         confusion matrix, per-class precision, recall, F1"
echo "  trace.json                                 the first 4 training steps profiled (Chrome trace; Perfetto, tpu-prof)"
echo "  cnn-4cards/, train-4cards.log             the data-parallel run on 4 cards"
echo "  loadgen.csv, *.log                         serving figures and every step's output"
