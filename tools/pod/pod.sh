#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A pod of server VMs (tools/pod/README.md, docs/server.md "A pod"): PODS VMs of the server image
# (tools/server-image), CARDS cards each, all cards on one fabric whose links between VMs are
# socket chardevs between the QEMU processes (qemu_pod_cards_args in tests/vm/qemu-cards.sh), the
# VMs joined by a pod network (a second NIC on QEMU's -netdev dgram, UDP multicast on the host's
# loopback: no root), VM i named tpu-pod<i> with the pod address 10.99.0.<i+1>/24 and its SSH on
# the host's 127.0.0.1:<ssh port + i>. Once every VM answers SSH with its cards present, each gets
# the host's key (SSH between the VMs as tpu), /etc/hosts entries of the pod, a hostfile
# ~/pod-hosts (one slot a card), Open MPI's settings for the pod network
# (~/.openmpi/mca-params.conf) and, with --datasets, Fashion-MNIST in ~/datasets/fashion-mnist.
# The programs mpirun runs, tpu-pod-allreduce and tpu-train-mpi, are the image's: the
# tpu-pod-tools package (make packages before make server-image).
#
#   pod.sh start [options]             boot the pod and set it up, leave it running
#   pod.sh stop [--dir DIR]            power the pod's VMs off (killed after 60 s)
#   pod.sh run [options] [-- command]  start, run the command in tpu-pod0 as tpu (default:
#                                      mpirun of tpu-pod-allreduce on every card), stop; exits
#                                      with the command's status
# Options:
#   --pods P           VMs (default 2);  --cards C  cards a VM (default 2)
#   --ssh-port PORT    VM i's SSH on PORT + i (default 2222); also the pod network's UDP port
#   --dir DIR          the pod's overlays, console logs, QEMU pids (default build/pod)
#   --dev-driver       passed to build-image.sh (tpu.ko and tpu-smi from this tree)
#   --datasets         copy Fashion-MNIST ($TPU_CACHE/datasets/fashion-mnist, inflated in the VM)
#                      into every VM's ~/datasets/fashion-mnist (tpu-train-mpi --data-dir ~/datasets)
#   --boot-timeout S   seconds from the QEMUs' start until every VM answers (default 600)
# QEMU is killed on any failure of start and on any exit of run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
images=$src/tools/server-image
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
say() { echo "pod: $*" >&2; }

action=${1:-}
[[ "$action" =~ ^(start|stop|run)$ ]] || { say "usage: pod.sh start|stop|run [options] (see $0)"; exit 2; }
shift
pods=2 cards=2 port=2222 dir=$src/build/pod boot_timeout=600 build=() datasets=0
while [ $# -gt 0 ]; do
	case "$1" in
	--pods) pods=$2; shift 2 ;;
	--cards) cards=$2; shift 2 ;;
	--ssh-port) port=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--dev-driver) build=(--dev-driver); shift ;;
	--datasets) datasets=1; shift ;;
	--boot-timeout) boot_timeout=$2; shift 2 ;;
	--) shift; break ;;
	*) say "unknown option $1 (see the header of $0)"; exit 2 ;;
	esac
done
[[ "$pods" =~ ^[0-9]+$ ]] && [ "$pods" -ge 2 ] && [ "$pods" -le 200 ] ||
	{ say "--pods wants 2 to 200 VMs, not '$pods'"; exit 2; }
[[ "$cards" =~ ^[1-9][0-9]*$ ]] || { say "--cards wants a number >= 1, not '$cards'"; exit 2; }
[[ "$port" =~ ^[1-9][0-9]*$ ]] && [ $((port + pods)) -le 65536 ] ||
	{ say "--ssh-port wants a port with $pods ports above it free, not '$port'"; exit 2; }
