#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-image.sh --dev-driver, for images built without the stack's packages (vm_server when no
# `make packages` has run): puts into the root what the module and tools packages install, from
# this tree's build: driver/tpu.ko in /lib/modules/ABI/updates (depmod, so that udev loads it for the cards'
# PCI ids), the udev rule driver/70-tpu.rules, group tpu, and tpu-smi (build/guest) in
# /usr/local/bin, with tpu-pod-allreduce and tpu-train-mpi (build/guest/tools/pod, what the
# tpu-pod-tools package holds) where they were built. The cards' driver is then loaded by the
# system, as the package's would be.
#   dev-driver.sh ROOT ABI SOURCE_TREE
set -euo pipefail
root=${1:?usage: dev-driver.sh ROOT ABI SOURCE_TREE}
abi=${2:?usage: dev-driver.sh ROOT ABI SOURCE_TREE}
src=${3:?usage: dev-driver.sh ROOT ABI SOURCE_TREE}
echo "dev-driver: tpu.ko, 70-tpu.rules and tpu-smi from $src, not from packages" >&2
install -D -m 0644 "$src/driver/tpu.ko" "$root/lib/modules/$abi/updates/tpu.ko"
depmod -b "$root" "$abi"
install -D -m 0644 "$src/driver/70-tpu.rules" "$root/etc/udev/rules.d/70-tpu.rules"
install -D -m 0755 "$src/build/guest/tools/tpu-smi/tpu-smi" "$root/usr/local/bin/tpu-smi"
for prog in "$src"/build/guest/tools/pod/tpu-{pod-allreduce,train-mpi}; do
	[ ! -f "$prog" ] || install -D -m 0755 "$prog" "$root/usr/local/bin/$(basename "$prog")"
done
chroot "$root" sh -c 'getent group tpu >/dev/null || groupadd --system tpu'
