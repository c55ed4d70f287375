#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The card's default engine threads (threads=0, issue 24 item 20): one per host CPU but no more
# than the machine has vCPUs. QEMU starts paused (-S, no guest) with -device tpu, and its threads
# are counted in /proc against the same machine with threads=1 (no pool thread besides the
# worker): the difference is the pool's extra threads, min(vCPUs, host CPUs) - 1.
set -euo pipefail
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/qemu-cards.sh"
qemu=$(tpu_qemu_binary "$src" "$cache")
host_cpus=$(nproc)

threads_of() { # SMP DEVICE
	"$qemu" -accel tcg -machine pc -smp "$1" -nodefaults -display none -monitor none -S \
		-L /usr/share/seabios -L /usr/share/qemu -device "$2" 2>/dev/null &
	local pid=$! n
	sleep 3
	n=$(ls "/proc/$pid/task" | wc -l)
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	echo "$n"
}

status=0
for smp in 1 2 4; do
	base=$(threads_of "$smp" tpu,threads=1)
	with_default=$(threads_of "$smp" tpu)
	want=$((smp < host_cpus ? smp : host_cpus))
	got=$((with_default - base + 1))
	echo "check-engine-threads: -smp $smp on $host_cpus host CPUs: $got engine threads (want $want)"
	[ "$got" -eq "$want" ] || status=1
done
exit $status
