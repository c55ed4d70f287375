#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the server image: a Debian 12 root made by mmdebstrap from deb.debian.org (bookworm,
# bookworm-updates, bookworm-security, and bookworm-backports for the guest kernel) with the
# packages of packages.list, the stack's packages (stack-packages.list) through apt from the local
# repository SERVER_REPO, configured by configure-root.sh and packed as an ext4 disk image by
# mke2fs -d (no loop mount). Cached in $TPU_CACHE/server-image/<key>/ keyed by a hash of its
# inputs; prints that directory on stdout (progress on stderr). The host's SSH key for user tpu
# is made once, $TPU_CACHE/server-image/ssh/id_ed25519. The image directory holds:
#   rootfs.ext4  the root file system (sparse; boot it through a qcow2 overlay: boot-server.sh)
#   vmlinuz, initrd.img  the guest kernel and its initramfs (virtio_blk and ext4 in it)
#
#   build-image.sh [--repo DIR] [--dev-driver]
# --repo DIR     the local apt repository (flat: Packages, Release, *.deb; default: $SERVER_REPO
#                or build/packages). Without a Packages file there the stack's packages are
#                skipped, with a message.
# --dev-driver   instead of the packages (no repository): driver/tpu.ko, its udev
#                rule and build/guest's tpu-smi put into the root by dev-driver.sh (an error with
#                a repository present).
# SERVER_IMAGE_SIZE: the ext4 file system's size (default 8G; the file is sparse).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
repo=${SERVER_REPO:-$src/build/packages}
size=${SERVER_IMAGE_SIZE:-8G}
dev_driver=0
while [ $# -gt 0 ]; do
	case "$1" in
	--repo) repo=$2; shift 2 ;;
	--dev-driver) dev_driver=1; shift ;;
	*) echo "build-image: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
	esac
done
say() { echo "build-image: $*" >&2; }
for tool in mmdebstrap mke2fs ssh-keygen; do
	command -v "$tool" >/dev/null || { say "no $tool: run tools/setup-host.sh"; exit 2; }
done
abi=$(readlink "$cache/kernel/current" || true)
[ -n "$abi" ] && [ -f "$cache/kernel/$abi/.done" ] ||
	{ say "no guest kernel in $cache/kernel/current: run 'make deps'"; exit 2; }
[[ "$size" =~ ^[1-9][0-9]*[MG]$ ]] || { say "SERVER_IMAGE_SIZE wants e.g. 8G, not '$size'"; exit 2; }

