#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copies the host's shared libraries that BINARY needs, and the dynamic loader, into SYSROOT
# (a folder of the guest build tree, which the VM sees at the same path). The guest has no
# libraries of its own and Debian ships cpp-httplib only as a shared library, so the guest
# binaries that use it are linked with SYSROOT's loader as their interpreter and SYSROOT as
# their run path (CMakeLists.txt, tpu_guest_dynamic).
#   guest-sysroot.sh BINARY SYSROOT
set -euo pipefail
bin=$1
root=$2
mkdir -p "$root"
loader=/lib64/ld-linux-x86-64.so.2
cp -L "$loader" "$root/ld-linux-x86-64.so.2.tmp" && mv "$root/ld-linux-x86-64.so.2.tmp" "$root/ld-linux-x86-64.so.2"
"$loader" --list "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
	name=$(basename "$name")
	[ "$path" -ef "$root/$name" ] || { cp -L "$path" "$root/$name.tmp" && mv "$root/$name.tmp" "$root/$name"; }
done
