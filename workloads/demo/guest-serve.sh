#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, the second half of `make demo` (run-demo.sh): the trained CNN and its int8
# quantisation evaluated on the card on the 10,000 test images (tpu-eval, logits checked against
# the CPU reference of the same arithmetic), then the int8 model served (tpu-serve, KServe v2 on
# port 8000, forwarded to the host) until the host's load generator has finished: the host
# writes OUT/loadgen.done. OUT is a host directory shared read-write (run-in-vm.sh --out).
#   guest-serve.sh GUEST_BUILD_DIR OUT
set -eu
b=$1
out=$2
"$b/workloads/infer/tpu-eval" --data fashion-mnist --quiet --reference 10 \
	--model "$out/cnn/checkpoint.tpuckpt" --model "$out/cnn/int8.tpuckpt" | tee "$out/eval.log"
"$b/workloads/serve/tpu-serve" --model "$out/cnn/int8.tpuckpt" --name fashion-mnist \
	--host 0.0.0.0 --port 8000 --max-batch 32 --queue-delay-us 2000 > "$out/serve.log" 2>&1 &
server=$!
i=0
until wget -q -O /dev/null http://127.0.0.1:8000/v2/health/ready 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 120 ] || { echo "demo: tpu-serve did not become ready"; cat "$out/serve.log"; exit 1; }
	kill -0 $server 2>/dev/null || { echo "demo: tpu-serve exited"; cat "$out/serve.log"; exit 1; }
	sleep 1
done
echo "demo: tpu-serve is serving the int8 model on port 8000"
touch "$out/serving"
i=0
until [ -e "$out/loadgen.done" ]; do
	i=$((i + 1))
	[ $i -lt 900 ] || { echo "demo: no word from the host's load generator"; break; }
	sleep 1
done
kill -TERM $server
wait $server || true
echo "demo: tpu-serve stopped"
