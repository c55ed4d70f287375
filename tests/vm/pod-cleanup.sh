# SPDX-License-Identifier: MIT
# pod_cleanup NAME: the EXIT trap of the pod tests (check-pod.sh, check-pod-train.sh): stops the
# pod in $logs (pod.sh stop), fails the test if a QEMU of $pids still runs then (and kills it),
# and removes the VMs' overlays. Needs pod, logs and pids set by the test.
pod_cleanup() {
	local name=$1 p
	"$pod" stop --dir "$logs" || true
	for p in "${pids[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			echo "$name: QEMU $p still runs after the pod's stop" >&2
			kill -9 "$p" 2>/dev/null || true
			exit 1
		fi
	done
	rm -f "$logs"/pod*.qcow2
}
