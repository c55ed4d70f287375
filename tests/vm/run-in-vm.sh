#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Boots the test guest (cached 6.12 kernel, our QEMU with -device tpu, TCG) with this source tree
# shared at the same path, loads the module chain and driver/tpu.ko, runs a command inside and
# exits with its status. A hang (timeout), a panic or an oops/warning in the guest's kernel log is
# a failure; the guest console is kept in the log file either way.
#
#   run-in-vm.sh [options] -- command [args...]     run a command in the guest (cwd: source root)
#   run-in-vm.sh --interactive                      a shell in the guest on this terminal
# Options:
#   --log FILE         console log (default: build/vm-logs/vm.log)
#   --timeout SECONDS  wall-clock limit for the whole boot-run-poweroff (default 900)
#   --no-driver        do not load tpu.ko
#   --driver-args "a=1 b=2"  module parameters for tpu.ko (e.g. "job_timeout_ms=1000")
#   --qemu-args "..."  extra QEMU arguments (e.g. "-device tpu,mxu-rows=256,mxu-cols=256")
#   --monitor SOCKET   the QEMU monitor (HMP) on the UNIX socket SOCKET, for the host to drive
#                      while the guest runs (e.g. device_del); default: no monitor
#   --forward HOSTPORT:GUESTPORT  user networking (virtio-net, guest 10.0.2.15/24), with the
#                      host's 127.0.0.1:HOSTPORT forwarded to the guest's GUESTPORT (repeatable;
#                      QEMU runs with tools/listen-backlog.c preloaded, needs cc)
#   --datasets         the data sets ($TPU_CACHE/datasets) in the guest's memory at /datasets
#                      (in the initramfs), and TPU_DATASETS=/datasets exported to the command
#   --cards N          N TPU cards (N times -device tpu; default 1)
#   --ici auto | none | ring[,PROPS] | torus2d[,PROPS]   how the cards are joined (spec 2.0):
#                      by an inter-chip fabric, -object tpu-ici (preset v5e unless PROPS names
#                      another, dims N on a ring, 2xN/2 on a torus, more tpu-ici properties in
#                      PROPS, e.g. ring,credits=16 or torus2d,preset=v4) with each card at its
#                      coordinate: x = i on a ring, i mod 2:i / 2 on the torus; or not at all
#                      (none). Default auto: one card alone, 2 or 3 cards on a ring, an even
#                      number from 4 on a torus, an odd one on a ring
#   --tcg-buffer MIB   TCG's buffer of translated guest code (QEMU's default: 1 GiB). Until it is
#                      full and flushed, QEMU's own bookkeeping of the code in it grows with it
#                      (several MiB a minute under training): tests/vm/run-soak.sh bounds it to
#                      measure the rest of QEMU's memory
#   --smp N            N virtual CPUs (default 1): the driver's interrupt handler and ioctls on
#                      several CPUs at once
#   --append "ARGS"    more guest kernel arguments (e.g. "swiotlb=131072,force"; repeatable)
#   --out DIR          share the existing host directory DIR read-write at the same path in the
#                      guest (the source tree is read-only there): where guest commands write
#                      results the host reads, e.g. a checkpoint inside build/
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/qemu-cards.sh"
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
qemu=$(tpu_qemu_binary "$src" "$cache")
kernel=$cache/kernel/current/vmlinuz
log=$src/build/vm-logs/vm.log
timeout_s=900
interactive=0
driver=1
driver_args=
cards=1
ici=auto
smp=1
tcg_buffer=
extra=()
extra_append=
monitor=none
forwards=()
datasets=0
out_dir=
while [ $# -gt 0 ]; do
	case "$1" in
	--log) log=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--no-driver) driver=0; shift ;;
	--driver-args) driver_args=$2; shift 2 ;;
	--qemu-args) read -r -a more <<<"$2"; extra+=("${more[@]}"); shift 2 ;;
	--append) extra_append+=" $2"; shift 2 ;;
	--monitor) monitor=unix:$2,server=on,wait=off; shift 2 ;;
	--forward)
		[[ $2 =~ ^[0-9]+:[0-9]+$ ]] || { echo "run-in-vm: --forward wants HOSTPORT:GUESTPORT, not '$2'" >&2; exit 2; }
		forwards+=("$2"); shift 2 ;;
	--datasets) datasets=1; shift ;;
	--cards) cards=$2; shift 2 ;;
	--ici) ici=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--tcg-buffer) tcg_buffer=$2; shift 2 ;;
	--out)
		[ -d "$2" ] || { echo "run-in-vm: --out $2 is not a directory" >&2; exit 2; }
		out_dir=$(cd "$2" && pwd); shift 2 ;;
	--) shift; break ;;
	*) echo "run-in-vm: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
	esac
