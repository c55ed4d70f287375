#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copies the host's shared libraries that BINARY needs, and the dynamic loader, into SYSROOT
# (a folder of the guest build tree, which the VM sees at the same path). The guest has no
# libraries of its own and Debian ships cpp-httplib and libmicrohttpd only as shared libraries,
# so the guest binaries that use them are linked with SYSROOT's loader as their interpreter and SYSROOT as
# their run path (CMakeLists.txt, tpu_guest_dynamic).
#   guest-sysroot.sh BINARY SYSROOT
set -euo pipefail
bin=$1
root=$2
mkdir -p "$root"
# Each file is copied under a name of this process's own, then renamed into place: several
# binaries link (and run this) at once in a parallel build.
install_as() {
	cp -L "$1" "$root/$2.$$.tmp" && mv -f "$root/$2.$$.tmp" "$root/$2"
}
loader=/lib64/ld-linux-x86-64.so.2
install_as "$loader" ld-linux-x86-64.so.2
"$loader" --list "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
	name=$(basename "$name")
	[ "$path" -ef "$root/$name" ] || install_as "$path" "$name"
done
