#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ssh into a server VM (boot-server.sh) as user tpu with the key of $TPU_CACHE/server-image/ssh,
# through the host's forwarded port. The image's host keys are the same in every VM, so they are
# neither checked nor remembered.
#   server-ssh.sh [--port PORT] [ssh arguments or a command...]      (PORT default 2222)
set -euo pipefail
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
port=2222
if [ "${1:-}" = --port ]; then
	port=${2:?server-ssh: --port needs a port}
	shift 2
fi
key=$cache/server-image/ssh/id_ed25519
[ -f "$key" ] || { echo "server-ssh: no key at $key: build the image (make server-image)" >&2; exit 2; }
exec ssh -p "$port" -i "$key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
	-o LogLevel=ERROR -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=6 \
	-o BatchMode=yes tpu@127.0.0.1 "$@"
