#!/bin/bash
# SPDX-License-Identifier: MIT
# Run in a server VM (tools/server-image) as user tpu by check-server.sh, through SSH:
#   guest-server-checks.sh HOSTNAME CARDS packages|dev-driver [TREE]
# checks that the system came up whole (systemctl is-system-running: "running"; any failed unit
# is named and fails the check), the hostname, the CARDS TPU cards on the PCI bus, tpu.ko loaded
# by the system (udev's modalias look-up; nothing here loads it) and bound to every card, the
# accel nodes in group tpu, tpu-smi listing the cards for this non-root user, Python with numpy
# and Open MPI 4.1. With the stack's packages: where dpkg put them (dpkg -L), a matmul on card 0
# from Python (python3-tpurt) equal to numpy's, Fashion-MNIST found where the packages link it,
# the Python binding's tests (TREE/tests/python, the tutorial's CNN among them) on card 0, then apt-get remove of the packages unloading tpu.ko
# and apt-get install loading it again on every card, and a kernel log without a warning.
set -euo pipefail
host=$1 cards=$2 stack=$3 tree=${4:-}
fail() { echo "server check: $*" >&2; exit 1; }
ok() { printf 'server check: [%4d s] ok: %s\n' "$SECONDS" "$*"; }

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

if [ "$stack" != packages ]; then
	echo "server check: the image has no stack packages (no make packages): tpu.ko and tpu-smi from the tree"
	exit 0
fi

# ---- the stack's packages: where they went, Python on the card, removal and reinstallation ----
kabi=$(uname -r)
stack_pkgs=(tpu-common "tpu-modules-$kabi" libtpurt0 tpu-tools tpu-pod-tools python3-tpurt)
for p in "${stack_pkgs[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || fail "package $p is not installed"
	echo "server check: dpkg -L $p:"
	# Its files and links, not its directories (nor the merged /usr's /lib link).
	dpkg -L "$p" | while read -r f; do
		[ "$f" = /lib ] || { [ -d "$f" ] && [ ! -L "$f" ]; } || echo "    $f"
	done
done
ok "the stack's packages are installed: ${stack_pkgs[*]}"

matmul_on_card() {
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
}
matmul_on_card

# The data set where a user finds it with no set-up: Debian's dataset-fashion-mnist, linked into
# /usr/share/tpu-stack/datasets by tpu-common.
python3 -c '
import tpurt
train, test = tpurt.load_dataset()
assert (train.count, test.count) == (60000, 10000), (train.count, test.count)'
ok "tpurt.load_dataset() finds Fashion-MNIST in $(readlink -f /usr/share/tpu-stack/datasets/fashion-mnist)"

# The Python binding's tests (tests/python, with the READMEs the tutorial's test reads and
# scikit-learn's digits), sent here by check-server.sh, on card 0 behind tpu.ko; test_tutorial.py
# trains the CNN of the README's tutorial for one epoch on Fashion-MNIST and wants more than 88%
# on the test set.
if [ -d "$tree/tests/python" ]; then
	t0=$(date +%s)
	ln -sfn /usr/share/tpu-stack/datasets/fashion-mnist "$tree/datasets/fashion-mnist"
	(cd "$tree" && TPURT_TEST_ON_CARD=1 TPU_DATASETS="$tree/datasets" python3 -m pytest \
		-p no:cacheprovider -q -rA tests/python 2>&1 | tee /tmp/pytest.log) ||
		fail "pytest of tests/python failed"
	acc=$(grep -o 'test accuracy [0-9.]*%' /tmp/pytest.log | tail -n1 || true)
	[ -n "$acc" ] || fail "the tutorial printed no test accuracy"
	ok "pytest of tests/python on card 0 in $(($(date +%s) - t0)) s; the tutorial's $acc"
fi

# apt-get remove unloads tpu.ko (the accel nodes go), apt-get install from the image's local
# repository (/srv/tpu-repo, its source list alone: no network needed) loads it again on every card.
apt_local() {
	sudo DEBIAN_FRONTEND=noninteractive apt-get -q \
		-o Dir::Etc::SourceList=/etc/apt/sources.list.d/tpu-stack.list \
		-o Dir::Etc::SourceParts=/nonexistent "$@"
}
apt_local update >/dev/null || fail "apt-get update from /srv/tpu-repo failed"
removed=("tpu-modules-$kabi" libtpurt0 tpu-tools tpu-pod-tools python3-tpurt)
apt_local remove -y "${removed[@]}" >/tmp/apt-remove.log 2>&1 ||
	{ cat /tmp/apt-remove.log >&2; fail "apt-get remove ${removed[*]} failed"; }
grep 'tpu-module' /tmp/apt-remove.log | sed 's/^/server check: apt-get remove: /' || true
[ ! -d /sys/module/tpu ] || fail "tpu.ko is still loaded after apt-get remove"
[ -z "$(ls /dev/accel 2>/dev/null)" ] || fail "accel nodes left after apt-get remove: $(ls /dev/accel)"
! command -v tpu-smi >/dev/null || fail "tpu-smi is still installed"
! command -v tpu-train-mpi >/dev/null || fail "tpu-train-mpi is still installed"
! python3 -c 'import tpurt' 2>/dev/null || fail "python3 still imports tpurt"
ok "apt-get remove ${removed[*]}: tpu.ko unloaded, no accel node, no tpu-smi, tpu-train-mpi or tpurt"
apt_local install -y "${removed[@]}" >/tmp/apt-install.log 2>&1 ||
	{ cat /tmp/apt-install.log >&2; fail "apt-get install ${removed[*]} failed"; }
grep 'tpu-module' /tmp/apt-install.log | sed 's/^/server check: apt-get install: /' || true
sudo udevadm settle
bound=$(find /sys/bus/pci/drivers/tpu -maxdepth 1 -name '0000:*' 2>/dev/null | wc -l)
[ "$bound" -eq "$cards" ] || fail "after apt-get install tpu.ko drives $bound card(s), not $cards"
for ((i = 0; i < cards; i++)); do
	[ "$(stat -c %G:%a "/dev/accel/accel$i" 2>/dev/null)" = tpu:660 ] ||
		fail "after apt-get install /dev/accel/accel$i is not group tpu 0660"
done
[ "$(tpu-smi --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["cards"]))')" = "$cards" ] ||
	fail "after apt-get install tpu-smi does not list $cards cards"
matmul_on_card
ok "apt-get install ${removed[*]}: tpu.ko loaded and bound to $cards cards, tpu-smi and Python work"
if sudo dmesg | grep -E 'Oops|BUG:|WARNING:|Call Trace|tpu.*(leak|refcount)'; then
	fail "the kernel log shows the trouble above"
fi
ok "the kernel log is clean"
