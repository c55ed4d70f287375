#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build-qemu.sh - builds the QEMU that carries the TPU card: upstream QEMU 10.0.2, x86_64-softmmu
# only, with qemu-device/tpu*.c compiled into hw/misc/ and linked against the engine library.
#
# Usage: tools/build-qemu.sh [LIBTPUENGINE_A]
#   LIBTPUENGINE_A  the built engine library (default: $TPU_ENGINE_LIB, else the one
#                   `cmake --build build/host --target tpuengine` leaves in build/host)
# Environment:
#   TPU_CACHE       cache directory (default $HOME/.cache/tpu-stack)
#   TPU_BUILD_JOBS  parallel compile jobs (default: number of CPUs)
#
# Everything lives in the cache, never in the repository:
#   $TPU_CACHE/qemu-src/qemu_10.0.2+ds.orig.tar.xz   Debian's orig tarball (fetched if missing)
#   $TPU_CACHE/qemu/<key>/src                        the unpacked tree, built in src/build
#   $TPU_CACHE/qemu/<key>/tpu/{include,lib}          tpu_hw.h, tpu_engine.h, libtpuengine.a
#   $TPU_CACHE/qemu/current                          -> the built qemu-system-x86_64
#   $TPU_CACHE/ccache                                compiler cache shared by all trees
# and a copy of the binary in this checkout, build/qemu/qemu-system-x86_64, which the VM scripts
# run (tests/vm/qemu-cards.sh: tpu_qemu_binary): checkouts that share the cache (worktrees) share
# its tree, each build syncing its own device sources in, but each runs the QEMU of its own
# sources.
# The tree is prepared by tools/qemu-tree.sh, shared with tools/build-qemu-fuzz.sh.
# <key> hashes the tarball name, this script, qemu-tree.sh and the configure flags, so changing
# any of them builds a fresh tree (fast: ccache is warm); older trees are removed after a
# successful build.
# The device sources, headers and library are copied in only when they differ, so a run with
# nothing changed is a no-op for ninja and an edited tpu.c recompiles one file and relinks.
#
# Progress goes to stderr; the last line on stdout is the path of the checkout's copy. Run it with
# `-L /usr/share/seabios -L /usr/share/qemu` (packages seabios, qemu-system-data).
set -euo pipefail

configure_flags=(--target-list=x86_64-softmmu --without-default-features
	--enable-tcg --enable-kvm --enable-slirp --enable-virtfs --enable-attr
	--disable-download --disable-docs --disable-werror --disable-debug-info --disable-install-blobs)

die() {
	echo "build-qemu: $*" >&2
	exit 1
}
log() {
	echo "build-qemu: $*" >&2
}

script=$(readlink -f "${BASH_SOURCE[0]}")
repo=$(dirname "$(dirname "$script")")
tree_lib=$repo/tools/qemu-tree.sh
# shellcheck source=tools/qemu-tree.sh
. "$tree_lib"
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
engine_lib=${1:-${TPU_ENGINE_LIB:-$repo/build/host/qemu-device/engine/libtpuengine.a}}
jobs=${TPU_BUILD_JOBS:-$(nproc)}

[ -f "$engine_lib" ] ||
	die "engine library $engine_lib does not exist: build it with" \
		"\`cmake --build build/host --target tpuengine\` or pass its path"
engine_lib=$(readlink -f "$engine_lib")

command -v meson >/dev/null && dpkg --compare-versions "$(meson --version)" ge 1.5 ||
	die "QEMU 10 needs meson >= 1.5 (run tools/setup-host.sh)"
command -v ccache >/dev/null || die "ccache missing (run tools/setup-host.sh)"

qroot=$cache/qemu
mkdir -p "$qroot"
exec 9>"$qroot/.lock"
flock 9

# ---- source tree (tools/qemu-tree.sh), configure (once per key) and build ------------------
tarball=$(qemu_tree_tarball)
tree=$qroot/$(qemu_tree_key "$tarball" "$script" "${configure_flags[@]}")
qemu_tree_unpack "$tarball" "$tree"
qemu_tree_sync "$tree" "$engine_lib"
qemu_tree_configure "$tree" --cc="ccache cc" --cxx="ccache c++" --python=/usr/bin/python3 \
	"${configure_flags[@]}"
built=$(qemu_tree_build "$tree" "$qroot" qemu-system-x86_64)
copy=$repo/build/qemu/qemu-system-x86_64
mkdir -p "${copy%/*}"
cp "$(readlink -f "$built")" "$copy.new"
mv "$copy.new" "$copy"
echo "$copy"
