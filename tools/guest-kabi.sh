#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prints the release (kabi, e.g. 6.12.95+deb12-amd64) of the guest kernel that `make deps`
# unpacked into $TPU_CACHE/kernel/current; fails with a clear message if there is none.
set -euo pipefail
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
modules=$cache/kernel/current/root/lib/modules
kabi=$(find "$modules" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort | head -n1)
[ -n "$kabi" ] || { echo "no guest kernel in $modules: run 'make deps'" >&2; exit 2; }
echo "$kabi"
