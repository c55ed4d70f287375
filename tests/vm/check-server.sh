#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm_server: builds the server image if it is not cached (tools/server-image/build-image.sh),
# boots it from a fresh overlay with 4 cards on a 2 x 2 torus (run-server.sh), waits for SSH and
# runs guest-server-checks.sh there as user tpu. With a local repository (make packages:
# build/packages; `make test` builds it) the image installs the stack's packages, and the checks
# also run the Python binding's tests with the README's tutorial on the card and remove and
# reinstall the packages; without one (ctest alone) the image takes tpu.ko and tpu-smi from this
# tree (build-image.sh --dev-driver).
#   check-server.sh LOG_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
logs=${1:?usage: check-server.sh LOG_DIR}
mkdir -p "$logs"
cards=4
host=tpu-check
build=() stack=packages
[ -f "${SERVER_REPO:-$src/build/packages}/Packages" ] || { build=(--dev-driver); stack=dev-driver; }
start=$(date +%s)
image=$("$src/tools/server-image/build-image.sh" "${build[@]}")
built=$(date +%s)
echo "check-server: image $image ready after $((built - start)) s"
# A free port of the host's loopback for the guest's SSH.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The checks and the files they use go to the guest as one tar on the command's stdin: the Python
# tests with the READMEs the tutorial's test reads, and scikit-learn's digits (test_training.py's
# data: the image has no python3-sklearn) as datasets/sklearn/digits.csv.gz.
tree=(tests/vm/guest-server-checks.sh README.md runtime/python/README.md tests/python)
digits=${TPU_CACHE:-$HOME/.cache/tpu-stack}/datasets/sklearn/digits.csv.gz
[ -f "$digits" ] || { echo "check-server: no $digits: run 'make deps'" >&2; exit 1; }
# shellcheck disable=SC2016 # expanded in the guest
unpack='set -e; rm -rf ~/stack; mkdir ~/stack; tar -xzf - -C ~/stack; exec bash ~/stack/tests/vm/guest-server-checks.sh "$@"'
tar --exclude=__pycache__ -czf - -C "$src" "${tree[@]}" -C "$(dirname "$digits")" \
	--transform 's|^digits|datasets/sklearn/digits|' digits.csv.gz |
	"$src/tools/server-image/run-server.sh" --image "$image" --cards "$cards" --ici torus2d \
		--hostname "$host" --ssh-port "$port" --overlay "$logs/vm_server.qcow2" --fresh \
		--log "$logs/vm_server.log" --timeout 1200 -- \
		bash -c "$unpack" guest-checks "$host" "$cards" "$stack" /home/tpu/stack
rm -f "$logs/vm_server.qcow2"
echo "check-server: passed in $(($(date +%s) - start)) s (image $((built - start)) s)"
