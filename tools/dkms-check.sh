#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds tpu.ko through DKMS (driver/dkms.conf) against the cached guest kernel's headers, in a
# private DKMS tree under build/dkms: nothing is added to /usr/src, /var/lib/dkms or
# /lib/modules. The guest kernel is not the host's, so its headers are passed with
# --kernelsourcedir. Prints the module DKMS built; exits non-zero if the build failed.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
root=$cache/kernel/current/root
kabi=$("$src/tools/guest-kabi.sh")
kdir=$root/usr/src/linux-headers-$kabi
[ -d "$kdir" ] || { echo "dkms-check: no guest kernel headers at $kdir: run 'make deps'" >&2; exit 2; }
command -v dkms >/dev/null || { echo "dkms-check: dkms not installed (package dkms)" >&2; exit 2; }
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/driver/dkms.conf")

work=$src/build/dkms
rm -rf "$work"
pkg=$work/source/tpu-$version
mkdir -p "$work/tree"
"$src/tools/stage-dkms-source.sh" "$pkg"

dkms=(dkms --dkmstree "$work/tree" --sourcetree "$work/source" -m tpu -v "$version")
"${dkms[@]}" add
"${dkms[@]}" build -k "$kabi" --kernelsourcedir "$kdir" || {
	echo "dkms-check: DKMS build failed; its log:" >&2
	cat "$work/tree/tpu/$version/build/make.log" >&2 || true
	exit 1
}
ko=$(find "$work/tree/tpu/$version/$kabi" -name 'tpu.ko*' | head -n1)
[ -n "$ko" ] || { echo "dkms-check: DKMS reported success but built no tpu.ko" >&2; exit 1; }
echo "dkms-check: DKMS built $ko for $kabi"
