#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the host packages the stack needs to build and test itself on Debian 12:
# compilers, libdrm/libnuma/Catch2 for the runtime, QEMU's build dependencies (meson from
# bookworm-backports), and what the guest harness uses (busybox, kmod, cpio, firmware ROMs).
# Idempotent: a second run only checks. Adds bookworm-backports and deb-src sources if missing.
# Re-runnable: an interrupted run (apt-get update, a half-configured dpkg) is finished by the next.
# Everything any make target uses is listed here, optional parts (oneDNN for the benchmark,
# clang's libFuzzer for the fuzzers, debootstrap for the fresh-machine check) included.
# libonnx-dev: tpu-compile's ONNX checker, version converter and shape inference (shared only).
# python3-torch, python3-torchvision: real PyTorch models exported to ONNX by the compiler's tests;
# python3-torch also the baseline of make bench-train (optional: without it, it says so).
# pybind11-dev python3-dev python3-numpy python3-pytest: the Python bindings (runtime/python)
# and their tests.
set -euo pipefail

[ "$(id -u)" -eq 0 ] || { echo "setup-host: run as root (apt-get install)" >&2; exit 1; }

src=/etc/apt/sources.list.d/tpu-stack.sources
if [ ! -f "$src" ]; then
	cat >"$src.tmp" <<'SRC'
# Added by the TPU stack's tools/setup-host.sh: guest kernel and meson come from
# bookworm-backports, QEMU's source tarball from its deb-src.
Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	rm -f /var/lib/apt/tpu-stack.updated
	mv "$src.tmp" "$src"
fi

pkgs=(build-essential cmake ninja-build pkg-config ccache git
      libdrm-dev libnuma-dev catch2 clang clang-format libclang-rt-14-dev libdnnl-dev
      libglib2.0-dev libslirp-dev python3-venv flex bison
      seabios qemu-system-data
      busybox-static cpio kmod xz-utils zstd dwarves bc libelf-dev
      zlib1g-dev libcli11-dev nlohmann-json3-dev debootstrap
      libcpp-httplib-dev libmicrohttpd-dev gnuplot-nox dkms sparse
      libprotobuf-dev protobuf-compiler libboost-dev libonnx-dev
      python3-torch python3-torchvision
      pybind11-dev python3-dev python3-numpy python3-pytest)
# The server image (tools/server-image): mmdebstrap, mke2fs, qemu-img for its overlays, ssh.
pkgs+=(mmdebstrap e2fsprogs qemu-utils openssh-client)
# A pod of server VMs (tools/pod): Open MPI's headers and libmpi for tpu-pod-allreduce.
pkgs+=(libopenmpi-dev)
# The Debian packages (make packages, tools/build-packages.sh): debhelper with dh-dkms, help2man
# (the tools' manual pages), the repository index (dpkg-dev, apt-utils), lintian (and mmdebstrap,
# above, for their install check).
pkgs+=(debhelper dh-dkms help2man dpkg-dev apt-utils lintian)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
meson_ok=0
if command -v meson >/dev/null && dpkg --compare-versions "$(meson --version)" ge 1.5; then
	meson_ok=1
fi

if [ ${#missing[@]} -eq 0 ] && [ $meson_ok -eq 1 ]; then
	echo "setup-host: all packages present"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# A run interrupted inside dpkg leaves packages unpacked but not configured; finish them first.
dpkg --configure -a
if [ ! -f /var/lib/apt/tpu-stack.updated ] || [ -n "$(find /var/lib/apt/tpu-stack.updated -mmin +720)" ]; then
	apt-get update -q
	touch /var/lib/apt/tpu-stack.updated
fi
[ ${#missing[@]} -eq 0 ] || apt-get install -y -q --no-install-recommends "${missing[@]}"
[ $meson_ok -eq 1 ] || apt-get install -y -q --no-install-recommends -t bookworm-backports meson
echo "setup-host: done"
