#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Boots the server image (build-image.sh, built first if it is not cached) under QEMU with our
# TPU cards: a qcow2 overlay on the cached image (which stays pristine), virtio-blk root,
# virtio-net on QEMU's user network (slirp, DHCP) with the host's 127.0.0.1:SSH_PORT forwarded to
# the guest's SSH, N cards joined by the interconnect as in `make vm` (tests/vm/qemu-cards.sh).
#
#   boot-server.sh [options]             serial console on this terminal (Ctrl-A X quits QEMU)
#   boot-server.sh --detach [options]    QEMU in the background, the console in the log file;
#                                        prints QEMU's pid (run-server.sh uses this)
# Options:
#   --cards N          N TPU cards (default 1)
#   --ici ICI          how they are joined: auto (default), none, ring[,PROPS], torus2d[,PROPS]
#   --pod I:P:DIR      instead: VM I of a pod of P VMs, its cards' links to the other VMs on unix
#                      sockets in DIR (tools/pod/README.md; qemu_pod_cards_args in qemu-cards.sh)
#   --ssh-port PORT    the host's port forwarded to the guest's 22 (default 2222)
#   --overlay FILE     the VM's qcow2 overlay (default build/server/server.qcow2): one per VM
#   --fresh            a new, empty overlay (the old one's changes are dropped)
#   --hostname NAME    the guest's hostname (default tpu-server; systemd.hostname=)
#   --memory SIZE      guest memory (default 4G);  --smp N  virtual CPUs (default 2)
#   --append "ARGS"    more guest kernel arguments
#   --qemu-args "..."  more QEMU arguments (e.g. a second NIC on a network between VMs)
#   --log FILE         with --detach: the serial console's log (default: the overlay's name .log)
#   --image DIR        boot this image directory instead of build-image.sh's
#   --dev-driver       passed to build-image.sh (tpu.ko and tpu-smi from this tree, no packages)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$src/tests/vm/qemu-cards.sh"
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
qemu=$(tpu_qemu_binary "$src" "$cache")
cards=1
ici=auto
pod=
ssh_port=2222
overlay=$src/build/server/server.qcow2
fresh=0
hostname=tpu-server
memory=4G
smp=2
append=
extra=()
detach=0
log=
image=
build_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--cards) cards=$2; shift 2 ;;
	--ici) ici=$2; shift 2 ;;
	--pod) pod=$2; shift 2 ;;
	--ssh-port) ssh_port=$2; shift 2 ;;
	--overlay) overlay=$2; shift 2 ;;
	--fresh) fresh=1; shift ;;
	--hostname) hostname=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--append) append+=" $2"; shift 2 ;;
	--qemu-args) read -r -a more <<<"$2"; extra+=("${more[@]}"); shift 2 ;;
	--detach) detach=1; shift ;;
	--log) log=$2; shift 2 ;;
	--image) image=$2; shift 2 ;;
	--dev-driver) build_args+=(--dev-driver); shift ;;
	*) echo "boot-server: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
	esac
done
if [ -z "$pod" ]; then
	qemu_cards_args boot-server "$cards" "$ici" || exit 2
else
	[[ "$pod" =~ ^([0-9]+):([0-9]+):(/.+)$ ]] ||
		{ echo "boot-server: --pod wants INDEX:PODS:/DIR, not '$pod'" >&2; exit 2; }
	qemu_pod_cards_args boot-server "$cards" "${BASH_REMATCH[2]}" "${BASH_REMATCH[1]}" \
		"${BASH_REMATCH[3]}" || exit 2
fi
[[ "$ssh_port" =~ ^[1-9][0-9]*$ ]] && [ "$ssh_port" -le 65535 ] ||
	{ echo "boot-server: --ssh-port wants a port number, not '$ssh_port'" >&2; exit 2; }
[[ "$hostname" =~ ^[a-zA-Z0-9]([a-zA-Z0-9-]{0,62})$ ]] ||
	{ echo "boot-server: --hostname wants letters, digits and '-', not '$hostname'" >&2; exit 2; }
[[ "$smp" =~ ^[1-9][0-9]*$ ]] || { echo "boot-server: --smp needs a number >= 1, not '$smp'" >&2; exit 2; }
[ -x "$qemu" ] || { echo "boot-server: no QEMU at $qemu: run 'make qemu'" >&2; exit 2; }
command -v qemu-img >/dev/null || { echo "boot-server: no qemu-img: run tools/setup-host.sh" >&2; exit 2; }
[ -n "$image" ] || image=$("$here/build-image.sh" "${build_args[@]}")
[ -f "$image/.done" ] || { echo "boot-server: $image is not a built server image" >&2; exit 2; }
image=$(cd "$image" && pwd)

# The overlay: made on the image, kept across boots while it is on this image.
mkdir -p "$(dirname "$overlay")"
if [ -f "$overlay" ] && [ $fresh -eq 0 ]; then
	backing=$(qemu-img info -U --output=json "$overlay" |
		/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin).get("backing-filename", ""))')
	[ "$backing" = "$image/rootfs.ext4" ] || {
		echo "boot-server: $overlay is an overlay of ${backing:-no image}, not of $image/rootfs.ext4:" \
		     "--fresh (make server SERVER_FRESH=1) starts a new one" >&2
		exit 2
	}
else
	qemu-img create -q -f qcow2 -F raw -b "$image/rootfs.ext4" "$overlay.new"
	mv "$overlay.new" "$overlay"
fi

kargs="root=/dev/vda rw console=ttyS0 panic=-1 no_timer_check net.ifnames=0 systemd.hostname=$hostname$append"
args=(-accel tcg -cpu max -smp "$smp" -m "$memory" -no-reboot -vga none
      -L /usr/share/seabios -L /usr/share/qemu
      -kernel "$image/vmlinuz" -initrd "$image/initrd.img" -append "$kargs"
      -drive "file=$overlay,format=qcow2,if=virtio,discard=unmap"
      -netdev "user,id=net0,hostname=$hostname,hostfwd=tcp:127.0.0.1:$ssh_port-:22"
      -device virtio-net-pci,netdev=net0,romfile=
      "${qemu_cards[@]}" "${extra[@]}")
key=$cache/server-image/ssh/id_ed25519
login="ssh -p $ssh_port -i $key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null tpu@127.0.0.1"
if [ $detach -eq 1 ]; then
	[ -n "$log" ] || log=${overlay%.qcow2}.log
	pidfile=$(mktemp)
	trap 'rm -f "$pidfile"' EXIT
	"$qemu" "${args[@]}" -display none -monitor none -serial "file:$log" \
		-daemonize -pidfile "$pidfile"
	echo "boot-server: $hostname booting with $cards card(s), console in $log; log in with" >&2
	echo "  $login" >&2
	cat "$pidfile"
else
	echo "boot-server: $hostname with $cards card(s); root is logged in on this console" \
	     "(Ctrl-A X quits QEMU); from another terminal, once it has booted:" >&2
	echo "  $login" >&2
	exec "$qemu" "${args[@]}" -nographic
fi
