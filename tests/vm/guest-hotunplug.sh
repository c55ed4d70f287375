#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest half of tests/vm/check-hotunplug.sh: two cards, each alone behind a PCIe root port with
# native hotplug (the guest's pciehp drives the slots): "hot" in slot 1, "hot2" in slot 2.
# Unbinds tpu.ko from each and reads its ID register through /dev/mem (an mmio_hammer on vCPU 1)
# across its unplug; each hammer must read its card before and the empty address after.
#   1. Slot 2 powered off by one write of its Slot Control (power controller off and power
#      indicator off at once): QEMU unplugs the card from that vCPU's config write, with its
#      BAR still mapped, while the other vCPU's hammer waits for the big lock with the card's
#      registers looked up; it then reaches the unrealized device (issue 24, item 15). Once
#      the hammer saw the card go, the guest removes the PCI device pciehp left behind.
#   2. Slot 1 by the host: TPU-HOTUNPLUG-READY tells it to send device_del, which presses the
#      attention button; pciehp removes the card, powers the slot off about 5 s later and turns
#      the power indicator off 1 s after that, when QEMU unplugs the card (its BAR already
#      unmapped by the power-off).
# Each card must leave sysfs within 60 s, each hammer see it go within 60 s.
#
#   guest-hotunplug.sh GUEST_BUILD_DIR
set -eu
hammer=$1/tests/guest/mmio_hammer

fail() {
	echo "guest-hotunplug: FAIL: $*" >&2
	dmesg | grep -i -E "pciehp|hotplug|slot" | tail -n 20 >&2
	exit 1
}

# The card in hotplug slot $1 (pciehp names the slots by number), e.g. 0000:01:00.0.
card_in_slot() {
	a=$(cat "/sys/bus/pci/slots/$1/address" 2>/dev/null) || fail "no hotplug slot $1 (pciehp?)"
	[ -e "/sys/bus/pci/devices/$a.0" ] || fail "no card in slot $1 ($a)"
	echo "$a.0"
}

# Waits until $1 left sysfs.
wait_gone() {
	i=0
	while [ -e "/sys/bus/pci/devices/$1" ]; do
		i=$((i + 1))
		[ $i -le 600 ] || fail "$1 still there after 60 s"
		sleep 0.1
	done
	echo "guest-hotunplug: $1 is gone"
}

config_byte() {
	od -An -tu1 -j "$2" -N1 "/sys/bus/pci/devices/$1/config" | tr -d ' '
}

# Powers the slot of root port $1 off with one 16-bit write of its Slot Control: PCC set (power
# off) and PIC = 11b (indicator off).
power_off_slot() {
	cfg=/sys/bus/pci/devices/$1/config
	cap=$(config_byte "$1" 52)	# capabilities pointer (0x34)
	while [ "$cap" -ne 0 ] && [ "$(config_byte "$1" "$cap")" -ne 16 ]; do	# PCI Express
		cap=$(config_byte "$1" $((cap + 1)))
	done
	[ "$cap" -ne 0 ] || fail "$1 has no PCI Express capability"
	ctl=$(($(config_byte "$1" $((cap + 24))) | $(config_byte "$1" $((cap + 25))) << 8))
	ctl=$((ctl | 0x700))
	printf "$(printf '\\%03o\\%03o' $((ctl & 255)) $((ctl >> 8)))" |
		dd of="$cfg" bs=2 seek=$(((cap + 24) / 2)) count=1 conv=notrunc 2>/dev/null
	echo "guest-hotunplug: slot control of $1 set to $(printf 0x%04x $ctl)"
}

# Unbinds tpu.ko from card $1 and starts a hammer on its BAR0 (60 s at most) on vCPU 1.
hammer_card() {
	if [ -e "/sys/bus/pci/devices/$1/driver" ]; then
		echo "$1" > "/sys/bus/pci/devices/$1/driver/unbind"
	fi
	bar0=$(head -n1 "/sys/bus/pci/devices/$1/resource" | cut -d' ' -f1)
	echo "guest-hotunplug: card $1, BAR0 at $bar0"
	taskset 2 "$hammer" "$bar0" 60 > "/tmp/hammer.$1" 2>&1 &
}

# Waits for the hammer $1 of card $2 and shows its counts.
hammer_result() {
	status=0
	wait "$1" || status=$?
	echo "guest-hotunplug: $2: $(cat "/tmp/hammer.$2")"
	[ $status -eq 0 ] || fail "the hammer of $2 did not read both the card and its absence"
}

hot=$(card_in_slot 1)
hot2=$(card_in_slot 2)
port2=$(basename "$(dirname "$(readlink -f "/sys/bus/pci/devices/$hot2")")")
hammer_card "$hot2"
pid_hot2=$!
sleep 1

# From vCPU 0, while the hammer reads on vCPU 1.
taskset -p 1 $$ > /dev/null
power_off_slot "$port2"
taskset -p 3 $$ > /dev/null
# The hammer ends 2 s after the card stopped answering. pciehp finds the slot already off and
# leaves the PCI device to be removed by hand.
hammer_result $pid_hot2 "$hot2"
echo 1 > "/sys/bus/pci/devices/$hot2/remove"
wait_gone "$hot2"

hammer_card "$hot"
pid_hot=$!
sleep 1
echo "TPU-HOTUNPLUG-READY"
wait_gone "$hot"
dmesg | grep pciehp | tail -n 8
hammer_result $pid_hot "$hot"
