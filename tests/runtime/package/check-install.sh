#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs libtpurt from a host build tree into a fresh prefix and builds the example outside
# the repository against it both ways: pkg-config (shared, and -static) and find_package(tpurt)
# (tpurt::tpurt, tpurt::tpurt_static). Checks the soname, that the shared examples load the
# installed library, that the installed headers include nothing from the repository, and runs
# every example: on a machine without the card each must explain that (exit 3), with a card
# compute exactly (exit 0). Leaves the static examples in WORK_DIR for the guest run.
# Usage: check-install.sh HOST_BUILD_DIR WORK_DIR
set -eu
fail() { echo "check-install: FAIL: $*" >&2; exit 1; }
build=$(cd "$1" && pwd)
work=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
lib=$prefix/lib
[ -f "$lib/libtpurt.a" ] || fail "no libtpurt.a in $lib"
soname=$(readelf -d "$lib/libtpurt.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libtpurt.so.0 ] || fail "soname is '$soname', not libtpurt.so.0"
[ -f "$lib/libtpurt.so.0.1.0" ] || fail "no libtpurt.so.0.1.0"
[ -f "$prefix/include/tpu_hw.h" ] || fail "tpu_hw.h not installed"
! grep -rn "$repo" "$prefix/include" "$lib/pkgconfig" "$lib/cmake" ||
	fail "installed files name the repository"

# Compiled from a copy of the example, with nothing of the repository on the include path.
cp "$here/example.cpp" "$here/CMakeLists.txt" "$work/"
export PKG_CONFIG_PATH="$lib/pkgconfig"
pkg-config --exists tpurt || fail "pkg-config does not find tpurt"
[ "$(pkg-config --modversion tpurt)" = 0.1.0 ] || fail "pkg-config version"
c++ -std=c++20 -o "$work/example-pc" "$work/example.cpp" $(pkg-config --cflags --libs tpurt) \
	-Wl,-rpath,"$lib"
c++ -std=c++20 -static -o "$work/example-pc-static" "$work/example.cpp" \
	$(pkg-config --static --cflags --libs tpurt)
cmake -S "$work" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" ||
	fail "find_package(tpurt) failed: $(cat "$work/cmake.log")"
cmake --build "$work/cmake" >>"$work/cmake.log" || fail "cmake build failed: $(cat "$work/cmake.log")"
cp "$work/cmake/example-cmake" "$work/cmake/example-cmake-static" "$work/"

ldd "$work/example-pc" | grep -q "libtpurt.so.0 => $lib/libtpurt.so.0" ||
	fail "example-pc does not load the installed libtpurt.so.0"
ldd "$work/example-cmake" | grep -q "libtpurt.so.0 => $lib/libtpurt.so.0" ||
	fail "example-cmake does not load the installed libtpurt.so.0"
for example in example-pc-static example-cmake-static; do
	! ldd "$work/$example" >/dev/null 2>&1 || fail "$example is not static"
done
for example in example-pc example-pc-static example-cmake example-cmake-static; do
	set +e
	out=$("$work/$example")
	rc=$?
	set -e
	echo "$example: $out (exit $rc)"
	case $rc in
	0) echo "$out" | grep -q "example: ok" || fail "$example" ;;
	3) echo "$out" | grep -q "no TPU found" || fail "$example: no explanation" ;;
	*) fail "$example exited $rc" ;;
	esac
done
echo "check-install: ok"
