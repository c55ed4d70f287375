#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm_pod_train: data-parallel training over a pod (tools/pod, tpu-train-mpi) against the same
# training on four cards of one VM, a VM killed mid-training, and the run resumed:
#   1. reference: tpu-train --cards 4 in one harness VM of 4 cards on a 2 x 2 torus whose y
#      links are the pod's links between VMs (run-in-vm.sh), the CNN on 640 Fashion-MNIST images, 2 epochs of 20 steps (batch 32);
#   2. a pod of 2 server VMs of 2 cards (pod.sh start --datasets; the image as in check-pod.sh),
#      mpirun of tpu-train-mpi with the same options, one rank a card: its checkpoint must be the
#      reference's byte for byte (the training is bit-identical: workloads/train/data_parallel.hpp)
#      and its last curves row within 1e-5 relative (train and test loss) and 0.5 points (test
#      accuracy) of it; the summary has the 4 ranks' rows; tpu-pod1 holds no output (rank 0 alone
#      writes);
#   3. the same run again, tpu-pod1's QEMU killed (SIGKILL) during epoch 2, once epoch 1's
#      checkpoint is written: both of tpu-pod0's ranks must report their failure (their own, or
#      the first failed rank's) within the communicator's timeout and mpirun exit non-zero;
#   4. the pod stopped and started again (fresh overlays), epoch 1's checkpoint copied in, and
#      the run resumed (--resume): its checkpoint must be the reference's byte for byte.
# Every QEMU of the pod must be gone afterwards.
#   check-pod-train.sh LOG_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
logs=${1:?usage: check-pod-train.sh LOG_DIR}
pod=$src/tools/pod/pod.sh
timeout_ms=10000 # the communicator's timeout in part 3
margin=30        # seconds for mpirun to end the job after a rank's error
train=(--model cnn --optimizer adam --limit 640 --batch 32 --epochs 2 --replica-check-steps 5)
mkdir -p "$logs"
# A previous run's outputs would satisfy the checks below.
rm -rf "$logs"/{cards4,cards4.log,pod.out,pod.tpuckpt,pod-curves.csv,killed.*,resumed.*}
build=()
[ -f "${SERVER_REPO:-$src/build/packages}/Packages" ] || build=(--dev-driver)
start=$(date +%s)

# 1. The reference, one process driving 4 cards in one VM, its y links as slow as the pod's
# links between VMs (so that its collectives take the same algorithm).
. "$here/qemu-cards.sh"
pod_y_links check-pod-train || exit 2
mkdir -p "$logs/cards4"
"$here/run-in-vm.sh" --cards 4 --ici "torus2d,$pod_y" --datasets --log "$logs/cards4.log" \
	--out "$logs/cards4" -- build/guest/workloads/train/tpu-train "${train[@]}" --cards 4 \
	--out "$logs/cards4/run" >/dev/null ||
	{ tail -40 "$logs/cards4.log"; echo "check-pod-train: tpu-train --cards 4 failed" >&2; exit 1; }
referenced=$(date +%s)

port=$(/usr/bin/python3 "$here/free-port-pair.py")
ssh_vm() { local i=$1; shift; "$src/tools/server-image/server-ssh.sh" --port $((port + i)) "$@"; }
pids=()
. "$here/pod-test-lib.sh"
trap 'pod_cleanup check-pod-train' EXIT
start_pod() {
	"$pod" start --pods 2 --cards 2 --ssh-port "$port" --dir "$logs" --datasets "${build[@]}"
	pids+=("$(cat "$logs/pod0.pid")" "$(cat "$logs/pod1.pid")")
}
# mpirun of tpu-train-mpi on the 4 cards in tpu-pod0, with more options.
train_pod() {
	ssh_vm 0 mpirun --hostfile pod-hosts -np 4 tpu-train-mpi "${train[@]}" --data-dir datasets \
		--timeout-ms $timeout_ms "$@" </dev/null
}
# The checkpoint of tpu-pod0's run in DIR, copied to FILE, against the reference's.
same_checkpoint() {
	ssh_vm 0 cat "$1/checkpoint.tpuckpt" </dev/null > "$2"
	cmp "$2" "$logs/cards4/run/checkpoint.tpuckpt" ||
		{ echo "check-pod-train: $1's checkpoint differs from tpu-train --cards 4's" >&2; return 1; }
}
start_pod
booted=$(date +%s)