done
qemu_cards_args run-in-vm "$cards" "$ici" || exit 2
[[ "$smp" =~ ^[1-9][0-9]*$ ]] || { echo "run-in-vm: --smp needs a number >= 1, not '$smp'" >&2; exit 2; }
[ $interactive -eq 1 ] || [ $# -gt 0 ] || { echo "run-in-vm: no command given" >&2; exit 2; }
[ -x "$qemu" ] || { echo "run-in-vm: no QEMU at $qemu: run 'make qemu'" >&2; exit 2; }
[ -f "$kernel" ] || { echo "run-in-vm: no guest kernel at $kernel: run 'make deps'" >&2; exit 2; }
[ $driver -eq 0 ] || [ -f "$src/driver/tpu.ko" ] || { echo "run-in-vm: no driver/tpu.ko: run 'make module'" >&2; exit 2; }
# With --datasets the data sets (fashion-mnist, sklearn, ...) come in the initramfs, unpacked
# into the guest's memory at /datasets/<name>: reading them there is fast, through 9p it is not.
if [ $datasets -eq 1 ]; then
	initrd=$("$here/mkdatasets-initramfs.sh") || exit 2
else
	initrd=$("$here/mkinitramfs.sh")
fi
datasets_dir=/datasets

job=$(mktemp -d)
trap 'rm -rf "$job"' EXIT
{
	echo "cd '$PWD' || exit 95"
	[ $datasets -eq 0 ] || echo "export TPU_DATASETS='$datasets_dir'"
	printf '%q ' "$@"
	echo
} > "$job/run.sh"

# The memory checks Debian's 6.12 kernel offers (docs/architecture.md, "Testing layers"): SLUB
# sanity checks, red zones, poisoning and owner tracking; freed pages poisoned and checked when
# handed out again (pagealloc: memory corruption); KFENCE guarding a sample of allocations every
# 20 ms (off by default). DEBUG_LIST, BUG_ON_DATA_CORRUPTION and HARDENED_USERCOPY are built in.
# guest-init.sh fails the run on any of their reports.
append="console=ttyS0 panic=-1 oops=panic loglevel=4 quiet slub_debug=FZPU page_poison=1"
# no_timer_check: on a loaded host, TCG can be too slow for the kernel's IO-APIC timer check,
# which then panics at boot ("IO-APIC + timer doesn't work").
append+=" kfence.sample_interval=20 softlockup_panic=1 no_timer_check tpusrc=$src"
[ $driver -eq 1 ] || append+=" tpunodriver"
[ -z "$driver_args" ] || append+=" tpuargs=${driver_args// /,}"
[ $interactive -eq 0 ] || append+=" tpuinteractive"
[ ${#forwards[@]} -eq 0 ] || append+=" tpunet"
[ -z "$out_dir" ] || append+=" tpuout=$out_dir"
append+=$extra_append

args=(-accel "tcg${tcg_buffer:+,tb-size=$tcg_buffer}" -cpu max -smp "$smp" -m 2G -no-reboot -nic none -vga none
      -L /usr/share/seabios -L /usr/share/qemu
      -kernel "$kernel" -initrd "$initrd" -append "$append"
      -device isa-debug-exit,iobase=0xf4,iosize=0x04
      -virtfs "local,path=$src,mount_tag=src,security_model=none,readonly=on"
      -virtfs "local,path=$job,mount_tag=job,security_model=none"
      "${extra[@]}")
args+=("${qemu_cards[@]}")
preload=
if [ ${#forwards[@]} -gt 0 ]; then
	# libslirp 4.7.0 listens on a forwarded port with a backlog of 1, so that bursts of new
	# connections are reset: QEMU runs with tools/listen-backlog.c preloaded (built once, cached).
	shim=$cache/listen-backlog/$(sha256sum "$src/tools/listen-backlog.c" | cut -c1-16).so
	if [ ! -f "$shim" ]; then
		mkdir -p "$(dirname "$shim")"
		cc -O2 -Wall -shared -fPIC -o "$shim.tmp" "$src/tools/listen-backlog.c" -ldl &&
			mv "$shim.tmp" "$shim" || { echo "run-in-vm: cannot build $shim" >&2; exit 2; }
	fi
	preload=$shim
	netdev=user,id=net0
	for f in "${forwards[@]}"; do netdev+=",hostfwd=tcp:127.0.0.1:${f%%:*}-:${f##*:}"; done
	# romfile=: no PXE option ROM (the +ds QEMU build ships none, and the guest boots directly).
	args+=(-netdev "$netdev" -device virtio-net-pci,netdev=net0,romfile=)
fi
[ -z "$out_dir" ] || args+=(-virtfs "local,path=$out_dir,mount_tag=out,security_model=none")

if [ $interactive -eq 1 ]; then
	exec env ${preload:+LD_PRELOAD="$preload"} "$qemu" "${args[@]}" -nographic
fi

mkdir -p "$(dirname "$log")"
set +e
timeout -k 10 "$timeout_s" env ${preload:+LD_PRELOAD="$preload"} "$qemu" "${args[@]}" \
	-display none -serial stdio -monitor "$monitor" </dev/null | tee "$log"
qrc=${PIPESTATUS[0]}
set -e
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	echo "run-in-vm: the guest hung (no exit after ${timeout_s}s); console log: $log" >&2
	tail -n 30 "$log" >&2
	exit 124
fi
# The guest reports its status twice: as a "TPU-VM-EXIT rc=N" line (N in full, 0-255) and
# through isa-debug-exit, which makes QEMU exit with (code << 1) | 1 in 8 bits, so only codes
# 0-127 survive the port: guest-init.sh sends min(N, 127). The line gives the status; the port,
# if QEMU left through it, must agree. No line: the guest never finished (QEMU refused its
# arguments, which is exit status 1 like a port's 0, or the guest panicked).
line_rc=$(sed -n 's/.*TPU-VM-EXIT rc=\([0-9]*\).*/\1/p' "$log" | tail -n1)
if [ -z "$line_rc" ]; then
	echo "run-in-vm: the guest did not report (QEMU exit $qrc: QEMU refused to start, or the" \
		"guest panicked); console log: $log" >&2
	tail -n 30 "$log" >&2
	exit 125
fi
if [ $((qrc & 1)) -eq 1 ] && [ $((qrc >> 1)) -ne $((line_rc > 127 ? 127 : line_rc)) ]; then
	echo "run-in-vm: the guest's exit port says $((qrc >> 1)), its log rc=$line_rc; console log: $log" >&2
	exit 125
fi
rc=$line_rc
if [ "$rc" -ne 0 ]; then
	echo "run-in-vm: guest command failed with status $rc; console log: $log" >&2
fi
exit "$rc"
