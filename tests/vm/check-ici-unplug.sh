#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Unplug of a card while its peer waits on their link (spec 2.0, docs/hardware.md section 10):
# two cards on a ring (-object tpu-ici), each behind a PCIe root port with native hotplug. In the
# guest, test_ici's hidden [.unplug] case submits a RECV on card 1 from card 0 and prints
# TPU-ICI-WAITING; the host then sends `device_del` for card 0 on the QEMU monitor. pciehp
# removes the card and QEMU unplugs it, which takes its links down: the waiting RECV must end
# with TPU_ERR_LINK_DOWN (not the driver's timeout, raised to 60 s here), card 1's ports read
# down, and QEMU must neither crash nor hang (the run is bounded at 240 s).
#
#   check-ici-unplug.sh GUEST_BUILD_DIR [LOG]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
guest_build=$1
log=${2:-$here/../../build/vm-logs/vm_ici_unplug.log}
mkdir -p "$(dirname "$log")"
rm -f "$log"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sock=$tmp/monitor

"$here/run-in-vm.sh" --log "$log" --timeout 240 --monitor "$sock" \
	--driver-args "job_timeout_ms=60000" \
	--qemu-args "-machine q35 -global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off -object tpu-ici,id=ici0,topology=ring,dims=2,preset=v5e -device pcie-root-port,id=rp1,chassis=1,slot=1 -device tpu,bus=rp1,id=hot0,ici=ici0,ici-coord=0 -device pcie-root-port,id=rp2,chassis=2,slot=2 -device tpu,bus=rp2,id=hot1,ici=ici0,ici-coord=1" \
	-- "$guest_build/tests/guest/test_ici" "[.unplug]" --use-colour no -w NoTests \
	> "$tmp/out" 2>&1 &
vm=$!
while ! grep -q TPU-ICI-WAITING "$log" 2>/dev/null && kill -0 $vm 2>/dev/null; do
	sleep 1
done
sent=0
if grep -q TPU-ICI-WAITING "$log" 2>/dev/null; then
	sleep 2 # the RECV is waiting by now
	if /usr/bin/python3 "$here/hmp-command.py" "$sock" device_del hot0 > "$tmp/monitor.out"; then
		sent=1
	fi
fi
status=0
wait $vm || status=$?
cat "$tmp/out"
sed 's/^/monitor: /' "$tmp/monitor.out" 2>/dev/null || true
if [ $status -eq 0 ] && [ $sent -eq 0 ]; then
	echo "check-ici-unplug: FAIL: device_del was not sent or not accepted" >&2
	exit 1
fi
exit $status
