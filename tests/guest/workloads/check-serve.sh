#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest: trains a small MLP on the digits (tpu-train-cpu), quantises it (tpu-quantise),
# evaluates both on the card with every test image's logits compared with the CPU reference
# (tpu-eval), then for each of the two checkpoints starts tpu-serve on the guest's loopback, runs
# test_serve against it, stops it with SIGTERM and requires a clean exit. The guest's writable
# places are /tmp (tmpfs) and /job (the harness's per-run folder on the host, removed after the
# run); the source tree is shared read-only. Outputs go to /tmp and vanish with the VM.
#   check-serve.sh GUEST_BUILD_DIR      (run-in-vm.sh --datasets: the digits come from the host)
set -eu
. tests/guest/workloads/serve-ready.sh
b=$1
out=/tmp/serve-test
mkdir -p "$out"
port=8500
max_batch=16
max_body=65536
"$b/workloads/train/tpu-train-cpu" --data digits --epochs 4 --hidden 32 --out "$out/digits" \
	> "$out/train.log" || { cat "$out/train.log"; exit 1; }
tail -n 3 "$out/train.log"
"$b/workloads/quant/tpu-quantise" --data digits --model "$out/digits/checkpoint.tpuckpt" \
	--out "$out/digits/int8.tpuckpt"
"$b/workloads/infer/tpu-eval" --data digits --quiet --reference 1000 \
	--model "$out/digits/checkpoint.tpuckpt" --model "$out/digits/int8.tpuckpt"

for ckpt in checkpoint int8; do
	model=$out/digits/$ckpt.tpuckpt
	echo "== tpu-serve $model"
	"$b/workloads/serve/tpu-serve" --model "$model" --name digits --port $port \
		--max-batch $max_batch --queue-delay-us 20000 --max-body-bytes $max_body &
	pid=$!
	serve_wait_ready $port $pid 120 || { kill $pid; exit 1; }
	SERVE_PORT=$port SERVE_MODEL=$model SERVE_MAX_BATCH=$max_batch SERVE_MAX_BODY=$max_body \
		"$b/tests/guest/test_serve" --durations yes --use-colour no || { kill $pid; exit 1; }
	"$b/workloads/loadgen/tpu-loadgen" --model digits --port $port --concurrency 1,4 --binary \
		--requests 40 --batch 2
	kill -TERM $pid
	rc=0
	wait $pid || rc=$?
	[ $rc -eq 0 ] || { echo "check-serve: tpu-serve exited with $rc after SIGTERM"; exit 1; }
done
echo "check-serve: passed"
