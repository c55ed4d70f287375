#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# build-image.sh's list of what the stack's packages need from Debian: the packages named in the
# Depends and Pre-Depends of PACKAGE... in the local repository's index, followed through the
# repository's own packages (tpu-modules-KABI -> tpu-common -> adduser, kmod), one a line,
# sorted; the first of each set of alternatives, without versions or architecture qualifiers.
# The image's base root installs these, so that the stack's packages then install offline.
#   stack-depends.py PACKAGES_FILE PACKAGE...
import re
import sys


def stanzas(path):
    """Each package of a Packages file as {field: value} (continuation lines joined)."""
    with open(path, encoding="utf-8") as f:
        for block in f.read().split("\n\n"):
            fields, last = {}, None
            for line in block.splitlines():
                if line[:1] in (" ", "\t") and last:
                    fields[last] += " " + line.strip()
                elif ":" in line:
                    last, value = line.split(":", 1)
                    fields[last] = value.strip()
            if "Package" in fields:
                yield fields


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: stack-depends.py PACKAGES_FILE PACKAGE...")
    index = {p["Package"]: p for p in stanzas(sys.argv[1])}
    needed, pending, seen = set(), list(sys.argv[2:]), set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in index:
            sys.exit(f"stack-depends: {name} is not in {sys.argv[1]}")
        fields = index[name]
        for field in ("Pre-Depends", "Depends"):
            for dep in filter(None, (d.strip() for d in fields.get(field, "").split(","))):
                first = re.sub(r"\(.*?\)|\[.*?\]|:\w+", "", dep.split("|")[0]).strip()
                if first in index:
                    pending.append(first)
                else:
                    needed.add(first)
    print("\n".join(sorted(needed)))


if __name__ == "__main__":
    main()
