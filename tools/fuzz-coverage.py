#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# fuzz-coverage.py - the coverage of the card's QEMU sources a libFuzzer corpus reaches, from one
# run of the fuzz binary with -runs=0 -print_full_coverage=1 -print_coverage=1 over the corpus
# (tools/run-qemu-fuzz.sh --coverage). Prints, for each file matching PATTERN, its functions,
# edges and lines reached:
#   functions  functions with at least one edge run
#   edges      the instrumented edges run (libFuzzer's PC table; ASan and UBSan checks are edges)
#   lines      source lines carrying at least one instrumented edge, and those of them whose
#              edges ran at least once
# libFuzzer prints both reports function by function in the same order: -print_coverage names the
# function, its file and the file:line of each edge not run; -print_full_coverage lists each
# function's line numbers of the edges not run ("U ...") and run ("C ..."). A line number of an
# edge run is taken to be in the function's own file unless the function's uncovered edges name
# that line in another file only (code inlined from a header).
#   tools/fuzz-coverage.py COVERAGE_LOG PATTERN
import re
import sys
from collections import defaultdict

HEADER = re.compile(r"^(UN)?COVERED_FUNC: hits: (\d+) edges: (\d+)/(\d+) (.*) (\S+):(\d+)$")
UNCOVERED_PC = re.compile(r"^\s+UNCOVERED_PC: (\S+):(\d+)$")


def parse(path):
    """The functions of both reports, zipped: (file, edges run, edges, [(file, line) not run],
    [line run], [line not run])."""
    full, functions = [], []
    section = None
    with open(path, errors="replace") as log:
        for line in log:
            line = line.rstrip("\n")
            if line == "FULL COVERAGE:":
                section = "full"
            elif line == "COVERAGE:":
                section = "coverage"
            elif section == "full" and (line == "U" or line.startswith("U ")):
                full.append([[int(n) for n in line.split()[1:]], None])
            elif section == "full" and (line == "C" or line.startswith("C ")):
                full[-1][1] = [int(n) for n in line.split()[1:]]
            elif section == "coverage" and (m := HEADER.match(line)):
                functions.append([m.group(6), int(m.group(3)), int(m.group(4)), []])
            elif section == "coverage" and (m := UNCOVERED_PC.match(line)):
                functions[-1][3].append((m.group(1), int(m.group(2))))
    if not functions or len(full) != len(functions):
        sys.exit(f"fuzz-coverage: {path}: {len(functions)} functions in -print_coverage's report, "
                 f"{len(full)} in -print_full_coverage's: run the binary with both flags")
    return [(f[0], f[1], f[2], f[3], run, not_run) for f, (not_run, run) in zip(functions, full)]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: fuzz-coverage.py COVERAGE_LOG PATTERN")
    pattern = re.compile(sys.argv[2])
    funcs, funcs_run, edges, edges_run = (defaultdict(int) for _ in range(4))
    lines, lines_run = defaultdict(set), defaultdict(set)
    for file, run, total, not_run_at, run_lines, not_run_lines in parse(sys.argv[1]):
        if not pattern.search(file):
            continue
        name = file.rsplit("/", 1)[-1]
        funcs[name] += 1
        funcs_run[name] += run > 0
        edges[name] += total
        edges_run[name] += run
        elsewhere = {line for f, line in not_run_at if f != file}
        here = {line for f, line in not_run_at if f == file}
        if run == 0:
            # No UNCOVERED_PC lines for a function never entered: take its lines as its file's.
            here = set(not_run_lines)
        lines[name] |= {n for n in here if n > 0}
        for n in run_lines:
            if n > 0 and (n not in elsewhere or n in here):
                lines[name].add(n)
                lines_run[name].add(n)
    if not funcs:
        sys.exit(f"fuzz-coverage: no function of a file matching {sys.argv[2]} in {sys.argv[1]}")
    for name in sorted(funcs):
        print(f"{name}: functions {funcs_run[name]}/{funcs[name]}, "
              f"edges {edges_run[name]}/{edges[name]} ({100 * edges_run[name] / edges[name]:.0f}%), "
              f"lines {len(lines_run[name])}/{len(lines[name])} "
              f"({100 * len(lines_run[name]) / len(lines[name]):.0f}%)")


if __name__ == "__main__":
    main()
