#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lays out tpu.ko's DKMS source tree in DEST: driver/'s sources, Kbuild, Makefile and dkms.conf,
# with the stack's include/ (tpu_hw.h, the uapi) copied into DEST/include, where dkms.conf's
# MAKE line points the build (TPU_INCLUDE). Used by tools/dkms-check.sh and by the tpu-dkms
# package (debian/rules), so both build the same tree.
# Usage: tools/stage-dkms-source.sh DEST
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
dest=$1
mkdir -p "$dest/include"
for f in "$src"/driver/*.c "$src"/driver/*.h; do
	# *.mod.c: left by a kernel build in driver/, not a source.
	[[ $f == *.mod.c ]] || cp "$f" "$dest/"
done
cp "$src"/driver/Kbuild "$src"/driver/Makefile "$src"/driver/dkms.conf "$dest/"
cp -r "$src"/include/. "$dest/include/"
