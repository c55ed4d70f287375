#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, with three cards (run-in-vm.sh --cards 3 --datasets, --driver-args
# job_timeout_ms=1000): the soak. For MINUTES, at once:
#   card 0: tpu-train (the digits CNN) run after run under seeded card resets and hung jobs
#           (tpu-inject-faults); every run's checkpoint must equal the undisturbed run's byte for byte;
#   card 1: tpu-serve under tpu-loadgen (8 clients) and seeded faults; every request must be
#           answered (200, or 503 with Retry-After);
#   card 2: the ioctl fuzzer (tpu-ioctl-fuzz), batch after batch with new seeds.
# At the end the guest's slab may not have grown by more than SLAB_GROWTH_KB since the start
# (after a warm-up run), and the harness fails the run on any oops, WARN or BUG in the kernel log.
# With HOST_DIR (a directory shared with the host, run-in-vm.sh --out: tests/vm/run-soak.sh), it
# creates HOST_DIR/started after the warm-up and HOST_DIR/ending when the soak is over, then waits
# up to a minute for HOST_DIR/sampled: the host measures QEMU's memory between the two.
#   check-soak.sh GUEST_BUILD_DIR [MINUTES] [SEED] [HOST_DIR]
set -eu
. tests/guest/workloads/serve-ready.sh
b=$1
minutes=${2:-1}
seed=${3:-11}
host=${4:-}
SLAB_GROWTH_KB=16384
out=/tmp/soak
port=8500
mkdir -p "$out"
seconds=$((minutes * 60))
# One training run's arguments (no spaces in them: split on purpose below).
train_args="--model cnn --data digits --epochs 6 --optimizer adam --lr 0.003 --filters 8 16
	--hidden 32 --snapshot-steps 10 --retries 8 --card 0"
slab() {
	sed -n 's/^Slab: *\([0-9]*\) kB/\1/p' /proc/meminfo
}

echo "== warm-up: the undisturbed training run, the served model, a little of each card's load"
# shellcheck disable=SC2086
"$b/workloads/train/tpu-train" $train_args --out "$out/reference" >"$out/reference.log"
tail -n 2 "$out/reference.log"
"$b/workloads/train/tpu-train-cpu" --data digits --epochs 2 --hidden 32 --out "$out/served" \
	>"$out/served.log"
"$b/workloads/serve/tpu-serve" --card 1 --model "$out/served/checkpoint.tpuckpt" --name digits \
	--port $port --max-batch 16 >"$out/serve.log" 2>&1 &
serve=$!
serve_wait_ready $port $serve 120
# Every path of the soak once before the baselines: a card's memories become resident on its
# first jobs, a model's reload on its first fault.
"$b/tests/guest/tpu-inject-faults" --card 1 --seed "$seed" --faults 2 --min-gap-ms 300 \
	--max-gap-ms 600 --busy-wait-ms 300 -- \
	"$b/workloads/loadgen/tpu-loadgen" --model digits --port $port --batch 2 --concurrency 8 \
	--requests 400 >"$out/loadgen.log" 2>&1 || { cat "$out/loadgen.log"; exit 1; }
"$b/tests/guest/tpu-ioctl-fuzz" --device /dev/accel/accel2 --seed "$seed" -n 2000 -p 2 \
	>"$out/fuzz.log" 2>&1 || { cat "$out/fuzz.log"; exit 1; }
serve_wait_ready $port $serve 120
slab_start=$(slab)
end=$(($(date +%s) + seconds))
echo "== soak: $minutes min, seed $seed, slab $slab_start kB"
[ -z "$host" ] || touch "$host/started"

"$b/tests/guest/tpu-inject-faults" --card 1 --seed "$seed" --faults 1000000 --min-gap-ms 300 \
	--max-gap-ms 3000 --busy-wait-ms 300 -- \
	"$b/workloads/loadgen/tpu-loadgen" --model digits --port $port --batch 2 --concurrency 8 \
	--requests 1000000000 --seconds $seconds >"$out/loadgen.log" 2>&1 &
loadgen=$!
(
	i=0
	while [ "$(date +%s)" -lt $end ]; do
		"$b/tests/guest/tpu-ioctl-fuzz" --device /dev/accel/accel2 --seed $((seed + i)) \
			-n 20000 -p 2 >"$out/fuzz.log" 2>&1 || { cat "$out/fuzz.log"; exit 1; }
		i=$((i + 1))
	done
	echo "check-soak: the fuzzer ran $i batches of 20,000 operations on card 2"
) &
fuzz=$!

runs=0
while [ "$(date +%s)" -lt $end ]; do
	runs=$((runs + 1))
	# shellcheck disable=SC2086
	"$b/tests/guest/tpu-inject-faults" --card 0 --seed $((seed + runs)) --faults 1000000 \
		--min-gap-ms 200 --max-gap-ms 1500 --min-gap-jobs 500 --max-gap-jobs 1500 -- \
		"$b/workloads/train/tpu-train" $train_args --out "$out/run" >"$out/run.log" 2>&1 ||
		{ cat "$out/run.log"; exit 1; }
	grep -E "^recovered|^tpu-inject-faults" "$out/run.log" | tr '\n' ' '
	echo
	cmp "$out/reference/checkpoint.tpuckpt" "$out/run/checkpoint.tpuckpt" || {
		echo "check-soak: training run $runs ended with other weights than the undisturbed run"
		exit 1
	}
done
echo "check-soak: $runs training runs on card 0, each equal to the undisturbed run"

rc=0
wait $loadgen || rc=$?
cat "$out/loadgen.log"
[ $rc -eq 0 ] || { echo "check-soak: tpu-loadgen saw errors (status $rc)"; exit 1; }
wait $fuzz || { echo "check-soak: the fuzzer failed"; exit 1; }
wget -q -O - "http://127.0.0.1:$port/metrics" | grep -E "^tpu_serve_(card|model|unavailable|requests)"
kill -TERM $serve
wait $serve || { echo "check-soak: tpu-serve did not stop cleanly"; tail "$out/serve.log"; exit 1; }
if [ -n "$host" ]; then
	touch "$host/ending"
	i=0
	until [ -e "$host/sampled" ] || [ $i -ge 60 ]; do
		sleep 1
		i=$((i + 1))
	done
fi
sync
echo 2 >/proc/sys/vm/drop_caches
slab_end=$(slab)
echo "check-soak: slab $slab_start kB at the start, $slab_end kB at the end"
[ $((slab_end - slab_start)) -le $SLAB_GROWTH_KB ] || {
	echo "check-soak: the slab grew by $((slab_end - slab_start)) kB (bound $SLAB_GROWTH_KB kB)"
	exit 1
}
echo "check-soak: passed"
