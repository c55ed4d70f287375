# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154
#
# qemu-tree.sh - the QEMU source tree both QEMU builds start from, sourced by tools/build-qemu.sh
# (the VM's QEMU) and tools/build-qemu-fuzz.sh (the device fuzzer): Debian's orig tarball of
# upstream QEMU 10.0.2 unpacked and patched for our device (firmware blobs and pycotap dropped,
# tpu-ici in the QAPI schema, hw/misc/tpu/ hooked into the build), then the device sources,
# headers and engine library synced in. The caller defines die() and log() and sets
#   repo   the repository root
#   cache  $TPU_CACHE
# Functions:
#   qemu_tree_tarball                  prints the tarball's path, fetching it with apt if missing
#   qemu_tree_key TARBALL SCRIPT CONFIGURE_FLAG...
#                                      prints the key of a tree: a hash of the tarball's name,
#                                      the configure flags, the building script and this file
#   qemu_tree_unpack TARBALL TREE      unpacks and patches TREE/src unless TREE exists
#   qemu_tree_sync TREE ENGINE_LIB [MESON_LINE...]
#                                      syncs the device into TREE/src/hw/misc/tpu; extra lines go
#                                      to its generated meson.build
#   qemu_tree_configure TREE CONFIGURE_ARG...
#                                      configures TREE/src/build once (ccache in $cache/ccache)
#   qemu_tree_build TREE QROOT TARGET  builds TARGET with ninja, points QROOT/current at it,
#                                      removes QROOT's other trees and prints QROOT/current
# Files are copied only when they differ, so ninja rebuilds only what changed. The caller also
# sets jobs (ninja's -j).

qemu_upstream=10.0.2

# Copies $1 to $2 only if the contents differ, keeping the mtime ninja has seen otherwise.
sync_file() {
	cmp -s "$1" "$2" || cp "$1" "$2"
}

qemu_tree_tarball() {
	local srcdir=$cache/qemu-src
	local tarball=$srcdir/qemu_$qemu_upstream+ds.orig.tar.xz
	local pattern deb_version

	mkdir -p "$srcdir"
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
	echo "$tarball"
}

qemu_tree_key() {
	local tarball=$1 script=$2
	shift 2
	{
		basename "$tarball"
		printf '%s\n' "$@"
		cat "$script" "${BASH_SOURCE[0]}"
	} | sha256sum | cut -c1-16
}

qemu_tree_unpack() {
	local tarball=$1 tree=$2
	local partial=$tree.partial

	[ -d "$tree" ] && return
	log "unpacking $(basename "$tarball") into $tree"
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
# @y-link-gbps: a torus's y links' bandwidth in Gbit/s (0: link-gbps)
#
# @y-hop-ns: a torus's y links' hop latency in nanoseconds (0: hop-ns)
#
# Since: 10.0
##
{ 'struct': 'TpuIciProperties',
  'data': { '*topology': 'str',
            '*dims': 'str',
            '*preset': 'str',
            '*link-gbps': 'uint32',
            '*hop-ns': 'uint32',
            '*credits': 'uint32',
            '*y-link-gbps': 'uint32',
            '*y-hop-ns': 'uint32' } }

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
	printf '\n# TPU card (tools/qemu-tree.sh)\nsubdir('"'"'tpu'"'"')\n' \
		>>"$partial/src/hw/misc/meson.build"
	mv "$partial" "$tree"
}

qemu_tree_sync() {
	local tree=$1 engine_lib=$2
	shift 2
	local devdir=$tree/src/hw/misc/tpu
	local hw_header=$repo/include/tpu_hw.h
	local engine_header=$repo/qemu-device/engine/include/tpu_engine.h
	local names=() f c_files

	[ -f "$hw_header" ] && [ -f "$engine_header" ] || die "repository headers missing under $repo"
	[ -f "$repo/qemu-device/tpu.c" ] || die "no device sources in $repo/qemu-device"
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

	c_files=$(for f in "$repo"/qemu-device/tpu*.c; do printf "'%s', " "$(basename "$f")"; done)
	{
		cat <<MESON
# Generated by tools/qemu-tree.sh: the TPU card and the engine library it links.
tpu_engine_dep = declare_dependency(
  dependencies: [cc.find_library('tpuengine', dirs: ['$tree/tpu/lib'], static: true),
                 cc.find_library('stdc++')],
  include_directories: include_directories('$tree/tpu/include'))
system_ss.add(when: 'CONFIG_PCI', if_true: [files(${c_files%, }), tpu_engine_dep])
MESON
		[ $# -eq 0 ] || printf '%s\n' "$@"
	} >"$devdir/meson.build.new"
	sync_file "$devdir/meson.build.new" "$devdir/meson.build"
	rm -f "$devdir/meson.build.new"
}

qemu_tree_configure() {
	local tree=$1
	shift
	local build=$tree/src/build

	export CCACHE_DIR=$cache/ccache
	export CCACHE_BASEDIR=$tree
	[ -f "$build/.configured" ] && return
	log "configuring (log: $tree/configure.log)"
	rm -rf "$build"
	mkdir -p "$build"
	if ! (cd "$build" && ../configure "$@") >"$tree/configure.log" 2>&1; then
		tail -n 30 "$tree/configure.log" >&2
		die "configure failed (full log: $tree/configure.log)"
	fi
	touch "$build/.configured"
}

qemu_tree_build() {
	local tree=$1 qroot=$2 target=$3
	local build=$tree/src/build old

	log "building $target in $build"
	ninja -C "$build" -j "$jobs" "$target" >&2
	[ -x "$build/$target" ] || die "no $build/$target after the build"
	ln -sfn "$build/$target" "$qroot/current.new"
	mv -T "$qroot/current.new" "$qroot/current"
	for old in "$qroot"/*/; do
		old=${old%/}
		[ "$old" = "$tree" ] || rm -rf "$old"
	done
	echo "$qroot/current"
}
