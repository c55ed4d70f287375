#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hot-unplug of a card while vCPUs read its registers (issue 24, item 15): a q35 guest with two
# vCPUs and a card behind a PCIe root port; the guest (tests/vm/guest-hotunplug.sh) reads the
# card's BAR0 through /dev/mem in a loop on every vCPU but one while the host sends `device_del` on the
# QEMU monitor and the guest ejects the card. An access looked up before the unplug may
# reach the device after QEMU unrealized it: QEMU must neither crash nor hang, and the guest must
# see the card go.
#
#   check-hotunplug.sh GUEST_BUILD_DIR [LOG]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
guest_build=$1
log=${2:-$here/../../build/vm-logs/vm_hotunplug.log}
mkdir -p "$(dirname "$log")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sock=$tmp/monitor

"$here/run-in-vm.sh" --log "$log" --timeout 600 --monitor "$sock" --append "iomem=relaxed" \
	--qemu-args "-machine q35 -smp 2 -device pcie-root-port,id=rp1,chassis=1,slot=1 -device tpu,bus=rp1,id=hot" \
	-- sh tests/vm/guest-hotunplug.sh "$guest_build" > "$tmp/out" 2>&1 &
vm=$!
for _ in $(seq 1 500); do
	grep -q TPU-HOTUNPLUG-READY "$log" 2>/dev/null && break
	kill -0 $vm 2>/dev/null || break
	sleep 1
done
if grep -q TPU-HOTUNPLUG-READY "$log" 2>/dev/null; then
	python3 - "$sock" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"device_del hot\n")
time.sleep(2)
for line in s.recv(65536).decode(errors="replace").splitlines():
    print("monitor:", line.strip())
PY
fi
status=0
wait $vm || status=$?
cat "$tmp/out"
exit $status
