#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the stack's .debs (tools/build-packages.sh) from their local apt repository into a
# throwaway Debian 12 root and checks them the way a user meets them, chrooted as root with
# /proc, /sys and /dev mounted in a private mount namespace (they vanish when the check ends):
#   1. apt-get install libtpurt-dev tpu-tools tpu-dkms: DKMS builds and installs tpu.ko for the
#      guest kernel whose headers the root has (dkms status, modinfo); group tpu exists; dpkg -L
#      lists each package's files; tpu-smi --help works for a non-root member of group tpu, and
#      tpu-smi tells it that this machine has no card; pkg-config --libs tpurt; the runtime's
#      out-of-tree example (tests/runtime/package/) compiled with pkg-config and with
#      find_package(tpurt), shared and static, runs and says there is no TPU (exit 3)
#   2. apt-get remove tpu-dkms: DKMS's module is gone from the kernel's tree
#   3. apt-get install tpu-modules-KABI: the prebuilt tpu.ko in updates/, found by modinfo (depmod
#      ran); apt-get remove: gone
#   4. apt-get purge of everything: no file of the packages left
# The base root (mmdebstrap --variant=apt bookworm with dkms, the guest kernel's image and
# headers from bookworm-backports and a C++ toolchain) is cached in
# $TPU_CACHE/packages-root/<key>.tar, keyed by that list; the packages' own dependencies come from
# Debian's archive during the check. It runs in build/packages-check/root, kept after a failure.
# Usage: tests/packages/install-check.sh [PACKAGES_DIR]   (default build/packages)
set -euo pipefail
script=$(readlink -f "${BASH_SOURCE[0]}")
src=$(cd "$(dirname "$script")/../.." && pwd)
dir=$(readlink -f "${1:-$src/build/packages}")
# Everything below in a private mount namespace: its mounts go when the script ends, however.
if [ -z "${TPU_INSTALL_CHECK_NS:-}" ]; then
	exec env TPU_INSTALL_CHECK_NS=1 unshare --mount --propagation private "$script" "$dir"
fi
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
kabi=$("$src/tools/guest-kabi.sh")
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
work=$src/build/packages-check
root=$work/root
log=$work/install-check.log
start=$SECONDS

die() {
	echo "install-check: FAIL: $*" >&2
	echo "install-check: the root is kept in $root, the log in $log" >&2
	exit 1
}
say() { printf '[%4d s] install-check: %s\n' $((SECONDS - start)) "$*" | tee -a "$log"; }
[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap, chroot and mounts need it)"
command -v mmdebstrap >/dev/null || die "mmdebstrap missing: run tools/setup-host.sh"
[ -f "$dir/Packages" ] || die "no apt repository in $dir: run make packages"
mkdir -p "$work" "$cache/packages-root"
: >"$log"

# ---- the base root, cached by its package list -------------------------------------------------
includes="dkms,linux-image-$kabi,linux-headers-$kabi,g++,make,cmake,pkg-config,file"
mirror=http://deb.debian.org/debian
key=$(echo "bookworm $includes" | sha256sum | cut -c1-12)
base=$cache/packages-root/$key.tar
if [ ! -f "$base" ]; then
	say "mmdebstrap bookworm ($includes) into $base"
	mmdebstrap --variant=apt --include="$includes" \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		bookworm "$work/base.partial.tar" "deb $mirror bookworm main" \
		"deb $mirror bookworm-updates main" "deb $mirror-security bookworm-security main" \
		"deb $mirror bookworm-backports main" >>"$log" 2>&1 ||
		die "mmdebstrap failed (log $log)"
	mv "$work/base.partial.tar" "$base"
