# SPDX-License-Identifier: MIT
# Sourced by tests/vm/run-in-vm.sh and tools/server-image/boot-server.sh: which QEMU to run, and
# the QEMU arguments of N TPU cards joined by the inter-chip interconnect (spec 2.0;
# docs/hardware.md section 10).
#
#   tpu_qemu_binary SRC CACHE
# prints the QEMU to run: $TPU_QEMU if set, else the copy tools/build-qemu.sh left in the checkout
# SRC (build/qemu/qemu-system-x86_64: the QEMU of SRC's own device sources), else CACHE's last
# build (CACHE/qemu/current).
#
#   qemu_cards_args NAME CARDS ICI
# checks CARDS (a number >= 1) and ICI (auto | none | ring[,PROPS] | torus2d[,PROPS]) and sets the
# array qemu_cards to the -object tpu-ici (preset v5e unless PROPS names another, dims N on a
# ring, 2xN/2 on a torus, more tpu-ici properties in PROPS) and the N -device tpu, each card at
# its coordinate: x = i on a ring, i mod 2:i / 2 on the torus. ICI auto: one card alone, 2 or 3
# cards on a ring, an even number from 4 on a torus, an odd one on a ring. On a bad value it
# prints why, prefixed with "NAME: ", and returns 2.
tpu_qemu_binary() {
	if [ -n "${TPU_QEMU:-}" ]; then
		echo "$TPU_QEMU"
	elif [ -x "$1/build/qemu/qemu-system-x86_64" ]; then
		echo "$1/build/qemu/qemu-system-x86_64"
	else
		echo "$2/qemu/current"
	fi
}

qemu_cards_args() {
	local name=$1 cards=$2 ici=$3 topology props dims i
	qemu_cards=()
	[[ "$cards" =~ ^[1-9][0-9]*$ ]] || { echo "$name: --cards needs a number >= 1, not '$cards'" >&2; return 2; }
	if [ "$ici" = auto ]; then
		if [ "$cards" -eq 1 ]; then ici=none
		elif [ "$cards" -ge 4 ] && [ $((cards % 2)) -eq 0 ]; then ici=torus2d
		else ici=ring
		fi
	fi
	[ "$ici" != none ] || ici=
	[ -z "$ici" ] || [[ "$ici" =~ ^(ring|torus2d)(,[a-z0-9=,-]+)?$ ]] || {
		echo "$name: --ici wants auto, none, ring or torus2d and tpu-ici properties, not '$ici'" >&2
		return 2
	}
	[ -z "$ici" ] || [ "$cards" -ge 2 ] || { echo "$name: --ici needs --cards 2 or more" >&2; return 2; }
	[[ "$ici" != torus2d* ]] || [ $((cards % 2)) -eq 0 ] ||
		{ echo "$name: --ici torus2d needs an even number of cards" >&2; return 2; }
	if [ -n "$ici" ]; then
		topology=${ici%%,*}
		props=
		[ "$topology" = "$ici" ] || props=,${ici#*,}
		if [ "$topology" = ring ]; then dims=$cards; else dims=2x$((cards / 2)); fi
		[[ "$props" == *,preset=* ]] || props=,preset=v5e$props
		qemu_cards+=(-object "tpu-ici,id=ici0,topology=$topology,dims=$dims$props")
	fi
	for ((i = 0; i < cards; i++)); do
		if [ -z "$ici" ]; then
			qemu_cards+=(-device tpu)
		elif [ "$topology" = ring ]; then
			qemu_cards+=(-device "tpu,ici=ici0,ici-coord=$i")
		else
			qemu_cards+=(-device "tpu,ici=ici0,ici-coord=$((i % 2)):$((i / 2))")
		fi
	done
}
