#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host-side self-test of the VM harness (run-in-vm.sh, guest-init.sh): a guest command's exit
# status comes back whole, 128 included (isa-debug-exit carries 0-127: (128 << 1) | 1 is 1 in
# 8 bits, which once read as 0, so a guest with 128 failed Catch2 checks passed); a memory
# check's report in the kernel log (here page poisoning's, written to /dev/kmsg) fails a command
# that succeeded, with status 99; and a QEMU that refuses its arguments (exit status 1, which
# the exit port's 0 looks like, so a test whose QEMU never started once passed) fails with 125.
#   check-harness-exit.sh LOGDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:?usage: check-harness-exit.sh LOGDIR}
expect() {
	local want=$1 name=$2 qemu_args=${QEMU_ARGS:-}
	shift 2
	"$here/run-in-vm.sh" --no-driver --timeout 300 --log "$logs/vm_harness_exit-$name.log" \
		${qemu_args:+--qemu-args "$qemu_args"} -- "$@"
	local got=$?
	if [ "$got" -ne "$want" ]; then
		echo "check-harness-exit: FAIL: $name: expected status $want, run-in-vm.sh returned $got" >&2
		exit 1
	fi
	echo "check-harness-exit: $name: status $got as expected"
}
expect 128 exit128 sh -c 'exit 128'
expect 3 exit3 sh -c 'exit 3'
expect 99 kmsg sh -c 'echo "pagealloc: memory corruption at 0000 (harness self-test)" > /dev/kmsg'
QEMU_ARGS="-object tpu-ici,id=bad,no-such-property=1" expect 125 qemu-refused true
echo "check-harness-exit: PASS"
