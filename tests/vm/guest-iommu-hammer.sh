#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest half of ctest vm_iommu_hammer (issue 24, item 13): the card behind QEMU's intel-iommu
# in pass-through (a translation that switches a device to the fast path takes QEMU's big lock
# from the translating thread), two vCPUs. mmio_hammer reads the card's ID register through
# /dev/mem on vCPU 1 (each read holds the big lock and takes the device's lock) while vCPU 0
# runs the driver's uapi test (jobs the card fetches and retires): first on the card as booted
# (its first DMA), then twice more after an unbind and bind of tpu.ko. A device that did DMA
# under its own lock could deadlock with the hammer there: the run would hang (run-in-vm.sh's
# timeout). Every hammer read must return the card.
#
#   guest-iommu-hammer.sh GUEST_BUILD_DIR
set -eu
build=$1
card=$(basename "$(readlink -f /sys/class/accel/accel0/device)")
bar0=$(head -n1 "/sys/bus/pci/devices/$card/resource" | cut -d' ' -f1)
echo "guest-iommu-hammer: card $card, BAR0 at $bar0"
taskset 2 "$build/tests/guest/mmio_hammer" "$bar0" 600 steady > /tmp/hammer 2>&1 &
hammer=$!
sleep 1
for round in 1 2 3; do
	if [ $round -gt 1 ]; then
		echo "$card" > /sys/bus/pci/drivers/tpu/unbind
		echo "$card" > /sys/bus/pci/drivers/tpu/bind
		i=0
		until [ -c /dev/accel/accel0 ]; do
			i=$((i + 1))
			[ $i -le 100 ] || { echo "guest-iommu-hammer: no accel0 after the bind" >&2; exit 1; }
			sleep 0.1
		done
	fi
	echo "guest-iommu-hammer: round $round"
	taskset 1 "$build/tests/guest/test_uapi" --use-colour no -w NoTests
done
kill -TERM $hammer
status=0
wait $hammer || status=$?
cat /tmp/hammer
exit $status
