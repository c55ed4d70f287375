#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, the server part of `make demo` (run-demo.sh): the CNN trained data-parallel on
# the four cards of a 2 x 2 torus (tpu-train --cards 4: weights replicated, the global batch
# split across the cards, gradients all-reduced over the links), which prints the test
# accuracy per epoch, images/s and the modelled compute / all-reduce split and scaling
# efficiency. Everything lands in OUT (run-in-vm.sh --out).
#   guest-train-parallel.sh GUEST_BUILD_DIR OUT TRAIN_ARGS...
set -eu
b=$1
out=$2
shift 2
echo "demo: data-parallel training on 4 cards: tpu-train --cards 4 $*"
"$b/workloads/train/tpu-train" --data fashion-mnist --cards 4 --out "$out/cnn-4cards" "$@" |
	tee "$out/train-4cards.log"
