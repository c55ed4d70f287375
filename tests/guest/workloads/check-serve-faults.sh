#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest: serving that loses nothing. Trains a digits MLP on the CPU, serves it on the card
# (tpu-serve), and drives it with tpu-loadgen while tpu-inject-faults resets the card and hangs
# its jobs (seeded; the driver's job timeout 1 s: run-in-vm.sh --driver-args job_timeout_ms=1000).
# Every request must be answered, 200 or 503 with Retry-After (tpu-loadgen exits 1 on any other
# answer or a connection error), the server must have recovered from at least $MIN_FAILURES lost
# batches, and afterwards be ready and answer 200 again, with as many threads and open files as
# before the faults (nothing leaked or left degraded; the throughput at 16 clients is printed
# beside the one before the faults, both after a warm-up). Then, without faults, 64 and 256
# clients opening a connection per request, and 64 keeping theirs, must see no error.
#   check-serve-faults.sh GUEST_BUILD_DIR [SEED]     (run-in-vm.sh --datasets)
set -eu
. tests/guest/workloads/serve-ready.sh
b=$1
seed=${2:-7}
faults=40
MIN_FAILURES=12
out=/tmp/serve-faults
port=8500
mkdir -p "$out"
"$b/workloads/train/tpu-train-cpu" --data digits --epochs 2 --hidden 32 --out "$out/digits" \
	>"$out/train.log" || { cat "$out/train.log"; exit 1; }
"$b/workloads/serve/tpu-serve" --model "$out/digits/checkpoint.tpuckpt" --name digits \
	--port $port --max-batch 16 --queue-delay-us 2000 >"$out/serve.log" 2>&1 &
pid=$!
stop() {
	kill -TERM $pid 2>/dev/null || true
	wait $pid || true
	tail -n 20 "$out/serve.log"
}
trap stop EXIT
serve_wait_ready $port $pid 120
loadgen() {
	"$b/workloads/loadgen/tpu-loadgen" --model digits --port $port --batch 2 "$@"
}
# 400 requests from 16 clients; prints the table and sets $rate to their requests per second.
measure() {
	loadgen --concurrency 16 --requests 400 | tee "$out/rate.log"
	rate=$(awk '$1 == 16 { print $5 }' "$out/rate.log")
}
# The server's threads and open files, once its clients have gone.
resources() {
	sleep 1
	echo "threads $(sed -n 's/^Threads:\t*//p' /proc/$pid/status)," \
		"open files $(ls /proc/$pid/fd | wc -l)"
}
echo "== before the faults: a warm-up, then the throughput to come back to"
loadgen --concurrency 16 --requests 200 >/dev/null
measure
rate_before=$rate
resources_before=$(resources)
echo "== under $faults faults"
"$b/tests/guest/tpu-inject-faults" --seed "$seed" --faults $faults --min-gap-ms 50 \
	--busy-wait-ms 300 \
	--max-gap-ms 400 -- \
	"$b/workloads/loadgen/tpu-loadgen" --model digits --port $port --batch 2 \
	--concurrency 16 --requests 1000000 --seconds 90
metric() {
	wget -q -O - "http://127.0.0.1:$port/metrics" | sed -n "s/^$1 //p"
}
failures=$(metric tpu_serve_card_failures_total)
echo "check-serve-faults: the server recovered from $failures lost batches" \
	"($(metric tpu_serve_model_reloads_total) reloads," \
	"$(metric tpu_serve_unavailable_batches_total) batches answered 503)"
test "$failures" -ge $MIN_FAILURES || {
	echo "check-serve-faults: $failures lost batches, want >= $MIN_FAILURES"
	exit 1
}
serve_wait_ready $port $pid 30
echo "== after the faults, no faults"
measure
resources_after=$(resources)
echo "check-serve-faults: $rate req/s after the faults, $rate_before before;" \
	"$resources_after after, $resources_before before"
[ "$resources_after" = "$resources_before" ] || {
	echo "check-serve-faults: the server holds other resources than before the faults"
	exit 1
}
loadgen --concurrency 64,256 --requests 2000 --new-connection
loadgen --concurrency 64 --requests 2000
echo "check-serve-faults: passed"
