#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the guest: the card is on the PCI bus, tpu.ko bound to it and /dev/accel/accel0 is
# there, as sysfs and the kernel log tell it.
fail() { echo "check-driver-bound: FAIL: $*"; exit 1; }

dev=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x7470 ] && dev=$d
done
[ -n "$dev" ] || fail "no TPU card (1234:7470) on the PCI bus"
echo "card: $(basename "$dev")"
[ -L "$dev/driver" ] || fail "the card has no driver bound"
drv=$(basename "$(readlink "$dev/driver")")
[ "$drv" = tpu ] || fail "the card is bound to '$drv', not tpu"
echo "driver: $drv"
[ -c /dev/accel/accel0 ] || fail "/dev/accel/accel0 is missing"
ls -l /dev/accel/accel0
[ -d "$dev/accel/accel0" ] || fail "sysfs does not link accel0 to the card"
dmesg | grep -i tpu | tail -n 5
grep -q '^tpu ' /proc/modules || fail "tpu.ko is not in /proc/modules"
echo "check-driver-bound: PASS"
