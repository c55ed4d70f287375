#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mmdebstrap essential hook of build-image.sh: before the kernel is installed, tells
# initramfs-tools to build a small initramfs holding only what mounts the root, virtio_blk and
# ext4 (MODULES=list): the root is /dev/vda, ext4, and the initramfs unpacks faster under TCG.
#   initramfs-setup.sh ROOT
set -euo pipefail
root=${1:?usage: initramfs-setup.sh ROOT}
mkdir -p "$root/etc/initramfs-tools/conf.d" "$root/usr/share/initramfs-tools/modules.d"
echo "MODULES=list" > "$root/etc/initramfs-tools/conf.d/tpu-server.conf"
printf '%s\n' virtio_blk ext4 > "$root/usr/share/initramfs-tools/modules.d/tpu-server"
