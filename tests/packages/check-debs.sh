#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the .debs that tools/build-packages.sh made, without installing them:
#   - every package is there, at the project's version (debian/changelog)
#   - each holds what it should (dpkg-deb -c): libtpurt.so.0 and its soname link in libtpurt0;
#     headers, libtpurt.so, libtpurt.a, tpurt.pc and the CMake package in libtpurt-dev; each tool
#     in tpu-tools, the pod programs in tpu-pod-tools (depending on Open MPI); the DKMS tree with dkms.conf at the package's version in tpu-dkms; the udev
#     rule, the group's creation, the module helper and the data sets' links in tpu-common;
#     tpu.ko for the guest kernel, with its vermagic and PCI alias (modinfo), in tpu-modules-KABI
#   - the apt repository index lists them all
#   - lintian (Debian's policy checks) reports no error and no warning beyond the justified
#     overrides in debian/*.lintian-overrides and debian/module-package/
# Usage: tests/packages/check-debs.sh [PACKAGES_DIR]   (default build/packages)
# Exit status 0 iff every check passed; each failure is named.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$src/build/packages}
kabi=$("$src/tools/guest-kabi.sh")
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
failures=0
start=$SECONDS

fail() {
	echo "check-debs: FAIL: $*" >&2
	failures=$((failures + 1))
}
# find_deb PACKAGE: sets deb to its .deb at the project's version, or fails the check.
find_deb() {
	deb=$(ls "$dir/${1}_${version}_"*.deb 2>/dev/null | head -n1)
	[ -n "$deb" ] || { fail "no $1 $version in $dir (run make packages)"; return 1; }
}
# holds PACKAGE PATH...: each PATH (as dpkg-deb -c prints it, without ./) is in the package.
holds() {
	local pkg=$1 listing p
	shift
	find_deb "$pkg" || return 0
	listing=$(dpkg-deb -c "$deb" | awk '{ sub(/^\.\//, "", $6); print $6 ($7 == "->" ? " -> " $8 : "") }')
	for p in "$@"; do
		grep -qxF -- "$p" <<<"$listing" || fail "$pkg does not hold $p"
	done
}

[ -d "$dir" ] || { echo "check-debs: no $dir: run make packages" >&2; exit 1; }
lib=usr/lib/$multiarch
holds libtpurt0 "$lib/libtpurt.so.0.1.0" "$lib/libtpurt.so.0 -> libtpurt.so.0.1.0"
holds libtpurt-dev "$lib/libtpurt.so -> libtpurt.so.0" "$lib/libtpurt.a" \
	"$lib/pkgconfig/tpurt.pc" "$lib/cmake/tpurt/tpurtConfig.cmake" \
	"$lib/cmake/tpurt/tpurtConfigVersion.cmake" "$lib/cmake/tpurt/tpurtTargets.cmake" \
	usr/include/tpurt/tpurt.hpp usr/include/tpurt/tpurt.h usr/include/tpu_hw.h \
	usr/include/drm/tpu_accel.h
tools=(tpu-smi tpu-prof tpu-train tpu-train-cpu tpu-eval tpu-quantise tpu-serve tpu-loadgen
       tpu-compile tpu-export)
holds tpu-tools "${tools[@]/#/usr/bin/}"
holds tpu-pod-tools usr/bin/tpu-pod-allreduce usr/bin/tpu-train-mpi \
	usr/share/man/man1/tpu-pod-allreduce.1.gz usr/share/man/man1/tpu-train-mpi.1.gz
dkms_src=usr/src/tpu-$version
holds tpu-dkms "$dkms_src/dkms.conf" "$dkms_src/Kbuild" "$dkms_src/tpu_drv.c" \
	"$dkms_src/include/tpu_hw.h" "$dkms_src/include/uapi/drm/tpu_accel.h"
holds tpu-common lib/udev/rules.d/70-tpu.rules usr/libexec/tpu-common/tpu-module \
	"usr/share/tpu-stack/datasets/fashion-mnist -> ../../datasets/fashion-mnist" \
	"usr/share/tpu-stack/datasets/sklearn -> ../../../lib/python3/dist-packages/sklearn/datasets/data"
py=usr/lib/python3/dist-packages/tpurt
holds python3-tpurt "$py/__init__.py" "$py/ops.py" "$py/_tpurt.cpython-311-x86_64-linux-gnu.so"

