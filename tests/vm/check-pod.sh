#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm_pod: a pod of 2 server VMs of 2 cards each on one 2 x 2 torus (tools/pod/pod.sh; the image
# with --dev-driver while build/packages holds no repository, as in check-server.sh), then in
# tpu-pod0 as tpu:
#   1. mpirun of tpu-pod-allreduce, one rank per card over the pod network: every element of
#      the fp32 and int32 all-reduces exact, the modelled time within 5% of the alpha-beta time;
#   2. the same repeating all-reduces, tpu-pod1's QEMU killed (SIGKILL) once they run: mpirun
#      must exit non-zero within the communicator's timeout plus a margin for mpirun, both of
#      tpu-pod0's ranks having reported their failed all-reduce within the timeout.
# Every QEMU of the pod must be gone afterwards.
#   check-pod.sh LOG_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
logs=${1:?usage: check-pod.sh LOG_DIR}
pod=$src/tools/pod/pod.sh
# The communicator's timeout in part 2: below the 6 s after which mpirun ends the job when a VM
# died (pod.sh's ssh keep-alive), so that a rank of tpu-pod0 waiting on its neighbour (whose
# all-reduce failed on the dead link) reports its own failure before mpirun ends it.
timeout_ms=4000
margin=30        # seconds for mpirun to end the job after a rank's error
mkdir -p "$logs"
rm -f "$logs/allreduce.out" "$logs/killed.out" # a previous run's would satisfy the waits below
build=()
[ -f "${SERVER_REPO:-$src/build/packages}/Packages" ] || build=(--dev-driver)
start=$(date +%s)
# Two free neighbouring ports of the host's loopback for the VMs' SSH (and the pod network's).
port=$(/usr/bin/python3 "$here/free-port-pair.py")
ssh0() { "$src/tools/server-image/server-ssh.sh" --port "$port" "$@"; }
pids=()
. "$here/pod-test-lib.sh"
trap 'pod_cleanup check-pod' EXIT
"$pod" start --pods 2 --cards 2 --ssh-port "$port" --dir "$logs" "${build[@]}"
pids=("$(cat "$logs/pod0.pid")" "$(cat "$logs/pod1.pid")")
booted=$(date +%s)

# 1. The all-reduce, exact, its modelled time next to the formula.
status=0
ssh0 mpirun --hostfile pod-hosts -np 4 tpu-pod-allreduce </dev/null | tee "$logs/allreduce.out" ||
	{ echo "check-pod: mpirun of the all-reduce failed" >&2; status=1; }
grep -q '^# wrong elements: 0$' "$logs/allreduce.out" ||
	{ echo "check-pod: the all-reduce was not exact" >&2; status=1; }
rows=$(awk '$1 ~ /^[0-9]+$/ && $5 == "|" { n++; r = $8; if (r < 0.95 || r > 1.05) bad++ }
	END { print n + 0, bad + 0 }' "$logs/allreduce.out")
[ "$rows" = "2 0" ] ||
	{ echo "check-pod: rows and rows off the formula by more than 5%: $rows (want 2 0)" >&2; status=1; }
[ $status -eq 0 ] || exit $status
reduced=$(date +%s)

# 2. tpu-pod1 killed while the all-reduces repeat.
ssh0 mpirun --hostfile pod-hosts -np 4 tpu-pod-allreduce --repeat 1000000 \
	--timeout-ms $timeout_ms </dev/null > "$logs/killed.out" 2>&1 &
run=$!
until grep -q '^tpu-pod-allreduce: repeating' "$logs/killed.out"; do
	kill -0 $run 2>/dev/null || { cat "$logs/killed.out"; echo "check-pod: mpirun ended early" >&2; exit 1; }
	sleep 0.5
done
sleep 1
kill -9 "${pids[1]}"
killed=$(date +%s)
limit=$((timeout_ms / 1000 + margin))
failed='^tpu-pod-allreduce: rank [01] on tpu-pod0 (card rank [0-9]*): all-reduce .* failed: '
pod_reports() { grep -c "$failed" "$logs/killed.out"; }
pod_watch_kill check-pod $run $killed $limit $((timeout_ms / 1000)) pod_reports || status=1
reported=$pod_reported ended=$pod_ended rc=$pod_rc
cat "$logs/killed.out"
for r in 0 1; do
	grep -q "^tpu-pod-allreduce: rank $r on tpu-pod0 (card rank [0-9]*): all-reduce .* failed: " \
		"$logs/killed.out" || { echo "check-pod: rank $r on tpu-pod0 reported no failure" >&2; status=1; }
done
echo "check-pod: pod up after $((booted - start)) s, all-reduce $((reduced - booted)) s," \
     "tpu-pod0's ranks reported the failure ${reported:-never} s and mpirun ended ${ended} s" \
     "after tpu-pod1 was killed (exit $rc)"
exit $status
