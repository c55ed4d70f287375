#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs ONNX Runtime's CPU build from the npm registry (onnxruntime-node, pinned; Debian has no
# ONNX Runtime) into $TPU_CACHE/onnxruntime-node-<version>, the independent executor the
# compiler's tests compare exported and compiled models against (tools/onnxruntime/ort-run.mjs).
# ONNXRUNTIME_NODE_INSTALL=skip: the package carries its CPU library, nothing else is fetched.
# Needs node and npm; without them it says so and installs nothing (the tests that need it are
# then not registered: CMake looks for node). Idempotent; an interrupted run is redone.
set -euo pipefail

version=1.31.1
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
dest=$cache/onnxruntime-node-$version

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "fetch-onnxruntime: no node/npm on this machine: the ONNX Runtime checks are left out"
	exit 0
fi
[ -f "$dest/.done" ] && { echo "fetch-onnxruntime: onnxruntime-node $version present"; exit 0; }

tmp=$dest.tmp
rm -rf "$tmp" && mkdir -p "$tmp"
echo "fetch-onnxruntime: installing onnxruntime-node $version from the npm registry"
(cd "$tmp" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --loglevel=error \
	"onnxruntime-node@$version" >/dev/null)
node -e "require('$tmp/node_modules/onnxruntime-node')" ||
	{ echo "fetch-onnxruntime: the installed onnxruntime-node does not load" >&2; exit 1; }
rm -rf "$dest" && mv "$tmp" "$dest" && touch "$dest/.done"
echo "fetch-onnxruntime: onnxruntime-node $version in $dest"
