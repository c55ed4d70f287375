#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Serving through the host's forwarded port, as `make serve` and `make demo` users reach it:
# tpu-serve in the guest (tests/guest/workloads/serve-until-done.sh) behind run-in-vm.sh --forward, and the
# host's tpu-loadgen at 64 and 256 clients opening a connection per request, then 64 keeping
# theirs. Every request must be answered 200 (tpu-loadgen exits 1 on any error).
#   check-forwarded-serving.sh GUEST_BUILD_DIR HOST_BUILD_DIR LOG
set -euo pipefail
guest_build=$1
host_build=$2
log=$3
out=$(mktemp -d)
trap 'touch "$out/done"; wait; rm -rf "$out"' EXIT
# A free port for the forward.
port=
for candidate in $(shuf -i 20000-29999 -n 20); do
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
		port=$candidate
		break
	fi
done
[ -n "$port" ] || { echo "check-forwarded-serving: no free port" >&2; exit 1; }
tests/vm/run-in-vm.sh --datasets --out "$out" --forward "$port:8000" --timeout 900 --log "$log" \
	-- sh tests/guest/workloads/serve-until-done.sh "$guest_build" "$out" &
vm=$!
until [ -e "$out/serving" ]; do
	kill -0 $vm 2>/dev/null || { echo "check-forwarded-serving: the guest ended first" >&2; exit 1; }
	sleep 1
done
loadgen() {
	"$host_build/workloads/loadgen/tpu-loadgen" --port "$port" --model digits --batch 2 "$@"
}
loadgen --concurrency 64,256 --requests 1600 --new-connection
loadgen --concurrency 64 --requests 1600
touch "$out/done"
wait $vm
echo "check-forwarded-serving: passed"
