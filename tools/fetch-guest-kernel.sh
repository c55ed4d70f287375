#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetches the guest kernel (image, modules, headers, kbuild) from bookworm-backports and unpacks it
# into the cache, never touching the host's /boot. Prints nothing but progress; the result is
#   $TPU_CACHE/kernel/<abi>/{root/,vmlinuz,KDIR}    (root/ holds lib/modules/<abi>)
# and $TPU_CACHE/kernel/current -> <abi>. The ABI is resolved from the archive each run.
set -euo pipefail
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
mkdir -p "$cache/kernel"

abi=$(apt-cache depends -t bookworm-backports linux-image-amd64 2>/dev/null |
      sed -n 's/.*Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' | sort -V | tail -n1)
if [ -z "$abi" ]; then
	echo "fetch-guest-kernel: cannot resolve the bookworm-backports kernel; run tools/setup-host.sh" >&2
	exit 1
fi
dir=$cache/kernel/$abi
if [ -f "$dir/.done" ]; then
	ln -sfn "$abi" "$cache/kernel/current"
	echo "fetch-guest-kernel: $abi cached in $dir"
	exit 0
fi

echo "fetch-guest-kernel: fetching $abi"
rm -rf "$dir" && mkdir -p "$dir/debs" "$dir/root"
common=$(apt-cache depends -t bookworm-backports "linux-headers-$abi" |
         sed -n 's/.*Depends: \(linux-headers-[^ ]*-common\)$/\1/p' | head -n1)
kbuild=$(apt-cache depends -t bookworm-backports "linux-headers-$abi" |
         sed -n 's/.*Depends: \(linux-kbuild-[^ ]*\)$/\1/p' | head -n1)
(cd "$dir/debs" && apt-get download -q "linux-image-$abi" "linux-headers-$abi" "$common" "$kbuild")
for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$dir/root"; done

# The arch headers' Makefile includes the -common tree by absolute path; point it at ours.
kdir=$dir/root/usr/src/linux-headers-$abi
sed -i "s|/usr/src/|$dir/root/usr/src/|g" "$kdir/Makefile"
# The kbuild scripts are symlinked to /usr/lib/linux-kbuild-*; repoint those links too.
find "$dir/root/usr/src" -maxdepth 2 -type l | while read -r l; do
	t=$(readlink "$l")
	case "$t" in /*) ln -sfn "$dir/root$t" "$l" ;; esac
done
depmod -b "$dir/root" "$abi"
cp "$dir/root/boot/vmlinuz-$abi" "$dir/vmlinuz"
rm -rf "$dir/debs"
touch "$dir/.done"
ln -sfn "$abi" "$cache/kernel/current"
echo "fetch-guest-kernel: $abi ready in $dir"
