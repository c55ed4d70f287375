#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# qemu-memory.py - the resident memory of a running QEMU, split by what holds it, from
# /proc/PID/smaps: the guest's RAM (the anonymous mapping of the guest's memory size: all of it
# resident once the guest kernel has poisoned its free pages), TCG's translated code (the
# anonymous executable mapping; bounded by its size, flushed when full) and the rest, QEMU's own:
# its heap, thread stacks, code, and the cards' on-chip memories and engine state. The rest is
# what must not grow over a soak.
#   qemu-memory.py PID GUEST_RAM_MIB     prints "own_kib tcg_kib guest_kib"
import re
import sys

MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: qemu-memory.py PID GUEST_RAM_MIB")
    pid, guest_kib = sys.argv[1], int(sys.argv[2]) * 1024
    totals = {"own": 0, "tcg": 0, "guest": 0}
    kind = None
    try:
        with open(f"/proc/{pid}/smaps") as smaps:
            for line in smaps:
                if m := MAPPING.match(line):
                    size_kib = (int(m.group(2), 16) - int(m.group(1), 16)) // 1024
                    perms, name = m.group(3), m.group(4)
                    if not name and size_kib == guest_kib:
                        kind = "guest"
                    elif not name and perms == "rwxp":
                        kind = "tcg"
                    else:
                        kind = "own"
                elif line.startswith("Rss:"):
                    totals[kind] += int(line.split()[1])
    except OSError as err:
        sys.exit(f"qemu-memory: {err}")
    print(totals["own"], totals["tcg"], totals["guest"])


if __name__ == "__main__":
    main()
