#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the guest (ctest vm_old_card, issue 24 item 6): two cards, one of them reporting
# spec 1.2 (QEMU's x-spec-version=0x10002: no CAPS.TLB_DONE, so freed pages could not be known
# out of its reach) and one current. tpu.ko must refuse the old card at probe with its message
# and drive the current one: exactly one card bound, one /dev/accel node, and test_uapi and
# test_tensors pass on it. (An oops or memory-check report fails the run in guest-init.sh.)
#
#   check-old-card.sh GUEST_BUILD_DIR
fail() {
	echo "check-old-card: FAIL: $*"
	dmesg | grep -i tpu | tail -n 20
	exit 1
}
build=$1
bound=
refused=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x7470 ] || continue
	if [ -L "$d/driver" ]; then
		bound="$bound ${d##*/}"
	else
		refused="$refused ${d##*/}"
	fi
done
echo "check-old-card: bound:$bound; without a driver:$refused"
[ "$(echo $bound | wc -w)" -eq 1 ] || fail "want one card bound to tpu.ko, have:$bound"
[ "$(echo $refused | wc -w)" -eq 1 ] || fail "want one card refused, have:$refused"
refused=${refused# }
dmesg | grep "$refused.*spec 1.2 card without TLB_INVAL_DONE (spec 1.3): not supported" ||
	fail "no refusal of the spec 1.2 card $refused in the kernel log"
nodes=$(ls /dev/accel)
[ "$nodes" = accel0 ] || fail "want /dev/accel/accel0 alone, have: $nodes"
"$build/tests/guest/test_uapi" --use-colour no -w NoTests || fail "test_uapi on the current card"
"$build/tests/guest/test_tensors" --use-colour no -w NoTests || fail "test_tensors on the current card"
echo "check-old-card: PASS"
