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
# <key> hashes the tarball name, this script and the configure flags, so changing any of them
# builds a fresh tree (fast: ccache is warm); older trees are removed after a successful build.
# The device sources, headers and library are copied in only when they differ, so a run with
# nothing changed is a no-op for ninja and an edited tpu.c recompiles one file and relinks.
#
# Progress goes to stderr; the last line on stdout is the path of the QEMU binary. Run it with
# `-L /usr/share/seabios -L /usr/share/qemu` (packages seabios, qemu-system-data).
set -euo pipefail

qemu_upstream=10.0.2
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

# Copies $1 to $2 only if the contents differ, keeping the mtime ninja has seen otherwise.
sync_file() {
	cmp -s "$1" "$2" || cp "$1" "$2"
}

script=$(readlink -f "${BASH_SOURCE[0]}")
repo=$(dirname "$(dirname "$script")")
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
engine_lib=${1:-${TPU_ENGINE_LIB:-$repo/build/host/qemu-device/engine/libtpuengine.a}}
jobs=${TPU_BUILD_JOBS:-$(nproc)}

[ -f "$engine_lib" ] ||
	die "engine library $engine_lib does not exist: build it with" \
		"\`cmake --build build/host --target tpuengine\` or pass its path"
engine_lib=$(readlink -f "$engine_lib")

hw_header=$repo/include/tpu_hw.h
engine_header=$repo/qemu-device/engine/include/tpu_engine.h
device_sources=("$repo"/qemu-device/tpu*.c)
[ -f "$hw_header" ] && [ -f "$engine_header" ] || die "repository headers missing under $repo"
[ -f "${device_sources[0]}" ] || die "no device sources in $repo/qemu-device"
command -v meson >/dev/null && dpkg --compare-versions "$(meson --version)" ge 1.5 ||
	die "QEMU 10 needs meson >= 1.5 (run tools/setup-host.sh)"
command -v ccache >/dev/null || die "ccache missing (run tools/setup-host.sh)"

srcdir=$cache/qemu-src
qroot=$cache/qemu
mkdir -p "$srcdir" "$qroot"
exec 9>"$qroot/.lock"
flock 9

# ---- source tarball ------------------------------------------------------------------------
tarball=$srcdir/qemu_$qemu_upstream+ds.orig.tar.xz
if [ ! -f "$tarball" ]; then
	pattern="^1:${qemu_upstream//./\\.}\\+ds-"
	deb_version=$(apt-cache showsrc qemu | sed -n 's/^Version: //p' | grep -E "$pattern" |
		sort -V | tail -n1)
	[ -n "$deb_version" ] ||
		die "no QEMU $qemu_upstream source package in apt (deb-src for bookworm-backports" \
			"is configured by tools/setup-host.sh; run apt-get update)"
	log "fetching the orig tarball of qemu=$deb_version"
	(cd "$srcdir" && apt-get source --download-only --tar-only "qemu=$deb_version" >&2)
	[ -f "$tarball" ] || die "apt-get source did not produce $tarball"
fi

key=$({
	basename "$tarball"
	printf '%s\n' "${configure_flags[@]}"
	cat "$script"
} | sha256sum | cut -c1-16)
tree=$qroot/$key
src=$tree/src
build=$src/build

# ---- unpacked tree (once per key) ----------------------------------------------------------
if [ ! -d "$tree" ]; then
	log "unpacking $(basename "$tarball") into $tree"
	partial=$tree.partial
	rm -rf "$partial"
	mkdir -p "$partial/src" "$partial/tpu/include" "$partial/tpu/lib"
	tar -xJf "$tarball" -C "$partial/src" --strip-components=1
	# The +ds tarball has no firmware blobs to unpack.
	sed -i 's/^\(\s*unpack_edk2_blobs = \)bzip2.found()$/\1false/' "$partial/src/meson.build"
	grep -q '^\s*unpack_edk2_blobs = false$' "$partial/src/meson.build" &&
		! grep -q 'unpack_edk2_blobs = bzip2' "$partial/src/meson.build" ||
		die "could not disable unpack_edk2_blobs in meson.build"
	# Its python/wheels lacks pycotap, which only QEMU's test runner needs.
	sed -i '/^pycotap = /d' "$partial/src/pythondeps.toml"
	! grep -q pycotap "$partial/src/pythondeps.toml" || die "could not drop pycotap"
	# -object tpu-ici (qemu-device/tpu-ici.c): -object checks its type and properties against
	# the QAPI schema, so the type joins ObjectType and ObjectOptions in qapi/qom.json.
	python3 - "$partial/src/qapi/qom.json" <<'PY' || die "could not add tpu-ici to qapi/qom.json"
