#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the guest: TPURT_PROFILE=trace.json makes a libtpurt program (tpu-demo) write its
# trace and print the per-op table at exit, and tpu-prof prints the same table from the file.
# Usage: check-profile.sh GUEST_BUILD_DIR
fail() { echo "check-profile: FAIL: $*"; exit 1; }
build=$1
trace=/tmp/tpu-demo-trace.json
rm -f "$trace"
TPURT_PROFILE=$trace "$build/tools/tpu-demo/tpu-demo" 64 >/tmp/demo.out 2>/tmp/demo.err ||
	fail "tpu-demo failed: $(cat /tmp/demo.out /tmp/demo.err)"
cat /tmp/demo.err
[ -s "$trace" ] || fail "no trace at $trace"
grep -q "tpurt profile: .* op calls, trace in $trace" /tmp/demo.err || fail "no table at exit"
"$build/tools/tpu-prof/tpu-prof" "$trace" >/tmp/prof.out || fail "tpu-prof failed"
cat /tmp/prof.out
# The table at exit and tpu-prof's are the same lines (tpu-prof adds its header line).
tail -n +2 /tmp/prof.out >/tmp/prof.table
grep -v "^tpurt profile:" /tmp/demo.err >/tmp/exit.table
cmp /tmp/prof.table /tmp/exit.table || fail "tpu-prof's table differs from the one at exit"
grep -q "^matmul int8 64x64x64 " /tmp/prof.table || fail "no int8 matmul in the table"
echo "check-profile: ok"
