#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, the first half of `make demo` (run-demo.sh): the card and its driver (tpu-demo's
# device report and a matmul checked against the guest CPU), then the CNN trained on
# Fashion-MNIST on the card (tpu-train: progress, learning curves, checkpoint, the step timed
# against the guest CPU, and the trace of the first training steps: each step is one captured
# job; tpu-train --eager-steps shows every op of a step instead). Everything lands in OUT, a host directory shared read-write (run-in-vm.sh --out).
#   guest-train.sh GUEST_BUILD_DIR OUT TRAIN_ARGS...
set -eu
b=$1
out=$2
shift 2
"$b/tools/tpu-demo/tpu-demo" 128
echo
echo "demo: training on the card: tpu-train $*"
"$b/workloads/train/tpu-train" --data fashion-mnist --out "$out/cnn" \
	--profile "$out/trace.json" --profile-steps 4 "$@" | tee "$out/train.log"