import sys
path = sys.argv[1]
text = open(path).read()
struct = '''##
# @TpuIciProperties:
#
# Properties for tpu-ici objects: the inter-chip interconnect of the
# TPU cards (-device tpu,ici=ID; docs/hardware.md of tpu-stack).
#
# @topology: "ring" (default) or "torus2d"
#
# @dims: cards, "N" for a ring or "XxY" for a 2-D torus
#
# @preset: "v4" or "v5e", the link figures of Cloud TPU v4 and v5e
#
# @link-gbps: bandwidth of each link direction in Gbit/s
#
# @hop-ns: latency of one hop in nanoseconds
#
# @credits: packets of 4 KiB a port's receive buffer holds
#
# Since: 10.0
##
{ 'struct': 'TpuIciProperties',
  'data': { '*topology': 'str',
            '*dims': 'str',
            '*preset': 'str',
            '*link-gbps': 'uint32',
            '*hop-ns': 'uint32',
            '*credits': 'uint32' } }

'''
anchors = [("##\n# @ObjectType:", struct + "##\n# @ObjectType:"),
           ("    'throttle-group',\n", "    'throttle-group',\n    'tpu-ici',\n"),
           ("      'throttle-group':", "      'tpu-ici':                    'TpuIciProperties',\n"
            "      'throttle-group':")]
for old, new in anchors:
    if text.count(old) != 1:
        sys.exit("anchor not found once: " + old)
    text = text.replace(old, new)
open(path, "w").write(text)
PY
	mkdir "$partial/src/hw/misc/tpu"
	printf '\n# TPU card (tools/build-qemu.sh)\nsubdir('"'"'tpu'"'"')\n' \
		>>"$partial/src/hw/misc/meson.build"
	mv "$partial" "$tree"
fi

# ---- our sources, headers and engine library -----------------------------------------------
devdir=$src/hw/misc/tpu
names=()
for f in "$repo"/qemu-device/tpu*.c "$repo"/qemu-device/tpu*.h; do
	[ -f "$f" ] || continue
	sync_file "$f" "$devdir/$(basename "$f")"
	names+=("$(basename "$f")")
done
for f in "$devdir"/tpu*.[ch]; do
	[ -f "$f" ] || continue
	[[ " ${names[*]} " == *" $(basename "$f") "* ]] || rm -f "$f"
done
sync_file "$hw_header" "$tree/tpu/include/tpu_hw.h"
sync_file "$engine_header" "$tree/tpu/include/tpu_engine.h"
sync_file "$engine_lib" "$tree/tpu/lib/libtpuengine.a"

c_files=$(for f in "${device_sources[@]}"; do printf "'%s', " "$(basename "$f")"; done)
cat >"$devdir/meson.build.new" <<EOF
# Generated by tools/build-qemu.sh: the TPU card and the engine library it links.
tpu_engine_dep = declare_dependency(
  dependencies: [cc.find_library('tpuengine', dirs: ['$tree/tpu/lib'], static: true),
                 cc.find_library('stdc++')],
  include_directories: include_directories('$tree/tpu/include'))
system_ss.add(when: 'CONFIG_PCI', if_true: [files(${c_files%, }), tpu_engine_dep])
EOF
sync_file "$devdir/meson.build.new" "$devdir/meson.build"
rm -f "$devdir/meson.build.new"

# ---- configure (once per key) and build ----------------------------------------------------
export CCACHE_DIR=$cache/ccache
export CCACHE_BASEDIR=$tree
if [ ! -f "$build/.configured" ]; then
	log "configuring (log: $tree/configure.log)"
	rm -rf "$build"
	mkdir -p "$build"
	if ! (cd "$build" && ../configure --cc="ccache cc" --cxx="ccache c++" \
		--python=/usr/bin/python3 "${configure_flags[@]}") >"$tree/configure.log" 2>&1; then
		tail -n 30 "$tree/configure.log" >&2
		die "configure failed (full log: $tree/configure.log)"
	fi
	touch "$build/.configured"
fi

log "building qemu-system-x86_64 in $build"
ninja -C "$build" -j "$jobs" qemu-system-x86_64 >&2
binary=$build/qemu-system-x86_64
[ -x "$binary" ] || die "no $binary after the build"

ln -sfn "$binary" "$qroot/current.new"
mv -T "$qroot/current.new" "$qroot/current"
for old in "$qroot"/*/; do
	old=${old%/}
	[ "$old" = "$tree" ] || rm -rf "$old"
done
echo "$qroot/current"
