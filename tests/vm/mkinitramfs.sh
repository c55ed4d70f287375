#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the test guest's initramfs: busybox, guest-init.sh as /init and the decompressed module
# chain that tpu.ko, the 9p share and user networking need (drm, drm_shmem_helper, gpu-sched,
# 9p, virtio_net, ...), in load
# order resolved by modprobe from the cached guest kernel. Cached by kernel ABI and input hashes;
# prints the initramfs path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
kroot=$cache/kernel/current/root
[ -d "$kroot/lib/modules" ] || { echo "mkinitramfs: no guest kernel; run tools/fetch-guest-kernel.sh" >&2; exit 1; }
abi=$(ls "$kroot/lib/modules")
mods=(drm_shmem_helper gpu-sched 9p 9pnet_virtio virtio_net)
key=$( (echo "$abi ${mods[*]}"; cat "$here/guest-init.sh" "$0"; sha256sum /bin/busybox) | sha256sum | cut -c1-16)
out=$cache/initramfs/initramfs-$key.cpio.gz
if [ -f "$out" ]; then echo "$out"; exit 0; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,sbin,proc,sys,dev,tmp,lib/modules}
cp /bin/busybox "$work/bin/busybox"
for applet in $(/bin/busybox --list); do
	[ "$applet" = busybox ] || ln -s busybox "$work/bin/$applet"
done
install -m 755 "$here/guest-init.sh" "$work/init"

modprobe -d "$kroot" -S "$abi" --show-depends -a "${mods[@]}" | awk '$1 == "insmod" { print $2 }' |
	awk '!seen[$0]++' | while read -r path; do
	name=$(basename "$path" .xz)
	xz -dc "$path" > "$work/lib/modules/$name"
	echo "$name" >> "$work/lib/modules/load-order"
done

mkdir -p "$(dirname "$out")"
# A name of this run's own: two VMs started at once may both build it.
(cd "$work" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "$out"