[[ "$boot_timeout" =~ ^[1-9][0-9]*$ ]] || { say "--boot-timeout wants seconds, not '$boot_timeout'"; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
ssh_vm() { local i=$1; shift; "$images/server-ssh.sh" --port $((port + i)) "$@"; }

# stop: each VM powered off over SSH, its QEMU killed if it has not exited 60 s later.
stop_pod() {
	local f pid waited=0
	for f in "$dir"/pod*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		kill -0 "$pid" 2>/dev/null || { rm -f "$f"; continue; }
		ssh_vm "$(basename "$f" .pid | tr -dc 0-9)" sudo systemctl poweroff </dev/null \
			>/dev/null 2>&1 || true
	done
	for f in "$dir"/pod*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		while kill -0 "$pid" 2>/dev/null && [ $waited -lt 120 ]; do sleep 0.5; waited=$((waited + 1)); done
		kill -9 "$pid" 2>/dev/null || true
		while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
		rm -f "$f"
	done
	if [ -L "$dir/sockets" ]; then
		rm -rf "$(readlink "$dir/sockets")"
		rm -f "$dir/sockets"
	fi
}
if [ "$action" = stop ]; then
	stop_pod
	exit 0
fi
for f in "$dir"/pod*.pid; do
	[ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null &&
		{ say "a pod is running from $dir: pod.sh stop --dir $dir first"; exit 2; }
done
data=$cache/datasets/fashion-mnist
data_files=({train,t10k}-{images-idx3,labels-idx1}-ubyte.gz)
if [ $datasets -eq 1 ]; then
	for f in "${data_files[@]}"; do
		[ -f "$data/$f" ] || { say "no $data/$f: run 'make deps'"; exit 2; }
	done
fi

# One image for every VM, built (or found) once.
image=$("$images/build-image.sh" "${build[@]}")
trap 'stop_pod' EXIT
# The cards' link sockets: a short path (a unix socket's is at most 107 bytes).
sockets=$(mktemp -d /tmp/tpu-pod.XXXXXX)
ln -sfn "$sockets" "$dir/sockets"
net="dgram,id=pod,remote.type=inet,remote.host=230.0.0.1,remote.port=$port"
net+=",local.type=inet,local.host=127.0.0.1,local.port=0"
start=$(date +%s)
for ((i = 0; i < pods; i++)); do
	mac=$(printf '52:54:00:99:%02x:%02x' $((i / 256)) $((i % 256)))
	"$images/boot-server.sh" --detach --image "$image" --cards "$cards" \
		--pod "$i:$pods:$sockets" --ssh-port $((port + i)) --hostname "tpu-pod$i" \
		--overlay "$dir/pod$i.qcow2" --fresh --log "$dir/pod$i.log" \
		--append " ip=10.99.0.$((i + 1)):::255.255.255.0::eth1:off" \
		--qemu-args "-netdev $net -device virtio-net-pci,netdev=pod,mac=$mac,romfile=" \
		> "$dir/pod$i.pid"
done
# Ready: SSH answers and the VM's cards have their device nodes (tpu.ko loaded by udev).
for ((i = 0; i < pods; i++)); do
	until ssh_vm "$i" "test \$(ls /dev/accel | wc -l) -eq $cards" 2>/dev/null </dev/null; do
		kill -0 "$(cat "$dir/pod$i.pid")" 2>/dev/null ||
			{ say "tpu-pod$i's QEMU exited (its console: $dir/pod$i.log)"; exit 1; }
		[ $(($(date +%s) - start)) -lt "$boot_timeout" ] ||
			{ say "tpu-pod$i not ready after ${boot_timeout}s (its console: $dir/pod$i.log)"; exit 1; }
		sleep 3
	done
done
say "$pods VMs up with $cards card(s) each after $(($(date +%s) - start)) s"

ssh_vm 0 "command -v tpu-pod-allreduce >/dev/null && command -v tpu-train-mpi >/dev/null" </dev/null ||
	{ say "the image has no tpu-pod-tools (tpu-pod-allreduce, tpu-train-mpi): run 'make packages', then 'make server-image'"; exit 1; }

# The pod's set-up in every VM: names, the key for SSH between them (its keep-alive ends the
# ssh by which mpirun runs a VM's daemon 6 s after that VM died: else mpirun's output would stay
# open), a hostfile, Open MPI's networks (the pod's for its daemons and ranks: every VM's slirp
# NIC has the same address), and TCP giving up on a peer that stopped answering after 5
# retransmissions (about 13 s, not 15 minutes: mpirun's order to a dead VM's daemon to end the
# job's ranks there fails that soon, and mpirun exits) and 2 SYN retries (7 s).
hosts= hostfile=
for ((i = 0; i < pods; i++)); do
	hosts+="10.99.0.$((i + 1)) tpu-pod$i"$'\n'
	hostfile+="tpu-pod$i slots=$cards"$'\n'
done
for ((i = 0; i < pods; i++)); do
	ssh_vm "$i" "sudo tee -a /etc/hosts >/dev/null" <<<"$hosts"
	ssh_vm "$i" "echo 5 | sudo tee /proc/sys/net/ipv4/tcp_retries2 >/dev/null &&
		echo 2 | sudo tee /proc/sys/net/ipv4/tcp_syn_retries >/dev/null" </dev/null
	ssh_vm "$i" "umask 077 && cat > ~/.ssh/id_ed25519" < "$cache/server-image/ssh/id_ed25519"
	ssh_vm "$i" "cat > ~/.ssh/config" <<-'EOF'
	Host tpu-pod* 10.99.0.*
	    StrictHostKeyChecking no
	    UserKnownHostsFile /dev/null
	    LogLevel ERROR
	    ServerAliveInterval 2
	    ServerAliveCountMax 3
	EOF
	ssh_vm "$i" "cat > ~/pod-hosts" <<<"$hostfile"
	ssh_vm "$i" "mkdir -p ~/.openmpi && cat > ~/.openmpi/mca-params.conf" <<-'EOF'
	btl = self,tcp
	btl_tcp_if_include = 10.99.0.0/24
	oob_tcp_if_include = 10.99.0.0/24
	mpi_yield_when_idle = 1
	EOF
	[ $datasets -eq 1 ] || continue
	ssh_vm "$i" "mkdir -p ~/datasets/fashion-mnist" </dev/null
	for f in "${data_files[@]}"; do
		ssh_vm "$i" "gzip -dc > ~/datasets/fashion-mnist/${f%.gz}" < "$data/$f"
	done
done
say "set up: log in with tools/server-image/server-ssh.sh --port $port (tpu-pod0); in it:"
say "  mpirun --hostfile ~/pod-hosts -np $((pods * cards)) tpu-pod-allreduce"
[ $datasets -eq 0 ] ||
	say "  mpirun --hostfile ~/pod-hosts -np $((pods * cards)) tpu-train-mpi --model cnn --data-dir ~/datasets"
if [ "$action" = start ]; then
	trap - EXIT
	exit 0
fi

[ $# -gt 0 ] || set -- mpirun --hostfile pod-hosts -np $((pods * cards)) tpu-pod-allreduce
printf -v cmd '%q ' "$@"
set +e
ssh_vm 0 "$cmd" </dev/null
rc=$?
set -e
exit $rc
