#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs COMMAND with ROOT/proc and ROOT/dev mounted (proc, and bind mounts of the host's /dev and
# /dev/pts), as apt, dpkg and the maintainer scripts in `chroot ROOT` need them, in a mount
# namespace of its own: the mounts go when COMMAND ends, whatever happens, and never outlive a
# root that is removed.
#   with-mounts.sh ROOT COMMAND [ARGS...]
set -euo pipefail
root=${1:?usage: with-mounts.sh ROOT COMMAND [ARGS...]}
shift
[ $# -gt 0 ] || { echo "with-mounts: no command given" >&2; exit 2; }
[ -d "$root/proc" ] && [ -d "$root/dev" ] || { echo "with-mounts: $root is not a root" >&2; exit 2; }
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --propagation private -- sh -ec \
	'mount -t proc proc "$1/proc"; mount --rbind /dev "$1/dev"; shift; exec "$@"' \
	with-mounts "$root" "$@"
