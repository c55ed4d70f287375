#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Boots a server VM in the background (boot-server.sh --detach), waits until its SSH answers, runs
# a command there as user tpu (stdin passed on), powers the VM off and returns the command's
# status. QEMU is killed on any exit (a failure, a timeout, Ctrl-C). Prints the boot time.
#   run-server.sh [--boot-timeout S] [--timeout S] [boot-server.sh options] -- command [args...]
# --boot-timeout: seconds from QEMU's start to an SSH login (default 600); --timeout: seconds for
# the command (default 1800).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
boot_timeout=600
timeout_s=1800
port=2222
boot=()
while [ $# -gt 0 ]; do
	case "$1" in
	--boot-timeout) boot_timeout=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--ssh-port) port=$2; boot+=("$1" "$2"); shift 2 ;;
	--fresh | --dev-driver) boot+=("$1"); shift ;;
	--detach) shift ;;
	--) shift; break ;;
	*) boot+=("$1" "${2:?run-server: $1 needs a value}"); shift 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "run-server: no command given" >&2; exit 2; }
for n in "$boot_timeout" "$timeout_s"; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "run-server: a timeout wants seconds, not '$n'" >&2; exit 2; }
done
ssh_vm() { "$here/server-ssh.sh" --port "$port" "$@"; }

# stop_qemu GRACE: waits up to GRACE seconds for QEMU to exit, then kills it.
pid=
stop_qemu() {
	[ -n "$pid" ] || return 0
	for _ in $(seq $(($1 * 2))); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
	kill -9 "$pid" 2>/dev/null || true
}
trap 'stop_qemu 0' EXIT
pid=$("$here/boot-server.sh" --detach "${boot[@]}")
start=$(date +%s)
until ssh_vm true 2>/dev/null </dev/null; do
	kill -0 "$pid" 2>/dev/null || { echo "run-server: QEMU exited before SSH answered" >&2; exit 125; }
	if [ $(($(date +%s) - start)) -ge "$boot_timeout" ]; then
		echo "run-server: no SSH login after ${boot_timeout}s" >&2
		exit 124
	fi
	sleep 3
done
echo "run-server: SSH login after $(($(date +%s) - start)) s" >&2
set +e
printf -v cmd '%q ' "$@"
timeout -k 10 "$timeout_s" "$here/server-ssh.sh" --port "$port" "$cmd"
rc=$?
set -e
[ $rc -ne 124 ] || echo "run-server: the command did not end within ${timeout_s}s" >&2
ssh_vm sudo systemctl poweroff </dev/null 2>/dev/null || true
stop_qemu 60
pid=
exit $rc
