#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the server image in two layers, each cached in $TPU_CACHE/server-image/ keyed by a hash of
# its inputs, and prints the image's directory on stdout (progress on stderr):
#   base-<key>/root  a Debian 12 root made by mmdebstrap (build-base.sh) with the packages of
#       packages.list, the kernel, and what the stack's packages need from Debian
#       (stack-depends.py); it changes only when those do
#   <key>/   a copy of the base with the stack's packages (stack-packages.list) installed by
#       apt-get from the local repository SERVER_REPO (install-stack.sh), configured by
#       configure-root.sh and packed as an ext4 disk image by mke2fs -d (no loop mount): a new
#       build of the packages costs this layer only. It holds
#         rootfs.ext4  the root file system (sparse; boot it through a qcow2 overlay: boot-server.sh)
#         vmlinuz, initrd.img  the guest kernel and its initramfs (virtio_blk and ext4 in it)
# The newest 6 images and 2 bases are kept; older ones are removed. The host's SSH key for user
# tpu is made once, $TPU_CACHE/server-image/ssh/id_ed25519.
#
#   build-image.sh [--repo DIR] [--dev-driver]
# --repo DIR     the local apt repository (flat: Packages, Release, *.deb; default: $SERVER_REPO
#                or build/packages). Without a Packages file there the stack's packages are
#                skipped, with a message.
# --dev-driver   instead of the packages (no repository): driver/tpu.ko, its udev
#                rule, build/guest's tpu-smi and (where built) its pod programs put into the root
#                by dev-driver.sh (an error with a repository present).
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
	# The pod's programs (tpu-pod-tools' in a packaged image) where the guest tree has them.
	for f in "$src"/build/guest/tools/pod/tpu-{pod-allreduce,train-mpi}; do
		[ -f "$f" ] && dev_files+=("$f")
	done
fi

# The host's SSH key, made once; its public half goes into the image (and so into the key).
keydir=$cache/server-image/ssh
if [ ! -f "$keydir/id_ed25519" ]; then
	mkdir -p "$keydir"
	rm -f "$keydir/new" "$keydir/new.pub"
	ssh-keygen -q -t ed25519 -N '' -C tpu-stack-server -f "$keydir/new"
	mv "$keydir/new.pub" "$keydir/id_ed25519.pub" && mv "$keydir/new" "$keydir/id_ed25519"
fi

# One build at a time (two would only share the cores), and none of the same key twice.
mkdir -p "$cache/server-image"
exec 9>"$cache/server-image/.lock"
flock 9

# ---- the base: Debian's packages ---------------------------------------------------------------
deps=()
if [ ${#stack[@]} -gt 0 ]; then
	needed=$("$here/stack-depends.py" "$repo/Packages" "${stack[@]}")
	mapfile -t deps <<<"$needed"
fi
pkgs=$(grep -v -e '^#' -e '^[[:space:]]*$' "$here/packages.list" | paste -sd, -)
pkgs+=",linux-image-$abi"
[ ${#deps[@]} -eq 0 ] || pkgs+=,$(IFS=,; echo "${deps[*]}")
base=$("$here/build-base.sh" "$pkgs")
base_key=$(basename "$(dirname "$base")")

# ---- the image: the stack on a copy of the base ------------------------------------------------
key=$( {
	cd "$here" && sha256sum build-image.sh install-stack.sh with-mounts.sh dev-driver.sh \
		configure-root.sh stack-packages.list
	echo "base $base_key repo $repo_id size $size"
	cat "$keydir/id_ed25519.pub"
	[ ${#dev_files[@]} -eq 0 ] || sha256sum "${dev_files[@]}" | cut -c1-64
} | sha256sum | cut -c1-16)
out=$cache/server-image/$key
if [ -f "$out/.done" ]; then
	touch "$out/.done"
	say "cached in $out"
	echo "$out"
	exit 0
fi
start=$(date +%s)
work=$out.tmp
rm -rf "$work" "$out"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
cp -a "$base" "$work/root"
if [ ${#stack[@]} -gt 0 ]; then
	say "installing ${stack[*]} from $repo"
	"$here/with-mounts.sh" "$work/root" "$here/install-stack.sh" "$work/root" "$repo" "${stack[@]}"
fi
[ $dev_driver -eq 0 ] || "$here/dev-driver.sh" "$work/root" "$abi" "$src"
"$here/with-mounts.sh" "$work/root" "$here/configure-root.sh" "$work/root" "$keydir/id_ed25519.pub" >&2
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
trap - EXIT
say "built in $(($(date +%s) - start)) s: $out ($(du -sh "$out/rootfs.ext4" | cut -f1) used)"

# ---- the cache: the newest images and bases kept -------------------------------------------------
# prune PATTERN KEEP: removes all but the KEEP most recently used (.done's time) of the layers.
prune() {
	ls -1dt "$cache"/server-image/$1/.done 2>/dev/null | tail -n +$(($2 + 1)) | while read -r done; do
		say "removing the old layer ${done%/.done}"
		rm -rf "${done%/.done}"
	done
}
prune '[0-9a-f]*[0-9a-f]' 6
prune 'base-*' 2
echo "$out"
