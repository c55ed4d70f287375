#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-image.sh's step for an image with the stack's packages: copies the local repository (the
# .debs and their index) into the root at /srv/tpu-repo, names it in
# /etc/apt/sources.list.d/tpu-stack.list, and installs PACKAGE... with apt-get in a chroot from
# that repository alone (run under with-mounts.sh). The base root already holds what they need from Debian
# (stack-depends.py), so this needs no network; their maintainer scripts run as on a server
# (group tpu, depmod; tpu.ko is not loaded: the running kernel is the host's). Inside the server,
# `apt-get remove` and `apt-get install` of them work offline the same way.
#   install-stack.sh ROOT REPO PACKAGE...
set -euo pipefail
root=${1:?usage: install-stack.sh ROOT REPO PACKAGE...}
repo=${2:?usage: install-stack.sh ROOT REPO PACKAGE...}
shift 2
[ $# -gt 0 ] || { echo "install-stack: no package named" >&2; exit 2; }
mkdir -p "$root/srv/tpu-repo"
cp "$repo"/*.deb "$repo"/Packages "$repo"/Packages.gz "$repo"/Release "$root/srv/tpu-repo/"
list=/etc/apt/sources.list.d/tpu-stack.list
echo 'deb [trusted=yes] file:/srv/tpu-repo ./' >"$root$list"
apt() {
	DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -q -o Dir::Etc::SourceList="$list" \
		-o Dir::Etc::SourceParts=/nonexistent "$@" >&2
}
apt update
apt install -y --no-install-recommends "$@"
apt clean
