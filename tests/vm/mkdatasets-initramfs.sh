#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the test guest's initramfs with the data sets inside: the base initramfs (mkinitramfs.sh)
# followed by an uncompressed cpio archive of $TPU_CACHE/datasets/<name>/ at /datasets/<name>/
# (the kernel unpacks concatenated archives in turn). A file whose inflated twin is there is left
# out in its .gz form. The guest reads the data from memory instead of through 9p, which under
# TCG moves about 7 MB/s (Fashion-MNIST's 55 MB took seconds per process). Cached by the base
# initramfs and the data files' names, sizes and times; prints the initramfs path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
[ -d "$cache/datasets" ] || { echo "mkdatasets-initramfs: no data sets in $cache/datasets: run 'make deps'" >&2; exit 1; }
base=$("$here/mkinitramfs.sh")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
list=$work/list
: > "$list"
for entry in "$cache/datasets"/*; do
	name=$(basename "$entry")
	case $name in *_*) continue ;; esac # the unpacked packages behind the links
	dir=$(readlink -f "$entry")
	[ -d "$dir" ] || continue
	mkdir -p "$work/root/datasets/$name"
	for file in "$dir"/*; do
		[ -f "$file" ] || continue
		case $file in *.gz) [ ! -f "${file%.gz}" ] || continue ;; esac
		ln -s "$file" "$work/root/datasets/$name/$(basename "$file")"
		stat -L -c "$name %n %s %Y" "$file" >> "$list"
	done
done
key=$( (echo "$base"; cat "$list" "$0") | sha256sum | cut -c1-16)
out=$cache/initramfs/datasets-$key.cpio
if [ -f "$out" ]; then echo "$out"; exit 0; fi

# Zeros between the two archives: the kernel skips them, and an uncompressed archive must start
# at a multiple of 4 bytes. A name of this run's own: two VMs started at once may both build it.
{
	cat "$base"
	head -c $(((4 - $(stat -c %s "$base") % 4) % 4)) /dev/zero
	(cd "$work/root" && find . | cpio -o -H newc --quiet --dereference)
} > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "$out"
