#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-image.sh's first layer, the base root: mmdebstrap (variant apt) of bookworm from
# deb.debian.org (bookworm, bookworm-updates, bookworm-security, and bookworm-backports for the
# guest kernel) with PACKAGES (comma-separated), the initramfs set up by initramfs-setup.sh,
# documentation and translations left out (copyright files kept). Cached in
# $TPU_CACHE/server-image/base-<key>/root, keyed by this script, initramfs-setup.sh and PACKAGES;
# prints that directory (progress on stderr). The caller holds the cache's lock.
#   build-base.sh PACKAGES
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
pkgs=${1:?usage: build-base.sh PACKAGES}
say() { echo "build-base: $*" >&2; }
key=$( {
	cd "$here" && sha256sum build-base.sh initramfs-setup.sh
	echo "packages $pkgs"
} | sha256sum | cut -c1-16)
base=$cache/server-image/base-$key
if [ -f "$base/.done" ]; then
	touch "$base/.done"
	echo "$base/root"
	exit 0
fi
start=$(date +%s)
rm -rf "$base" "$base.tmp"
mkdir -p "$base.tmp"
trap 'rm -rf "$base.tmp"' EXIT
mirror=http://deb.debian.org/debian
say "base-$key: mmdebstrap of bookworm with $(tr -cd , <<<"$pkgs" | wc -c) packages and more"
mmdebstrap --mode=root --variant=apt --format=directory --include="$pkgs" \
	--aptopt='Acquire::Retries "3"' --dpkgopt=force-unsafe-io \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--essential-hook="'$here/initramfs-setup.sh' \"\$1\"" \
	bookworm "$base.tmp/root" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
	"deb http://deb.debian.org/debian-security bookworm-security main" \
	"deb $mirror bookworm-backports main" >&2
touch "$base.tmp/.done"
mv "$base.tmp" "$base"
trap - EXIT
say "built in $(($(date +%s) - start)) s: $base"
echo "$base/root"
