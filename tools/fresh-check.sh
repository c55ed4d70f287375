#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fresh-check.sh - the fresh-machine check: does a bare Debian 12 run the README's commands?
#
# Builds (once per day, cached) a minimal Debian 12 root with debootstrap (variant minbase plus
# git and ca-certificates, what a person needs to clone), unpacks a copy, clones this repository
# into it from a bare copy of its HEAD commit and, chrooted into it as root with /proc, /sys and
# /dev bound, runs the README's first command exactly as written, then the host part of the tests
# (ctest without the VM entries, and without the Python tutorial: three minutes of training that
# make test runs). The command is read from the README itself: the lines of its
# first ```sh block up to and including `make demo` (the ones before it install what a bare
# Debian lacks). Before `make demo` runs as written it is started once and interrupted (SIGINT, as
# Ctrl-C does) while CMake configures, so the check also shows that an interrupted first run is
# finished by the next one. Nothing of the host's installed packages is shared:
# the root installs everything itself. Shared with the root: the machine's apt sources and local
# apt settings (how this machine reaches the archive), DNS, and the stack's ccache directory,
# which only shortens compiles.
#
# Usage: tools/fresh-check.sh
# Environment:
#   TPU_CACHE        cache directory (default $HOME/.cache/tpu-stack): holds fresh-root/<suite>-<date>.tar
#                    (the bare root) and ccache/ (bound into the root)
#   FRESH_DIR        where the root is unpacked (default /var/tmp/tpu-fresh-check), wiped each run
#   FRESH_KEEP=1     keep the unpacked root after a successful run (it is always kept after a failure)
#   FRESH_DEMO_TRAIN_ARGS  tpu-train's options for the demo's training in the root (default: one
#                    short epoch of the CNN: the check is about installing and running the whole
#                    story, not the accuracy, which `make demo` on the host shows)
#   FRESH_DEMO_PARALLEL_ARGS  the same for the demo's data-parallel training on four cards
# Output: every line of the check, prefixed with the seconds since it started, on stdout and in
# build/fresh-check/fresh-check.log; a per-step time table at the end. Exit status 0 iff every step
# passed. Uncommitted changes are not part of the check (it clones HEAD): a warning says so.
set -euo pipefail

suite=bookworm
script=$(readlink -f "${BASH_SOURCE[0]}")
repo=$(dirname "$(dirname "$script")")
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
work=${FRESH_DIR:-/var/tmp/tpu-fresh-check}
root=$work/root
logdir=$repo/build/fresh-check
log=$logdir/fresh-check.log
start=$SECONDS

die() {
	echo "fresh-check: $*" >&2
	exit 1
}
say() {
	printf '[%4d s] fresh-check: %s\n' $((SECONDS - start)) "$*" | tee -a "$log"
}

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, chroot and bind mounts need it)"
command -v debootstrap >/dev/null || die "debootstrap missing: run tools/setup-host.sh (package debootstrap)"
mkdir -p "$logdir" "$cache/fresh-root" "$cache/ccache"
: >"$log"

sha=$(git -C "$repo" rev-parse HEAD)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
	say "warning: uncommitted changes in $repo are not checked, only HEAD ($sha)"

