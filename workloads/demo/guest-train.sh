#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, the first half of `make demo` (run-demo.sh): the card and its driver (tpu-demo's
# device report and a matmul checked against the guest CPU), then the CNN trained on
# Fashion-MNIST on the card (tpu-train: progress, learning curves, checkpoint, the step timed
# against the guest CPU) and one short profiled training run whose trace shows every op of a
# step. Everything lands in OUT, a host directory shared read-write (run-in-vm.sh --out).
#   guest-train.sh GUEST_BUILD_DIR OUT TRAIN_ARGS...
set -eu
b=$1
out=$2
shift 2
"$b/tools/tpu-demo/tpu-demo" 256
echo
echo "demo: training on the card: tpu-train $*"
"$b/workloads/train/tpu-train" --data fashion-mnist --out "$out/cnn" "$@" | tee "$out/train.log"
echo
# The same options but the length of the run: one epoch of 4 steps.
profile_args=
while [ $# -gt 0 ]; do
	case $1 in
	--epochs | --limit | --out | --resume) shift 2 ;;
	*) profile_args="$profile_args $1"; shift ;;
	esac
done
echo "demo: one profiled epoch of 4 steps (TPURT_PROFILE=$out/trace.json)"
# shellcheck disable=SC2086 # one word per option
TPURT_PROFILE="$out/trace.json" "$b/workloads/train/tpu-train" --data fashion-mnist \
	--out /tmp/profiled $profile_args --epochs 1 --limit 256 > "$out/profile.log" # table: stderr
