#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm_server: builds the server image if it is not cached (tools/server-image/build-image.sh),
# boots it from a fresh overlay with 2 cards on a ring (run-server.sh), waits for SSH and runs
# guest-server-checks.sh there as user tpu. With a local repository (make packages: build/packages)
# the image installs the stack's packages; without one (make test alone) it takes tpu.ko and
# tpu-smi from this tree (build-image.sh --dev-driver).
#   check-server.sh LOG_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
logs=${1:?usage: check-server.sh LOG_DIR}
mkdir -p "$logs"
cards=2
host=tpu-check
build=() stack=packages
[ -f "${SERVER_REPO:-$src/build/packages}/Packages" ] || { build=(--dev-driver); stack=dev-driver; }
start=$(date +%s)
image=$("$src/tools/server-image/build-image.sh" "${build[@]}")
built=$(date +%s)
echo "check-server: image $image ready after $((built - start)) s"
# A free port of the host's loopback for the guest's SSH.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$src/tools/server-image/run-server.sh" --image "$image" --cards "$cards" --hostname "$host" \
	--ssh-port "$port" --overlay "$logs/vm_server.qcow2" --fresh --log "$logs/vm_server.log" \
	--timeout 300 -- bash -s "$host" "$cards" "$stack" < "$here/guest-server-checks.sh"
rm -f "$logs/vm_server.qcow2"
echo "check-server: passed in $(($(date +%s) - start)) s (image $((built - start)) s)"