fi
say "unpacking $base into $root"
rm -rf --one-file-system "$root"
mkdir -p "$root"
tar -C "$root" -xf "$base"
mkdir -p "$root/srv/tpu-repo" "$root/srv/example"
cp "$dir"/*.deb "$dir"/Packages "$dir"/Packages.gz "$dir"/Release "$root/srv/tpu-repo/"
echo "deb [trusted=yes] file:/srv/tpu-repo ./" >"$root/etc/apt/sources.list.d/tpu-stack.list"
cp "$src"/tests/runtime/package/example.cpp "$src"/tests/runtime/package/CMakeLists.txt \
	"$src"/tests/packages/python-matmul.py "$root/srv/example/"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"

# step NAME COMMAND: COMMAND in the root as root (bash -euo pipefail), output in the log.
step() {
	local name=$1 t0=$SECONDS
	shift
	say "$name"
	if ! chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -euo pipefail -c "$*" >>"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "step '$name'"
	fi
	say "$name: ok in $((SECONDS - t0)) s"
}

step "apt-get update" "apt-get update -q"
step "install libtpurt-dev tpu-tools tpu-dkms python3-tpurt" \
	"apt-get install -y -q libtpurt-dev tpu-tools tpu-dkms python3-tpurt"
step "DKMS built and installed tpu.ko for $kabi" "
	dkms status
	dkms status -m tpu -v $version -k $kabi | grep -q ': installed'
	f=\$(modinfo -k $kabi -F filename tpu)
	echo \"modinfo: \$f\"
	case \$f in /lib/modules/$kabi/updates/dkms/tpu.ko*) ;; *) exit 1 ;; esac
	modinfo -k $kabi -F alias tpu | grep -q '^pci:v'"
step "group tpu, the udev rule, dpkg -L" "
	getent group tpu
	for p in tpu-common tpu-dkms libtpurt0 libtpurt-dev tpu-tools python3-tpurt; do
		echo \"dpkg -L \$p: \$(dpkg -L \$p | wc -l) paths\"
	done
	dpkg -L tpu-common | grep -qx /lib/udev/rules.d/70-tpu.rules
	dpkg -L tpu-dkms | grep -qx /usr/src/tpu-$version/dkms.conf
	dpkg -L libtpurt0 | grep -q '/libtpurt.so.0$'
	dpkg -L libtpurt-dev | grep -q '/pkgconfig/tpurt.pc$'
	dpkg -L tpu-tools | grep -qx /usr/bin/tpu-smi"
step "tpu-smi as a non-root member of group tpu" "
	id tpuuser >/dev/null 2>&1 || useradd -m -G tpu tpuuser
	su tpuuser -c 'id -nG' | grep -qw tpu
	su tpuuser -c 'tpu-smi --help' | grep -q Usage
	rc=0; out=\$(su tpuuser -c tpu-smi 2>&1) || rc=\$?
	echo \"tpu-smi: \$out (exit \$rc)\"
	[ \$rc -eq 2 ] || { echo 'FAIL: tpu-smi without a card should exit 2' >&2; exit 1; }
	for t in tpu-prof tpu-train tpu-train-cpu tpu-eval tpu-quantise tpu-serve tpu-loadgen \\
		tpu-compile tpu-export; do
		su tpuuser -c \"\$t --help\" >/dev/null || { echo \"FAIL: \$t --help\" >&2; exit 1; }
	done"
step "python3-tpurt: an int8 matmul equals numpy's, as a member of group tpu" "
	su tpuuser -c 'python3 /srv/example/python-matmul.py'"
step "libtpurt-dev: pkg-config, find_package(tpurt), the example built and run" "
	libs=\$(pkg-config --libs tpurt)
	echo \"pkg-config --libs tpurt: \$libs\"
	[ \"\${libs% }\" = -ltpurt ]
	[ \"\$(pkg-config --variable=libdir tpurt)\" = /usr/lib/x86_64-linux-gnu ]
	cd /srv/example
	g++ -std=c++20 -o example-pc example.cpp \$(pkg-config --cflags --libs tpurt)
	ldd example-pc | grep -Eq 'libtpurt.so.0 => (/usr)?/lib/x86_64-linux-gnu/libtpurt.so.0'
	cmake -S . -B cmake -G 'Unix Makefiles' >/dev/null
	cmake --build cmake >/dev/null
	for e in ./example-pc cmake/example-cmake cmake/example-cmake-static; do
		rc=0; out=\$(\$e 2>&1) || rc=\$?
		echo \"\$e: \$out (exit \$rc)\"
		[ \$rc -eq 3 ] || { echo \"FAIL: \$e should exit 3 without a card\" >&2; exit 1; }
		echo \"\$out\" | grep -q 'no TPU found'
	done"
step "remove tpu-dkms" "
	apt-get remove -y -q tpu-dkms
	! dkms status | grep -q '^tpu/'
	! modinfo -k $kabi tpu >/dev/null 2>&1
	[ ! -e /usr/src/tpu-$version ]"
step "install tpu-modules-$kabi" "
	apt-get install -y -q tpu-modules-$kabi
	f=\$(modinfo -k $kabi -F filename tpu)
	echo \"modinfo: \$f\"
	case \$f in /lib/modules/$kabi/updates/tpu.ko*) ;; *) exit 1 ;; esac"
step "remove tpu-modules-$kabi" "
	apt-get remove -y -q tpu-modules-$kabi
	! modinfo -k $kabi tpu >/dev/null 2>&1"
step "purge everything" "
	apt-get purge -y -q tpu-common tpu-dkms tpu-modules-$kabi libtpurt0 libtpurt-dev tpu-tools \
		python3-tpurt
	! dpkg -l 'tpu-*' 'libtpurt*' 2>/dev/null | grep -q '^[ih]i'
	[ ! -e /lib/udev/rules.d/70-tpu.rules ] && [ ! -e /usr/bin/tpu-smi ]"
umount -R "$root/proc" "$root/sys" "$root/dev" 2>/dev/null || true
rm -rf --one-file-system "$root"
say "passed: $version installed, checked and removed in $((SECONDS - start)) s"
