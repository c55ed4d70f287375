#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make demo`: what a TPU server is for, from a fresh clone (the set-up has run before: make deps
# qemu all). Boots the VM with the card twice and works on the host in between:
#   1. guest-train.sh in the VM: the card and driver, the CNN trained on Fashion-MNIST on the
#      card (curves, checkpoint, step time against the guest CPU, the first steps profiled);
#   2. on the host: the learning curves as a PNG (gnuplot), the int8 quantisation (tpu-quantise,
#      calibrated on training images), the CNN's training step on the in-process card against
#      Debian's PyTorch on this host (bench/train/bench_train.py, one short round);
#   3. guest-serve.sh in the VM: bf16 and int8 test accuracy on the card, then tpu-serve with the
#      int8 model, which tpu-loadgen drives from the host through the forwarded port;
#   4. guest-train-parallel.sh in the VM with four cards on a 2 x 2 torus: the CNN trained
#      data-parallel on the four (DEMO_PARALLEL_ARGS: fewer epochs than the one-card run);
#   5. a summary of it all.
# Results go to build/demo/ (DEMO_OUT). DEMO_TRAIN_ARGS are tpu-train's options (model,
# optimiser, epochs); DEMO_PORT the host port of the server.
#   run-demo.sh HOST_BUILD GUEST_BUILD
set -euo pipefail
host_build=$1
guest_build=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${DEMO_OUT:-$repo/build/demo}
port=${DEMO_PORT:-8000}
read -r -a train_args <<<"${DEMO_TRAIN_ARGS:---model cnn --optimizer adam --epochs 1}"
read -r -a parallel_args <<<"${DEMO_PARALLEL_ARGS:---model cnn --filters 32 64 --optimizer adam --epochs 1 --batch 256}"
run=$repo/tests/vm/run-in-vm.sh
logs=$repo/build/vm-logs

rm -rf "$out"
mkdir -p "$out" "$logs"
start=$SECONDS

echo "demo: 1/5 training on the card (log: $logs/demo-train.log)"
"$run" --datasets --out "$out" --timeout 5400 --log "$logs/demo-train.log" -- \
	sh workloads/demo/guest-train.sh "$guest_build" "$out" "${train_args[@]}"
train_end=$SECONDS

echo "demo: 2/5 on the host: learning curves and int8 quantisation"
"$repo/workloads/report/plot-curves.sh" "$out/cnn/curves.csv" "$out/cnn/curves.png" \
	"Fashion-MNIST on the card: tpu-train ${train_args[*]}"
"$host_build/workloads/quant/tpu-quantise" --data fashion-mnist --model "$out/cnn/checkpoint.tpuckpt" \
	--out "$out/cnn/int8.tpuckpt" | tee "$out/quantise.log"
/usr/bin/python3 "$repo/bench/train/bench_train.py" "$host_build/bench/train/tpu-bench-train" \
	--rounds 1 --steps 10 | tee "$out/bench-train.log" ||
	echo "demo: the training benchmark failed (see above); the summary goes without it"

echo "demo: 3/5 evaluation and serving on the card (log: $logs/demo-serve.log)"
"$run" --datasets --out "$out" --forward "$port:8000" --timeout 3600 \
	--log "$logs/demo-serve.log" -- sh workloads/demo/guest-serve.sh "$guest_build" "$out" &
vm=$!
for _ in $(seq 1 1800); do
	[ -e "$out/serving" ] && break
	kill -0 $vm 2>/dev/null || break
	sleep 1
done
if [ -e "$out/serving" ]; then
	"$host_build/workloads/loadgen/tpu-loadgen" --port "$port" --model fashion-mnist \
		--concurrency 1,4,16 --seconds 5 --binary --csv "$out/loadgen.csv" ||
		echo "demo: tpu-loadgen saw failed requests (the errors column above)"
fi
touch "$out/loadgen.done"
wait $vm

echo "demo: 4/5 data-parallel training on 4 cards (log: $logs/demo-parallel.log)"
parallel_start=$SECONDS
"$run" --cards 4 --ici torus2d --datasets --out "$out" --timeout 3600 \
	--log "$logs/demo-parallel.log" -- \
	sh workloads/demo/guest-train-parallel.sh "$guest_build" "$out" "${parallel_args[@]}"
parallel_s=$((SECONDS - parallel_start))

echo "demo: 5/5 summary"
"$repo/workloads/demo/summary.sh" "$out" "$((train_end - start))" "$((SECONDS - start))" "$parallel_s"
