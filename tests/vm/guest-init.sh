#!/bin/sh
# SPDX-License-Identifier: MIT
# /init of the test guest (busybox). Mounts the basics, loads the DRM/9p module chain baked into
# the initramfs, mounts the host's source tree at the same path as on the host (9p tag "src") and
# the job directory (tag "job"), loads driver/tpu.ko, runs /job/run.sh, checks the kernel log for
# oopses and warnings, and reports the exit status to the host through the isa-debug-exit port.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /tmp /job && mount -t devpts devpts /dev/pts && mount -t tmpfs tmp /tmp
echo 0 > /proc/sys/kernel/printk_ratelimit 2>/dev/null

# Kernel reports that fail the run: warnings, oopses, and the memory checks run-in-vm.sh turns
# on (SLUB: "BUG <cache>: Poison overwritten", "Redzone", ...; page poisoning: "pagealloc: memory
# corruption"; KFENCE: "BUG: KFENCE:"; DEBUG_LIST: "list_add corruption"; hardened usercopy;
# a task blocked for 120 s).
reports='WARNING:|BUG:|BUG [a-zA-Z]|Oops|Call Trace:|general protection|KASAN|UBSAN|KFENCE|corruption|Poison overwritten|Redzone|Object padding|Freepointer|usercopy:|stack-protector|blocked for more than'
finish() {
	rc=$1
	if dmesg | grep -E -q "$reports"; then
		echo "tpu-vm: the kernel log shows a warning, oops or memory check report:"
		dmesg | grep -E -B2 -A20 "$reports" | head -n 80
		[ "$rc" -eq 0 ] && rc=99
	fi
	echo "TPU-VM-EXIT rc=$rc"
	# QEMU exits with (code << 1) | 1 in 8 bits: 128 would read as 0, so 127 stands for 127-255
	# (run-in-vm.sh takes the full status from the line above).
	port=$rc
	[ "$port" -le 127 ] || port=127
	printf "\\$(printf %03o "$port")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	poweroff -f
}

while read -r mod; do
	insmod "/lib/modules/$mod" || { echo "tpu-vm: cannot load $mod"; finish 90; }
done < /lib/modules/load-order

src=$(sed -n 's/.*tpusrc=\([^ ]*\).*/\1/p' /proc/cmdline)
mkdir -p "$src"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 src "$src" || finish 91
mount -t 9p -o trans=virtio,version=9p2000.L job /job || finish 92
# run-in-vm.sh --out DIR: a read-write share at DIR (inside the read-only source tree or not).
out=$(sed -n 's/.*tpuout=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ -n "$out" ]; then
	mkdir -p "$out" 2>/dev/null
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out "$out" || finish 98
fi

# Loopback always; with run-in-vm.sh --forward, QEMU's user network (slirp: the host is 10.0.2.2).
ip link set lo up
if grep -q 'tpunet' /proc/cmdline; then
	ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 &&
		ip route add default via 10.0.2.2 || { echo "tpu-vm: cannot configure eth0"; finish 97; }
fi

if grep -q 'tpunodriver' /proc/cmdline; then
	echo "tpu-vm: not loading tpu.ko (tpunodriver)"
else
	args=$(sed -n 's/.*tpuargs=\([^ ]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
	# shellcheck disable=SC2086 # one word per module parameter
	insmod "$src/driver/tpu.ko" $args || { echo "tpu-vm: insmod tpu.ko $args failed"; finish 93; }
fi

cd "$src" || finish 94
if grep -q 'tpuinteractive' /proc/cmdline; then
	echo "tpu-vm: interactive shell; the source tree is at $src, 'poweroff -f' to leave"
	setsid cttyhack sh -l
	finish 0
fi
sh /job/run.sh
finish $?
