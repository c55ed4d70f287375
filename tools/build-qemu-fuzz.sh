#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build-qemu-fuzz.sh - builds qemu-fuzz-x86_64, QEMU's libFuzzer binary, with the TPU card in it,
# under ASan and UBSan with clang, for tools/run-qemu-fuzz.sh. Its generic-fuzz target
# "generic-fuzz-tpu" (added to tests/qtest/fuzz/generic_fuzz_configs.h here) drives the card's
# BAR0 registers, MSI-X table and PCI config space with arbitrary accesses and fills whatever
# guest memory the card reads by DMA (ring entries, context tables, page tables, programs) with
# fuzzer-chosen patterns. The card runs with x-sync-worker=on and threads=1 (tpu.c), so that an
# input replays the same way every time. The card's own targets in tests/fuzz/qemu/ are built in
# too: "tpu-unplug" (tpu_unplug_fuzz.c) dispatches register accesses to a card after its
# hot-unplug, as a vCPU that looked the card up before the unplug does; "tpu-ici-peer"
# (tpu_ici_peer_fuzz.c) feeds a card's link to another process arbitrary bytes from its peer.
#
# Usage: tools/build-qemu-fuzz.sh LIBTPUENGINE_A
#   LIBTPUENGINE_A  the engine library built by clang for fuzzing (-DTPU_FUZZ=ON: instrumented
#                   for libFuzzer, ASan and UBSan), e.g. build/fuzz/qemu-device/engine/...
# Environment:
#   TPU_CACHE       cache directory (default $HOME/.cache/tpu-stack)
#   TPU_BUILD_JOBS  parallel compile jobs (default: number of CPUs)
#
# The tree comes from tools/qemu-tree.sh like tools/build-qemu.sh's, in a cache of its own:
#   $TPU_CACHE/qemu-fuzz/<key>/src     built in src/build; <key> hashes the tarball name, this
#                                      script, qemu-tree.sh and the configure flags
#   $TPU_CACHE/qemu-fuzz/current       -> the built qemu-fuzz-x86_64
# Only the fuzzer is built: x86_64-softmmu with the qtest accelerator alone (no TCG), no other
# features. Older trees are removed after a successful build.
#
# Progress goes to stderr; the last line on stdout is the path of the fuzz binary.
set -euo pipefail

configure_flags=(--target-list=x86_64-softmmu --without-default-features
	--disable-tcg --enable-kvm --enable-fuzzing --enable-asan --enable-ubsan
	--disable-download --disable-docs --disable-werror --disable-debug-info --disable-install-blobs
	--extra-cflags=-gline-tables-only)
# The card's generic-fuzz configuration: a small card, so that a reset between inputs is cheap;
# four queues and few contexts and TLB entries, so that inputs reach them.
fuzz_device="tpu,x-sync-worker=on,threads=1,mxu-rows=32,mxu-cols=32,ub-size=1M,acc-size=512K"
fuzz_device+=",num-queues=4,num-ctx=16,tlb-entries=64"

die() {
	echo "build-qemu-fuzz: $*" >&2
	exit 1
}
log() {
	echo "build-qemu-fuzz: $*" >&2
}

script=$(readlink -f "${BASH_SOURCE[0]}")
repo=$(dirname "$(dirname "$script")")
tree_lib=$repo/tools/qemu-tree.sh
# shellcheck source=tools/qemu-tree.sh
. "$tree_lib"
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
jobs=${TPU_BUILD_JOBS:-$(nproc)}

[ $# -eq 1 ] || die "usage: $0 LIBTPUENGINE_A (the engine built with -DTPU_FUZZ=ON)"
[ -f "$1" ] || die "engine library $1 does not exist: build it with \`make qemu-fuzz\`"
engine_lib=$(readlink -f "$1")
command -v clang >/dev/null || die "clang missing (run tools/setup-host.sh)"
command -v meson >/dev/null && dpkg --compare-versions "$(meson --version)" ge 1.5 ||
	die "QEMU 10 needs meson >= 1.5 (run tools/setup-host.sh)"
command -v ccache >/dev/null || die "ccache missing (run tools/setup-host.sh)"

qroot=$cache/qemu-fuzz
mkdir -p "$qroot"
exec 9>"$qroot/.lock"
flock 9

# ---- source tree (tools/qemu-tree.sh) and the fuzz target ----------------------------------
tarball=$(qemu_tree_tarball)
tree=$qroot/$(qemu_tree_key "$tarball" "$script" "${configure_flags[@]}")
src=$tree/src
qemu_tree_unpack "$tarball" "$tree"
# The engine is C++: its UBSan checks (vptr) need the sanitizers' C++ runtime at the C link.
qemu_tree_sync "$tree" "$engine_lib" \
	"system_ss.add(declare_dependency(link_args: ['-fsanitize-link-c++-runtime']))"

configs=$src/tests/qtest/fuzz/generic_fuzz_configs.h
if ! grep -q '\.name = "tpu"' "$configs"; then
	python3 - "$configs" "$fuzz_device" <<'PY' || die "could not add the tpu config to $configs"
import sys
path, device = sys.argv[1], sys.argv[2]
text = open(path).read()
end = "    }\n};\n"
if text.count(end) != 1:
    sys.exit("anchor not found once: the end of predefined_configs")
entry = ('    },{\n'
         '        .name = "tpu",\n'
         '        .args = "-machine q35 -nodefaults "\n'
         '        "-L /usr/share/seabios -L /usr/share/qemu -device %s",\n'
         '        .objects = "tpu*",\n'
         '    }\n};\n' % device)
open(path, "w").write(text.replace(end, entry))
PY
fi

# The card's own targets (tests/fuzz/qemu/*.c): "tpu-unplug", register accesses that reach the
# card after its hot-unplug, and "tpu-ici-peer", a link to another process fed arbitrary bytes.
fuzz_dir=$src/tests/qtest/fuzz
own_targets=""
for f in "$repo"/tests/fuzz/qemu/*.[ch]; do
	sync_file "$f" "$fuzz_dir/$(basename "$f")"
	[[ $f != *.c ]] || own_targets+="'$(basename "$f")', "
done
{
	sed '/# the TPU card.s targets$/d' "$fuzz_dir/meson.build"
	printf "specific_fuzz_ss.add(files(%s), declare_dependency(include_directories: %s)) %s\n" \
		"${own_targets%, }" "include_directories('$tree/tpu/include')" "# the TPU card's targets"
} >"$fuzz_dir/meson.build.new"
sync_file "$fuzz_dir/meson.build.new" "$fuzz_dir/meson.build"
rm -f "$fuzz_dir/meson.build.new"

# ---- configure (once per key) and build ----------------------------------------------------
# Debug information names the tree as ".", so that ccache, which hashes the directory of a -g
# compile after this mapping, hits for another key's tree too.
qemu_tree_configure "$tree" --cc="ccache clang" --cxx="ccache clang++" --python=/usr/bin/python3 \
	"${configure_flags[@]}" --extra-cflags="-fdebug-prefix-map=$tree=."
qemu_tree_build "$tree" "$qroot" qemu-fuzz-x86_64
