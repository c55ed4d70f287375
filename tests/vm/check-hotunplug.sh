#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hot-unplug of cards while vCPUs read their registers (issue 24, item 15): a q35 guest with two
# vCPUs and two cards, each behind a PCIe root port with native hotplug (ACPI hotplug off, so the
# guest's pciehp drives the slots; the ACPI eject was not always seen by the guest). The guest
# (tests/vm/guest-hotunplug.sh) reads both cards' BAR0 through /dev/mem in loops, powers slot 2
# off itself with one config write (QEMU unplugs that card while its BAR is mapped and the other
# vCPU's access, looked up before, waits for the big lock and then reaches the device), then
# lets the host send `device_del` for the card in slot 1 on the QEMU monitor. QEMU must neither
# crash nor hang (the run is bounded at 240 s), the monitor must accept device_del, and the guest
# must see both cards go.
#
#   check-hotunplug.sh GUEST_BUILD_DIR [LOG]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
guest_build=$1
log=${2:-$here/../../build/vm-logs/vm_hotunplug.log}
mkdir -p "$(dirname "$log")"
rm -f "$log"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sock=$tmp/monitor

"$here/run-in-vm.sh" --log "$log" --timeout 240 --monitor "$sock" --append "iomem=relaxed" --smp 2 \
	--qemu-args "-machine q35 -global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off -device pcie-root-port,id=rp1,chassis=1,slot=1 -device tpu,bus=rp1,id=hot -device pcie-root-port,id=rp2,chassis=2,slot=2 -device tpu,bus=rp2,id=hot2" \
	-- sh tests/vm/guest-hotunplug.sh "$guest_build" > "$tmp/out" 2>&1 &
vm=$!
while ! grep -q TPU-HOTUNPLUG-READY "$log" 2>/dev/null && kill -0 $vm 2>/dev/null; do
	sleep 1
done
sent=0
if grep -q TPU-HOTUNPLUG-READY "$log" 2>/dev/null; then
	if /usr/bin/python3 "$here/hmp-command.py" "$sock" device_del hot > "$tmp/monitor.out"; then
		sent=1
	fi
fi
status=0
wait $vm || status=$?
cat "$tmp/out"
sed 's/^/monitor: /' "$tmp/monitor.out" 2>/dev/null || true
if [ $status -eq 0 ] && [ $sent -eq 0 ]; then
	echo "check-hotunplug: FAIL: device_del was not sent or not accepted" >&2
	exit 1
fi
exit $status