# 2. The same training over the pod.
train_pod --out run | tee "$logs/pod.out" ||
	{ echo "check-pod-train: mpirun of tpu-train-mpi failed" >&2; exit 1; }
same_checkpoint run "$logs/pod.tpuckpt"
ssh_vm 0 cat run/curves.csv </dev/null > "$logs/pod-curves.csv"
awk -F, -v ref="$(tail -1 "$logs/cards4/run/curves.csv")" 'END {
	split(ref, x, ",")
	for (i = 2; i <= 4; i += 2) {
		d = x[i] - $i; if (d < 0) d = -d
		if (d > 1e-5 * x[i]) { printf "check-pod-train: loss %s against %s\n", $i, x[i]; exit 1 }
	}
	d = x[5] - $5; if (d < 0) d = -d
	if (d > 0.005) { printf "check-pod-train: test accuracy %s against %s\n", $5, x[5]; exit 1 }
}' "$logs/pod-curves.csv"
rows=$(grep -cE '^ +[0-3] tpu-pod[01] +\([01],[01]\) .*\((2 3|none)\)$' "$logs/pod.out" || true)
[ "$rows" -eq 4 ] || { echo "check-pod-train: $rows per-rank summary rows, not 4" >&2; exit 1; }
! ssh_vm 1 test -e run </dev/null || { echo "check-pod-train: tpu-pod1 wrote run/" >&2; exit 1; }
trained=$(date +%s)

# 3. tpu-pod1 killed during epoch 2. Epoch 2 takes about 3 s: the first checkpoint is copied
# aside the moment it is seen (epoch 2's would replace it), and the kill follows at once.
train_pod --out killed > "$logs/killed.out" 2>&1 &
run=$!
until ssh_vm 0 'test -f killed/checkpoint.tpuckpt && cp killed/checkpoint.tpuckpt epoch1.tpuckpt' \
	</dev/null; do
	kill -0 $run 2>/dev/null || { cat "$logs/killed.out"; echo "check-pod-train: mpirun ended early" >&2; exit 1; }
	sleep 0.5
done
kill -0 $run 2>/dev/null || { cat "$logs/killed.out"; echo "check-pod-train: mpirun ended before the kill" >&2; exit 1; }
kill -9 "${pids[1]}"
killed=$(date +%s)
limit=$((timeout_ms / 1000 + margin))
# Each of tpu-pod0's ranks: its own error, or the first failed rank's line (its FailureWatch).
failed='^tpu-train-mpi: rank [01] on tpu-pod0 \(card rank [0-9]+\): (a card failed during data-parallel training|stopped: )'
# How many of tpu-pod0's ranks have reported.
ranks_reported() { grep -E "$failed" "$logs/killed.out" | cut -d' ' -f3 | sort -u | wc -l; }
status=0
pod_watch_kill check-pod-train $run $killed $limit $((timeout_ms / 1000)) ranks_reported || status=1
reported=$pod_reported ended=$pod_ended rc=$pod_rc
cat "$logs/killed.out"
[ $status -eq 0 ] || exit $status
ssh_vm 0 cat epoch1.tpuckpt </dev/null > "$logs/killed.tpuckpt"
failed_at=$(date +%s)

# 4. The pod restarted, the run resumed from epoch 1's checkpoint (tpu-pod0 killed too: its
# overlay is not kept, a power-off would only take time).
kill -9 "${pids[0]}"
"$pod" stop --dir "$logs"
start_pod
restarted=$(date +%s)
for i in 0 1; do
	ssh_vm $i "cat > epoch1.tpuckpt" < "$logs/killed.tpuckpt"
done
train_pod --out resumed --resume epoch1.tpuckpt | tee "$logs/resumed.out" ||
	{ echo "check-pod-train: mpirun of the resumed run failed" >&2; exit 1; }
grep -q '^resumed cnn-.* from epoch1.tpuckpt after epoch 1$' "$logs/resumed.out" ||
	{ echo "check-pod-train: the run did not resume after epoch 1" >&2; exit 1; }
same_checkpoint resumed "$logs/resumed.tpuckpt"
resumed=$(date +%s)
echo "check-pod-train: reference $((referenced - start)) s, pod up $((booted - referenced)) s," \
     "training $((trained - booted)) s (the same checkpoint), tpu-pod0's ranks reported the" \
     "kill after ${reported} s and mpirun ended after ${ended} s (exit $rc), restart" \
     "$((restarted - failed_at)) s, resumed run $((resumed - restarted)) s (the same checkpoint)"
