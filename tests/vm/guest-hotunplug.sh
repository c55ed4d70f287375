#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest half of tests/vm/check-hotunplug.sh: the card with id "hot" sits alone behind a PCIe root
# port. Unbinds tpu.ko from it, reads its ID register through /dev/mem from mmio_hammer (on its
# own vCPU) while the host unplugs it (TPU-HOTUNPLUG-READY tells the host when), waits for the
# guest to see it gone, then checks the hammer read the card before and the empty bus after.
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
"$hammer" "$bar0" 40 > /tmp/hammer.out 2>&1 &
hammer_pid=$!
sleep 2
echo "TPU-HOTUNPLUG-READY"
i=0
while [ -e "/sys/bus/pci/devices/$card" ]; do
	i=$((i + 1))
	[ $i -le 300 ] || { echo "guest-hotunplug: $card still there after 30 s" >&2; exit 1; }
	sleep 0.1
done
echo "guest-hotunplug: $card is gone"
status=0
wait $hammer_pid || status=$?
cat /tmp/hammer.out
exit $status