# Control data and contents that need unpacking.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if find_deb tpu-dkms; then
	dpkg-deb -x "$deb" "$scratch/dkms"
	grep -qx "PACKAGE_VERSION=\"$version\"" "$scratch/dkms/$dkms_src/dkms.conf" ||
		fail "tpu-dkms: dkms.conf's PACKAGE_VERSION is not $version"
	dpkg-deb -I "$deb" postinst | grep -q '/usr/lib/dkms/common.postinst' ||
		fail "tpu-dkms: postinst does not run DKMS's common.postinst"
	dpkg-deb -I "$deb" prerm | grep -q 'dkms remove' || fail "tpu-dkms: prerm does not dkms remove"
	dpkg-deb -f "$deb" Depends | grep -q dkms || fail "tpu-dkms does not depend on dkms"
fi
if find_deb tpu-common; then
	dpkg-deb -I "$deb" postinst | grep -q 'addgroup --quiet --system tpu' ||
		fail "tpu-common: postinst does not create group tpu"
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./lib/udev/rules.d/70-tpu.rules |
		grep -q 'GROUP="tpu"' || fail "tpu-common: the udev rule does not give the nodes to tpu"
fi
if find_deb tpu-tools; then
	dpkg-deb -f "$deb" Depends | grep -q 'libc6' || fail "tpu-tools: no shlibs dependencies"
fi
if find_deb tpu-pod-tools; then
	deps=$(dpkg-deb -f "$deb" Depends)
	grep -q 'libopenmpi3' <<<"$deps" || fail "tpu-pod-tools does not depend on libopenmpi3: $deps"
	grep -q 'openmpi-bin' <<<"$deps" || fail "tpu-pod-tools does not depend on openmpi-bin (mpirun)"
fi
if find_deb "tpu-modules-$kabi"; then
	dpkg-deb -x "$deb" "$scratch/mod"
	ko=$(find "$scratch/mod/lib/modules/$kabi/updates" -name 'tpu.ko*' | head -n1)
	if [ -z "$ko" ]; then
		fail "tpu-modules-$kabi holds no lib/modules/$kabi/updates/tpu.ko"
	else
		modinfo -F vermagic "$ko" | grep -q "^$kabi " ||
			fail "tpu-modules-$kabi: tpu.ko's vermagic is not $kabi: $(modinfo -F vermagic "$ko")"
		modinfo -F alias "$ko" | grep -q '^pci:v' ||
			fail "tpu-modules-$kabi: tpu.ko has no PCI alias (udev could not autoload it)"
	fi
	dpkg-deb -f "$deb" Depends | grep -q "linux-image-$kabi" ||
		fail "tpu-modules-$kabi does not depend on linux-image-$kabi"
	# One depmod each way (a minute in a TCG guest), before the module is loaded.
	for script in postinst postrm; do
		n=$(dpkg-deb -I "$deb" "$script" | grep -c "^[[:space:]]*depmod .*$kabi" || true)
		[ "$n" -eq 1 ] || fail "tpu-modules-$kabi: $script runs depmod $n times, not once"
	done
	dpkg-deb -I "$deb" postinst | grep -E "^[[:space:]]*(depmod|/usr/libexec/tpu-common/tpu-module load)" |
		head -n1 | grep -q depmod || fail "tpu-modules-$kabi: postinst loads tpu.ko before depmod"
fi

# The repository index.
for f in Packages Packages.gz Release; do
	[ -s "$dir/$f" ] || fail "the repository has no $f"
done
for p in tpu-common tpu-dkms libtpurt0 libtpurt-dev tpu-tools tpu-pod-tools python3-tpurt \
	"tpu-modules-$kabi"; do
	grep -qx "Package: $p" "$dir/Packages" 2>/dev/null || fail "Packages does not list $p"
done

# lintian, with the packages' own overrides (installed into them by dh_lintian).
if ! lintian --fail-on error,warning "$dir"/*.deb \
	>"$dir/logs/lintian.log" 2>&1; then
	cat "$dir/logs/lintian.log" >&2
	fail "lintian (log: $dir/logs/lintian.log)"
fi

if [ "$failures" -ne 0 ]; then
	echo "check-debs: $failures check(s) failed" >&2
	exit 1
fi
echo "check-debs: ok, $(ls "$dir"/*.deb | wc -l) packages of $version in $((SECONDS - start)) s"
