#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Links to cards in other QEMU processes over socket chardevs (docs/hardware.md section 10,
# "Links to other processes"), driven from the host; the guest side is test_ici_remote:
#   exchange   two VMs, one card each (x = 0 and 1 of a ring of two), both links over unix
#              sockets in a temporary directory: a buffer each way and a receive-reduce, every
#              byte and the modelled link time checked in both guests ([.remote])
#   killed     the same two VMs; the host kills the second QEMU (SIGKILL) while the first card's
#              SEND is stalled for credits: it ends LINK_DOWN, then a local job works
#   garbage    one VM whose port 0 is a socket server; a fake peer (ici-fake-peer.py) sends a
#              hello of another wire version, then garbage with the link up: the link goes down,
#              QEMU reports each once and runs on, a local job works
#   link-down  one VM, two cards on a ring: `qom-set /objects/ici0 link-down 1:1` on the monitor
#              ends a stalled SEND LINK_DOWN; link-up brings the link back for a transfer
# Fails if a guest fails, QEMU crashes or the host's part is not done.
#
#   check-ici-sockets.sh MODE GUEST_BUILD_DIR LOG_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1
bin=$2/tests/guest/test_ici_remote
logs=$3
mkdir -p "$logs"
tmp=$(mktemp -d)
mkdir "$tmp/shared" # the two VMs' barrier (test_ici_remote)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

ici="-object tpu-ici,id=ici0,topology=ring,dims=2,preset=v5e"
# Card 0's port p and card 1's port p ^ 1 share socket l<p>; card 0's QEMU is the server.
card0="$ici -chardev socket,id=l0,path=$tmp/l0.sock,server=on,wait=off"
card0+=" -chardev socket,id=l1,path=$tmp/l1.sock,server=on,wait=off"
card0+=" -device tpu,ici=ici0,ici-coord=0,ici-port0=l0,ici-port1=l1"
card1="$ici -chardev socket,id=l0,path=$tmp/l1.sock,reconnect-ms=200"
card1+=" -chardev socket,id=l1,path=$tmp/l0.sock,reconnect-ms=200"
card1+=" -device tpu,ici=ici0,ici-coord=1,ici-port0=l0,ici-port1=l1 -pidfile $tmp/card1.pid"

# vm NAME QEMU_ARGS CATCH_TAG [run-in-vm options]: starts a VM in the background.
vm() {
	local name=$1 qemu_args=$2 tag=$3
	shift 3
	rm -f "$logs/$name.log"
	"$here/run-in-vm.sh" --log "$logs/$name.log" --timeout 400 --qemu-args "$qemu_args" \
		--out "$tmp/shared" "$@" \
		-- "$bin" "$tag" --use-colour no -w NoTests > "$tmp/$name.out" 2>&1 &
	pids+=($!)
}

# until_marker NAME MARKER: waits for the guest's marker in its console log (or its end).
until_marker() {
	while ! grep -q "$2" "$logs/$1.log" 2>/dev/null; do
		kill -0 "${pids[0]}" 2>/dev/null || return 1
		sleep 1
	done
}

status=0
case $mode in
exchange)
	# A job waits for the other VM, which a loaded host may hold back for a while.
	vm card0 "$card0" "[.remote]" --driver-args "job_timeout_ms=120000"
	vm card1 "$card1" "[.remote]" --driver-args "job_timeout_ms=120000"
	wait "${pids[0]}" || status=$?
	wait "${pids[1]}" || status=$?
	;;
killed)
	vm survivor "$card0" "[.remote-survivor]" --driver-args "job_timeout_ms=60000"
	vm victim "$card1" "[.remote-victim]"
	if until_marker survivor TPU-ICI-WAITING; then
		sleep 1
		kill -KILL "$(cat "$tmp/card1.pid")"
	else
		echo "check-ici-sockets: the survivor never waited" >&2
		status=1
	fi
	wait "${pids[0]}" || status=$?
	wait "${pids[1]}" || true # killed
	;;
garbage)
	vm garbage "$ici -chardev socket,id=l0,path=$tmp/l0.sock,server=on,wait=off -device tpu,ici=ici0,ici-coord=0,ici-port0=l0" \
		"[.remote-garbage]" --driver-args "job_timeout_ms=60000"
	/usr/bin/python3 "$here/ici-fake-peer.py" "$tmp/l0.sock" "$logs/garbage.log" || status=$?
	wait "${pids[0]}" || status=$?
	for why in "version 3 of the link protocol" "bad magic"; do
		n=$(grep -c "ici-port0: .*$why" "$tmp/garbage.out" || true)
		if [ "$n" -ne 1 ]; then
			echo "check-ici-sockets: QEMU reported \"$why\" $n times, not once" >&2
			status=1
		fi
	done
	;;
link-down)
	vm linkdown "" "[.link-down]" --cards 2 --ici ring --monitor "$tmp/monitor" \
		--driver-args "job_timeout_ms=60000"
	for step in "TPU-ICI-WAITING link-down" "TPU-ICI-DOWN link-up"; do
		if ! until_marker linkdown "${step% *}" ||
			! /usr/bin/python3 "$here/hmp-command.py" "$tmp/monitor" \
				qom-set /objects/ici0 "${step#* }" 1:1; then
			echo "check-ici-sockets: ${step#* } was not done" >&2
			status=1
			break
		fi
	done
	wait "${pids[0]}" || status=$?
	;;
*)
	echo "check-ici-sockets: MODE is exchange, killed, garbage or link-down" >&2
	exit 2
	;;
esac
for out in "$tmp"/*.out; do
	echo "==== $(basename "$out" .out)"
	cat "$out"
done
exit $status
