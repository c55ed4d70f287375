#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Unpacks the kernel's checkpatch.pl (with spelling.txt and const_structs.checkpatch) from
# bookworm-backports' linux-source-6.12 package into $TPU_CACHE/kernel/checkpatch/, where
# driver/Makefile's `check` target looks for it. The headers packages do not ship it.
set -euo pipefail
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
dest=$cache/kernel/checkpatch
[ -x "$dest/checkpatch.pl" ] && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pkg=$(apt-cache depends -t bookworm-backports linux-source 2>/dev/null |
      sed -n 's/.*Depends: \(linux-source-[0-9.]*\)$/\1/p' | head -n1)
pkg=${pkg:-linux-source-6.12}
echo "fetch-checkpatch: unpacking scripts/ from $pkg"
(cd "$work" && apt-get download -q -t bookworm-backports "$pkg" >/dev/null 2>&1 ||
	apt-get download -q "$pkg" >/dev/null)
dpkg -x "$work"/*.deb "$work/root"
tarball=$(find "$work/root/usr/src" -name 'linux-source-*.tar.*' | head -n1)
tar -xaf "$tarball" -C "$work" --wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
	'*/scripts/const_structs.checkpatch'
# Assembled beside the destination and moved into place whole, so an interrupted run leaves
# nothing that looks complete.
rm -rf "$dest.partial" && mkdir -p "$dest.partial"
cp "$work"/linux-source-*/scripts/{checkpatch.pl,spelling.txt,const_structs.checkpatch} "$dest.partial/"
rm -rf "$dest" && mv "$dest.partial" "$dest"
echo "fetch-checkpatch: $dest/checkpatch.pl"
