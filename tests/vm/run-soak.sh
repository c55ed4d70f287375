#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The soak as `make soak` and vm_soak run it: tests/guest/workloads/check-soak.sh in a guest with three
# cards (training under faults, serving under load and faults, the ioctl fuzzer; its checks are
# there), and from the host QEMU's own memory (tests/vm/qemu-memory.py: neither the guest's RAM
# nor TCG's code buffer) sampled every 10 s from the end of the guest's warm-up to the end of
# its soak: it may not grow by more than QEMU_GROWTH_MIB. TCG's code buffer is bounded to
# TCG_BUFFER_MIB (run-in-vm.sh --tcg-buffer): with QEMU's 1 GiB, TCG's bookkeeping of the code
# it holds (in QEMU's heap) grows for as long as the buffer fills, 13 MiB a minute under the
# soak's training, and is freed only when the buffer is flushed; with 64 MiB it stays flat.
#   run-soak.sh GUEST_BUILD_DIR MINUTES SEED LOG
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 GUEST_BUILD_DIR MINUTES SEED LOG" >&2; exit 2; }
guest_build=$1
minutes=$2
seed=$3
log=$4
QEMU_GROWTH_MIB=64
TCG_BUFFER_MIB=64
guest_ram_mib=2048 # run-in-vm.sh's -m 2G
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
vm=
cleanup() {
	[ -z "$vm" ] || kill "$vm" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT

"$here/run-in-vm.sh" --timeout $((minutes * 60 + 1800)) --log "$log" --datasets --cards 3 \
	--smp 2 --tcg-buffer "$TCG_BUFFER_MIB" --out "$out" --qemu-args "-global tpu.x-test-hold=on -pidfile $out/qemu.pid" \
	--driver-args "job_timeout_ms=1000" -- \
	sh tests/guest/workloads/check-soak.sh "$guest_build" "$minutes" "$seed" "$out" &
vm=$!

# Exits with the guest's status (1 if that was 0) if the guest has ended.
guest_running() {
	kill -0 "$vm" 2>/dev/null && return
	rc=0
	wait "$vm" || rc=$?
	vm=
	echo "run-soak: the guest ended (status $rc) before its soak did" >&2
	exit $((rc == 0 ? 1 : rc))
}
own_kib() {
	local own _
	read -r own _ < <("$here/qemu-memory.py" "$(cat "$out/qemu.pid")" "$guest_ram_mib")
	echo "$own"
}

# The guest creates "started" after its warm-up and "ending" when its soak is over, then waits
# for "sampled".
until [ -e "$out/started" ]; do
	guest_running
	sleep 1
done
start=$(own_kib)
peak=$start
tick=0
until [ -e "$out/ending" ]; do
	guest_running
	sleep 1
	tick=$((tick + 1))
	if [ $((tick % 10)) -eq 0 ]; then
		now=$(own_kib)
		[ "$now" -le "$peak" ] || peak=$now
	fi
done
end=$(own_kib)
[ "$end" -le "$peak" ] || peak=$end
touch "$out/sampled"
rc=0
wait "$vm" || rc=$?
vm=
echo "run-soak: QEMU's own memory $((start / 1024)) MiB when the soak started, $((end / 1024)) MiB" \
	"at its end, $((peak / 1024)) MiB at most (bound: growth <= $QEMU_GROWTH_MIB MiB)"
[ $rc -eq 0 ] || exit $rc
[ $((end - start)) -le $((QEMU_GROWTH_MIB * 1024)) ] || {
	echo "run-soak: QEMU's own memory grew by $(((end - start) / 1024)) MiB" >&2
	exit 1
}
echo "run-soak: passed"