# ---- the bare root, cached per suite and day -------------------------------------------------
mirror=$(sed -n 's|^URIs: *\(http[^ ]*/debian\)/*$|\1|p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	sed -n 1p)
mirror=${mirror:-http://deb.debian.org/debian}
bare=$cache/fresh-root/$suite-$(date -u +%F).tar
if [ ! -f "$bare" ]; then
	say "debootstrap $suite (minbase + git, ca-certificates) from $mirror"
	tmp=$work/debootstrap
	rm -rf "$tmp"
	mkdir -p "$tmp"
	debootstrap --variant=minbase --include=git,ca-certificates "$suite" "$tmp" "$mirror" \
		>"$logdir/debootstrap.log" 2>&1 || {
		tail -n 20 "$logdir/debootstrap.log" >&2
		die "debootstrap failed (log: $logdir/debootstrap.log)"
	}
	tar -C "$tmp" -cf "$bare.partial" .
	mv "$bare.partial" "$bare"
	rm -rf "$tmp"
	find "$cache/fresh-root" -name "$suite-*.tar" ! -path "$bare" -delete
fi
say "bare root $bare"

# ---- a fresh copy of it, with the machine's archive settings and the repository ------------------
# Ends whatever still runs inside the root (a failed step's children), then unmounts it.
unmount_all() {
	local p
	for p in /proc/[0-9]*; do
		[[ "$(readlink "$p/root" 2>/dev/null)" == "$root"* ]] && { kill -9 "${p#/proc/}" 2>/dev/null || true; }
	done
	for m in proc sys dev root/.cache/tpu-stack/ccache; do
		mountpoint -q "$root/$m" && umount -R -l "$root/$m"
	done
	return 0
}
if [ -d "$root" ]; then
	unmount_all
	rm -rf --one-file-system "$root"
fi
mkdir -p "$root"
tar -C "$root" -xf "$bare"

# How this machine reaches Debian's archive: its sources (not the stack's own, which the set-up
# must add by itself) and its local apt settings, e.g. accepting the mirror's Release dates.
rm -f "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] || continue
	[ "$(basename "$f")" = tpu-stack.sources ] && continue
	cp "$f" "$root$f"
done
for f in /etc/apt/apt.conf.d/99*; do
	[ -f "$f" ] && cp "$f" "$root$f"
done
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/hosts "$root/etc/hosts"

git clone -q --bare --no-local "$repo" "$root/srv/tpu-stack.git"

trap unmount_all EXIT
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
mkdir -p "$root/root/.cache/tpu-stack/ccache"
mount --bind "$(readlink -f "$cache/ccache")" "$root/root/.cache/tpu-stack/ccache"

# ---- the steps, as a new user types them ------------------------------------------------------
# The README's first command: its first ```sh block, comments dropped, up to `make demo`. awk
# reads the whole README (no early exit): under pipefail, git show killed by SIGPIPE would fail
# the check (exit 141) whenever awk stopped reading before git had written its last block.
readme_lines=$(git -C "$repo" show "$sha:README.md" | awk '
	/^```sh$/ && !seen { inblock = 1; seen = 1; next }
	inblock && /^```/ { inblock = 0; next }
	inblock { sub(/[ \t]+#.*$/, ""); print; if ($0 ~ /^make demo$/) inblock = 0 }')
[ "$(printf '%s\n' "$readme_lines" | tail -n1)" = "make demo" ] ||
	die "README.md's first sh block does not reach 'make demo': $readme_lines"
prerequisites=$(printf '%s\n' "$readme_lines" | sed '$d')
say "the README's first command: $(printf '%s; ' "$readme_lines")"
# Starts `make demo` as a job of its own (job control on, so it gets its own process group, as
# in a terminal) and sends that group SIGINT 0.3 s after the host tree's CMake configure began
# (it takes about 2 s). Fails if the run ended before it could be interrupted, or if the
# interrupt came after CMake had finished (then it would not have tested an interrupted configure).
interrupt_demo='set -m; : >/tmp/interrupted-demo.log
make demo >/tmp/interrupted-demo.log 2>&1 & pid=$!
tail -n +1 -f --pid=$pid /tmp/interrupted-demo.log &
while ! grep -q "^cmake -S . -B build/host" /tmp/interrupted-demo.log; do
	kill -0 $pid 2>/dev/null || { echo "make demo ended before configure"; exit 1; }
	sleep 0.1
done
sleep 0.3; kill -INT -- -$pid; wait $pid; rc=$?
sleep 1
[ $rc -ne 0 ] || { echo "make demo was not interrupted"; exit 1; }
[ ! -f build/host/.configured ] || { echo "the interrupt came after configure had finished"; exit 1; }
echo "make demo interrupted during configure (exit $rc)"'
steps=(
	"clone|git clone /srv/tpu-stack.git /root/tpu-stack && git -C /root/tpu-stack checkout -q --detach $sha"
	"README prerequisites|cd /root/tpu-stack && ${prerequisites:-true}"
	"interrupted|cd /root/tpu-stack && $interrupt_demo"
	"make demo|cd /root/tpu-stack && make demo"
	"host tests|cd /root/tpu-stack && ctest --test-dir build/host -LE vm -E '^python:test_tutorial' -j $(nproc) --output-on-failure"
)
times=()
for entry in "${steps[@]}"; do
	name=${entry%%|*}
	cmd=${entry#*|}
	say "step '$name': $cmd"
	t0=$SECONDS
	set +e
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		DEMO_TRAIN_ARGS="${FRESH_DEMO_TRAIN_ARGS:---model cnn --optimizer adam --epochs 1 --limit 3000}" \
		DEMO_PARALLEL_ARGS="${FRESH_DEMO_PARALLEL_ARGS:---model cnn --optimizer adam --epochs 1 --limit 3000 --batch 256}" \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "$cmd" 2>&1 | while IFS= read -r line; do
		printf '[%4d s] %s\n' $((SECONDS - start)) "$line"
	done | tee -a "$log"
	rc=${PIPESTATUS[0]}
	set -e
	times+=("$(printf '%-22s %5d s' "$name" $((SECONDS - t0)))")
	if [ "$rc" -ne 0 ]; then
		say "step '$name' FAILED (exit $rc); the root is kept in $root, log $log"
		printf '  %s\n' "${times[@]}" | tee -a "$log"
		exit 1
	fi
done

say "passed on a bare $suite root at $sha in $((SECONDS - start)) s:"
printf '  %s\n' "${times[@]}" | tee -a "$log"
if [ "${FRESH_KEEP:-0}" != 1 ]; then
	unmount_all
	rm -rf --one-file-system "$root"
fi
