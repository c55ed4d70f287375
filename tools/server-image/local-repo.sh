#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-image.sh's customize hook when the image installs the stack's packages: copies the local
# repository (the .debs and their index) into the root at /srv/tpu-repo and points apt's source
# line there instead of the host's path, so that `apt-get remove` and `apt-get install` of the
# stack's packages work inside the server, offline.
#   local-repo.sh ROOT REPO
set -euo pipefail
root=${1:?usage: local-repo.sh ROOT REPO}
repo=${2:?usage: local-repo.sh ROOT REPO}
mkdir -p "$root/srv/tpu-repo"
cp "$repo"/*.deb "$repo"/Packages "$repo"/Packages.gz "$repo"/Release "$root/srv/tpu-repo/"
list=$root/etc/apt/sources.list
grep -q "file://$repo " "$list" || { echo "local-repo: $list has no file://$repo line" >&2; exit 1; }
sed -i "s|file://$repo |file:/srv/tpu-repo |" "$list"