# The stack's packages: from the repository when it has an index, else skipped.
stack=()
if [ -f "$repo/Packages" ]; then
	repo=$(cd "$repo" && pwd)
	[ $dev_driver -eq 0 ] || { say "--dev-driver with a repository at $repo: use one or the other"; exit 2; }
	while read -r pkg; do
		pkg=${pkg//@KABI@/$abi}
		grep -qx "Package: $pkg" "$repo/Packages" ||
			{ say "$pkg (stack-packages.list) is not in $repo/Packages"; exit 2; }
		stack+=("$pkg")
	done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$here/stack-packages.list")
	repo_id=$(sha256sum "$repo/Packages" | cut -c1-64)
else
	say "no local repository at $repo (no Packages file; 'make packages' makes it):" \
	    "the stack's packages are not installed"
	repo_id=none
fi
dev_files=()
if [ $dev_driver -eq 1 ]; then
	dev_files=("$src/driver/tpu.ko" "$src/driver/70-tpu.rules" "$src/build/guest/tools/tpu-smi/tpu-smi")
	for f in "${dev_files[@]}"; do
		[ -f "$f" ] || { say "--dev-driver needs $f: run 'make module guest'"; exit 2; }
	done
	modinfo -F vermagic "$src/driver/tpu.ko" | grep -q "^$abi " ||
		{ say "driver/tpu.ko is not built for $abi: run 'make module'"; exit 2; }
fi

# The host's SSH key, made once; its public half goes into the image (and so into the key).
keydir=$cache/server-image/ssh
if [ ! -f "$keydir/id_ed25519" ]; then
	mkdir -p "$keydir"
	rm -f "$keydir/new" "$keydir/new.pub"
	ssh-keygen -q -t ed25519 -N '' -C tpu-stack-server -f "$keydir/new"
	mv "$keydir/new.pub" "$keydir/id_ed25519.pub" && mv "$keydir/new" "$keydir/id_ed25519"
fi

# The key: what makes the image (not the scripts that boot it).
key=$( {
	cd "$here" && sha256sum build-image.sh initramfs-setup.sh dev-driver.sh local-repo.sh \
		configure-root.sh \
		packages.list stack-packages.list
	echo "abi $abi repo $repo_id size $size"
	cat "$keydir/id_ed25519.pub"
	[ ${#dev_files[@]} -eq 0 ] || sha256sum "${dev_files[@]}" | cut -c1-64
} | sha256sum | cut -c1-16)
out=$cache/server-image/$key
# One build at a time (two would only share the cores), and none of the same key twice.
mkdir -p "$cache/server-image"
exec 9>"$cache/server-image/.lock"
flock 9
if [ -f "$out/.done" ]; then
	say "cached in $out"
	echo "$out"
	exit 0
fi

start=$(date +%s)
work=$out.tmp
rm -rf "$work" "$out"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
pkgs=$(grep -v -e '^#' -e '^[[:space:]]*$' "$here/packages.list" | paste -sd, -)
pkgs+=",linux-image-$abi"
[ ${#stack[@]} -eq 0 ] || pkgs+=,$(IFS=,; echo "${stack[*]}")
mirror=http://deb.debian.org/debian
sources=("deb $mirror bookworm main" "deb $mirror bookworm-updates main"
         "deb http://deb.debian.org/debian-security bookworm-security main"
         "deb $mirror bookworm-backports main")
[ "$repo_id" = none ] || sources+=("deb [trusted=yes] file://$repo ./")
hooks=(--essential-hook="'$here/initramfs-setup.sh' \"\$1\"")
# The local repository's .debs seen inside the chroot while apt installs them, then a copy of it
# kept in the image (local-repo.sh).
[ "$repo_id" = none ] || hooks+=(--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount
	--customize-hook="'$here/local-repo.sh' \"\$1\" '$repo'")
[ $dev_driver -eq 0 ] ||
	hooks+=(--customize-hook="'$here/dev-driver.sh' \"\$1\" '$abi' '$src'")
hooks+=(--customize-hook="'$here/configure-root.sh' \"\$1\" '$keydir/id_ed25519.pub'")
say "mmdebstrap of bookworm with linux-image-$abi${stack:+ and ${stack[*]}} into $work/root"
# Documentation and translations left out (copyright files kept): a smaller, faster image.
mmdebstrap --mode=root --variant=apt --format=directory --include="$pkgs" \
	--aptopt='Acquire::Retries "3"' --dpkgopt=force-unsafe-io \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	"${hooks[@]}" bookworm "$work/root" "${sources[@]}" >&2
boot=$work/root/boot
[ -f "$boot/vmlinuz-$abi" ] && [ -f "$boot/initrd.img-$abi" ] ||
	{ say "the root has no /boot/vmlinuz-$abi or initrd.img-$abi"; exit 1; }
cp "$boot/vmlinuz-$abi" "$work/vmlinuz"
cp "$boot/initrd.img-$abi" "$work/initrd.img"
say "packing $(du -sh "$work/root" | cut -f1) into a $size ext4 image"
# mke2fs -d names the file it creates on stdout, which carries only the result here.
mke2fs -q -t ext4 -L tpu-server -d "$work/root" "$work/rootfs.ext4" "$size" >&2
rm -rf "$work/root"
touch "$work/.done"
mv "$work" "$out"
say "built in $(($(date +%s) - start)) s: $out ($(du -sh "$out/rootfs.ext4" | cut -f1) used)"
echo "$out"
