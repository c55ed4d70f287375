#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest half of tests/vm/check-hotunplug.sh: the card with id "hot" sits alone behind a PCIe root
# port. Unbinds tpu.ko from it, reads its ID register through /dev/mem from one mmio_hammer per
# vCPU but one (their accesses queue for QEMU's big lock, so some wait with the card's registers looked
# up while the eject unrealizes it) while the host unplugs it (TPU-HOTUNPLUG-READY tells the host
# when), waits for the guest to see it gone, then checks that every hammer read the card before
# and the empty address after.
#
#   guest-hotunplug.sh GUEST_BUILD_DIR
set -eu
hammer=$1/tests/guest/mmio_hammer
card=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x7470 ] || continue
	case "$(readlink -f "$d")" in
	*/pci0000:00/0000:00:*/0000:*) card=${d##*/} ;;	# behind a bridge: the root port
	esac
done
[ -n "$card" ] || { echo "guest-hotunplug: no card behind a root port" >&2; exit 1; }
bar0=$(head -n1 "/sys/bus/pci/devices/$card/resource" | cut -d' ' -f1)
echo "guest-hotunplug: card $card, BAR0 at $bar0"
if [ -e "/sys/bus/pci/devices/$card/driver" ]; then
	echo "$card" > "/sys/bus/pci/devices/$card/driver/unbind"
fi
pids=
for i in $(seq 2 "$(nproc)"); do
	"$hammer" "$bar0" 300 > "/tmp/hammer.$i" 2>&1 &
	pids="$pids $!"
done
sleep 2
echo "TPU-HOTUNPLUG-READY"
i=0
while [ -e "/sys/bus/pci/devices/$card" ]; do
	i=$((i + 1))
	if [ $i -gt 1200 ]; then
		echo "guest-hotunplug: $card still there after 120 s" >&2
		dmesg | grep -i -E "pciehp|acpiphp|hotplug|slot|01:00" | tail -n 20 >&2
		exit 1
	fi
	sleep 0.1
done
echo "guest-hotunplug: $card is gone"
status=0
for pid in $pids; do
	wait "$pid" || status=1
done
cat /tmp/hammer.*
exit $status
