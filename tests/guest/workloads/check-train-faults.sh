#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest: training that survives the card. tpu-train trains the CNN on the digits
# undisturbed, then again with the same seed under tpu-inject-faults (seeded card resets and hung
# jobs, the driver's job timeout 1 s: run-in-vm.sh --driver-args job_timeout_ms=1000; each reset
# hits a job the card holds, QEMU's -global tpu.x-test-hold=on). Each fault ends one job, so the
# trainer must recover from every fault injected (the last may come after its last job), at least
# $MIN_INJECTED of them, by replaying from its last recovery point, and end with a checkpoint
# byte for byte the undisturbed run's.
#   check-train-faults.sh GUEST_BUILD_DIR [SEED]     (run-in-vm.sh --datasets)
set -eu
b=$1
seed=${2:-7}
faults=36
MIN_INJECTED=12
out=/tmp/train-faults
mkdir -p "$out"
# The same run twice: its arguments but --out.
set -- "$b/workloads/train/tpu-train" --model cnn --data digits --epochs 48 --optimizer adam \
	--lr 0.003 --filters 8 16 --hidden 32 --snapshot-steps 10 --retries 8
"$@" --out "$out/clean" >"$out/clean.log"
tail -n 3 "$out/clean.log"
# 12 to 24 of the card's jobs between faults (a captured step is one job, a recovery point every
# 10 steps): each replay gets further than the last, however slow the host.
"$b/tests/guest/tpu-inject-faults" --seed "$seed" --faults "$faults" --min-gap-jobs 12 \
	--max-gap-jobs 24 -- "$@" --out "$out/faulted" \
	>"$out/faulted.log" 2>&1 || { cat "$out/faulted.log"; exit 1; }
grep -E "^card failure|^recovered|^tpu-inject-faults" "$out/faulted.log"
recovered=$(sed -n 's/^recovered from \([0-9]*\) card failures.*/\1/p' "$out/faulted.log")
injected=$(sed -n 's/^tpu-inject-faults: injected \([0-9]*\) faults.*/\1/p' "$out/faulted.log")
test "${injected:-0}" -ge "$MIN_INJECTED" || {
	echo "check-train-faults: ${injected:-0} faults injected before training ended, want >= $MIN_INJECTED"
	exit 1
}
test "${recovered:-0}" -ge $((injected - 1)) || {
	echo "check-train-faults: recovered from ${recovered:-0} card failures of $injected faults"
	exit 1
}
cmp "$out/clean/checkpoint.tpuckpt" "$out/faulted/checkpoint.tpuckpt" || {
	echo "check-train-faults: the checkpoints differ"
	exit 1
}
echo "check-train-faults: passed ($recovered failures recovered, checkpoint identical)"
