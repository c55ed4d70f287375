#!/bin/bash
# SPDX-License-Identifier: MIT
# Run in a server VM (tools/server-image) as user tpu by check-server.sh, through SSH:
#   guest-server-checks.sh HOSTNAME CARDS packages|dev-driver
# checks that the system came up whole (systemctl is-system-running: "running"; any failed unit
# is named and fails the check), the hostname, the CARDS TPU cards on the PCI bus, tpu.ko loaded
# by the system (udev's modalias look-up; nothing here loads it) and bound to every card, the
# accel nodes in group tpu, tpu-smi listing the cards for this non-root user, Python with numpy
# and Open MPI 4.1; with the stack's packages, dpkg's record of them and a matmul on card 0 from
# Python (python3-tpurt) equal to numpy's.
set -euo pipefail
host=$1 cards=$2 stack=$3
fail() { echo "server check: $*" >&2; exit 1; }
ok() { echo "server check: ok: $*"; }

state=$(systemctl is-system-running --wait || true)
if [ "$state" != running ]; then
	systemctl --failed --no-pager >&2 || true
	fail "the system is '$state', not 'running'"
fi
ok "systemd: $state after $(cut -d' ' -f1 /proc/uptime) s of uptime"
[ "$(hostname)" = "$host" ] || fail "hostname $(hostname), not $host"
[ "$(id -un)" = tpu ] && [ "$(id -u)" -ne 0 ] || fail "not the non-root user tpu: $(id)"
id -nG | grep -qw tpu || fail "user tpu is not in group tpu: $(id)"
ok "user $(id)"

n=$(lspci -n -d 1234:7470 | wc -l)
[ "$n" -eq "$cards" ] || fail "lspci shows $n TPU card(s), not $cards"
ok "lspci: $n card(s) 1234:7470"
lsmod | grep -qw '^tpu' || fail "tpu.ko is not loaded"
bound=$(find /sys/bus/pci/drivers/tpu -maxdepth 1 -name '0000:*' 2>/dev/null | wc -l)
[ "$bound" -eq "$cards" ] || fail "tpu.ko drives $bound card(s), not $cards"
ok "tpu.ko loaded by the system from $(/sbin/modinfo -n tpu), bound to $bound card(s)"
for ((i = 0; i < cards; i++)); do
	node=/dev/accel/accel$i
	[ -c "$node" ] || fail "no $node"
	[ "$(stat -c %G:%a "$node")" = tpu:660 ] || fail "$node is $(stat -c %U:%G:%a "$node"), not group tpu 0660"
done
ok "/dev/accel/accel0..$((cards - 1)): group tpu, mode 0660"
tpu-smi --json | python3 -c '
import json, sys
report = json.load(sys.stdin)
cards = int(sys.argv[1])
assert report["driver_loaded"], "tpu-smi: driver not loaded"
listed = report["cards"]
assert len(listed) == cards, f"tpu-smi lists {len(listed)} card(s), not {cards}"
for card in listed:
    assert card["driver"] == "tpu", card
    assert cards == 1 or card["interconnect"] is not None, f"{card} is on no interconnect"
print("server check: ok: tpu-smi as user tpu lists", cards, "card(s):",
      ", ".join(c["device"] + " at " + c["pci"] for c in listed))
' "$cards"

python3 -c 'import numpy; print("server check: ok: Python", __import__("sys").version.split()[0], "numpy", numpy.__version__)'
mpirun --version | grep -q 'Open MPI) 4\.1' || fail "mpirun is not Open MPI 4.1: $(mpirun --version | head -n1)"
ok "$(mpirun --version | head -n1)"

if [ "$stack" = packages ]; then
	for p in tpu-common tpu-modules-"$(uname -r)" libtpurt0 tpu-tools python3-tpurt; do
		dpkg -s "$p" >/dev/null 2>&1 || fail "package $p is not installed"
		echo "server check: dpkg -L $p: $(dpkg -L "$p" | grep -c .) paths"
	done
	python3 - <<'PY'
import numpy as np
import tpurt

card = tpurt.Device.open()
a = np.arange(-64, 64, dtype=np.int8).reshape(8, 16)
b = np.arange(-48, 48, dtype=np.int8).reshape(16, 6)
c = tpurt.matmul(card, a, b)
assert np.array_equal(c, a.astype(np.int32) @ b.astype(np.int32)), c
print("server check: ok: python3-tpurt: an int8 matmul on card 0 equals numpy's")
PY
else
	echo "server check: the image has no stack packages (no make packages): tpu.ko and tpu-smi from the tree"
fi
