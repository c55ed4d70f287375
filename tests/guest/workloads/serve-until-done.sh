#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, for a host-side check through the forwarded port (tests/vm/check-forwarded-
# serving.sh): trains a small digits MLP on the CPU, serves it on the card (tpu-serve on
# 0.0.0.0:8000), writes OUT/serving once it is ready and serves until the host writes OUT/done.
# OUT is a host directory shared read-write (run-in-vm.sh --out).
#   serve-until-done.sh GUEST_BUILD_DIR OUT     (run-in-vm.sh --datasets)
set -eu
. tests/guest/workloads/serve-ready.sh
b=$1
out=$2
"$b/workloads/train/tpu-train-cpu" --data digits --epochs 1 --hidden 32 --out /tmp/digits \
	>/tmp/train.log || { cat /tmp/train.log; exit 1; }
"$b/workloads/serve/tpu-serve" --model /tmp/digits/checkpoint.tpuckpt --name digits \
	--host 0.0.0.0 --port 8000 >"$out/serve.log" 2>&1 &
pid=$!
serve_wait_ready 8000 $pid 120
touch "$out/serving"
i=0
until [ -e "$out/done" ]; do
	i=$((i + 1))
	[ $i -lt 1200 ] || { echo "serve-until-done: no word from the host"; break; }
	kill -0 $pid 2>/dev/null || { echo "serve-until-done: tpu-serve exited"; exit 1; }
	sleep 1
done
kill -TERM $pid
wait $pid
