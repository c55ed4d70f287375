# SPDX-License-Identifier: MIT
# What the pod tests (check-pod.sh, check-pod-train.sh) share.

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

# pod_watch_kill NAME RUN KILLED LIMIT TIMEOUT_S REPORTS: after tpu-pod1 was killed at KILLED
# (date +%s), waits while mpirun (pid RUN) runs, at most LIMIT s, for the command REPORTS to print
# 2 (both of tpu-pod0's ranks have reported their failure). Sets pod_reported (seconds after the
# kill; empty if never), pod_ended and pod_rc (mpirun's exit status); returns 1, saying why, if
# the ranks reported after TIMEOUT_S s or never, mpirun still ran at LIMIT (it is then killed),
# or it exited 0.
pod_watch_kill() {
	local name=$1 run=$2 killed=$3 limit=$4 timeout_s=$5 reports=$6 status=0
	pod_reported= pod_rc=0
	while kill -0 "$run" 2>/dev/null && [ $(($(date +%s) - killed)) -le "$limit" ]; do
		[ -n "$pod_reported" ] || [ "$($reports)" -lt 2 ] || pod_reported=$(($(date +%s) - killed))
		sleep 0.5
	done
	pod_ended=$(($(date +%s) - killed))
	[ -n "$pod_reported" ] || [ "$($reports)" -lt 2 ] || pod_reported=$pod_ended
	if [ -z "$pod_reported" ] || [ "$pod_reported" -gt "$timeout_s" ]; then
		echo "$name: tpu-pod0's ranks had not both reported within the timeout" >&2
		status=1
	fi
	if kill -0 "$run" 2>/dev/null; then
		echo "$name: mpirun still runs ${limit}s after tpu-pod1 was killed" >&2
		kill "$run"
		status=1
	else
		wait "$run" || pod_rc=$?
		[ "$pod_rc" -ne 0 ] || { echo "$name: mpirun exited 0 with a VM killed" >&2; status=1; }
	fi
	return $status
}
