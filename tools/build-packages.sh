#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the stack's Debian packages into build/packages/ and makes that folder a local apt
# repository (Packages, Packages.gz, Release), for `deb [trusted=yes] file:/...build/packages ./`:
#   tpu-common, tpu-dkms, libtpurt0, libtpurt-dev, tpu-tools   dpkg-buildpackage -b of debian/,
#       in a copy of the working tree (tracked and untracked, not ignored, files) under
#       build/packages/work/, so that dpkg-buildpackage's outputs land there, not beside the checkout
#   tpu-modules-KABI   tpu.ko built by DKMS for the cached guest kernel (tools/dkms-check.sh),
#       packaged from the template debian/module-package/
# Compiles go through the stack's ccache. Re-runnable: the packages are rebuilt only when the
# copied tree or the guest kernel changed (build/packages/.stamp holds the key of the last
# complete build, written after the repository index); -debug symbols go to build/packages/dbgsym/.
# Usage: tools/build-packages.sh      (JOBS=n: parallel jobs, default nproc)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
out=$src/build/packages
work=$out/work
logs=$out/logs
jobs=${JOBS:-$(nproc)}
start=$SECONDS

die() {
	echo "build-packages: $*" >&2
	exit 1
}
say() { printf '[%4d s] build-packages: %s\n' $((SECONDS - start)) "$*"; }
for tool in dpkg-buildpackage dh dh_dkms dpkg-scanpackages apt-ftparchive dkms; do
	command -v "$tool" >/dev/null || die "$tool missing: run tools/setup-host.sh"
done
kabi=$("$src/tools/guest-kabi.sh")
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
maintainer=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Maintainer)
date=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Date)

# ---- the tree to package: what git would commit ----------------------------------------------
stage=$work/tpu-stack-$version
rm -rf "$work"
mkdir -p "$stage" "$logs"
git -C "$src" ls-files -z --cached --others --exclude-standard |
	tar -C "$src" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$stage" -xf -
key=$( (
	cd "$stage"
	find . -type f -print0 | sort -z | xargs -0 sha256sum
	echo "$kabi"
) | sha256sum | cut -c1-16)
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$key" ]; then
	rm -rf "$work"
	say "up to date ($key): $(ls "$out"/*.deb | wc -l) packages in $out"
	exit 0
fi
rm -f "$out/.stamp" "$out"/*.deb "$out"/Packages* "$out"/Release
rm -rf "$out/dbgsym"

# ---- tpu-common, tpu-dkms, libtpurt0, libtpurt-dev, tpu-tools ---------------------------------
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache} CCACHE_BASEDIR=$stage
say "dpkg-buildpackage of tpu-stack $version (log $logs/tpu-stack.log)"
(cd "$stage" && dpkg-buildpackage -us -uc -b -j"$jobs") >"$logs/tpu-stack.log" 2>&1 || {
	tail -n 40 "$logs/tpu-stack.log" >&2
	die "dpkg-buildpackage of tpu-stack failed (log: $logs/tpu-stack.log)"
}

# ---- tpu-modules-KABI: tpu.ko as DKMS builds it, for the guest kernel --------------------------
say "tpu.ko through DKMS for $kabi (log $logs/dkms.log)"
"$src/tools/dkms-check.sh" >"$logs/dkms.log" 2>&1 || {
	tail -n 40 "$logs/dkms.log" >&2
	die "DKMS could not build tpu.ko for $kabi (log: $logs/dkms.log)"
}
ko=$(find "$src/build/dkms/tree/tpu" -path "*/$kabi/*" -name 'tpu.ko*' | head -n1)
[ -n "$ko" ] || die "DKMS built no tpu.ko for $kabi"
mstage=$work/tpu-modules-$kabi-$version
mkdir -p "$mstage/module" "$mstage/debian/source"
cp "$ko" "$mstage/module/"
for f in "$src"/debian/module-package/{control.in,rules,postinst,prerm,postrm}; do
	name=$(basename "$f" .in)
	case $name in postinst | prerm | postrm) name=tpu-modules-$kabi.$name ;; esac
	sed -e "s/@KABI@/$kabi/g" -e "s/@VERSION@/$version/g" "$f" >"$mstage/debian/$name"
done
chmod +x "$mstage/debian/rules"
cp "$src/debian/copyright" "$mstage/debian/"
echo '3.0 (native)' >"$mstage/debian/source/format"
cat >"$mstage/debian/changelog" <<CHANGELOG
tpu-modules-$kabi ($version) unstable; urgency=medium

  * tpu.ko of tpu-stack $version, built by DKMS for Linux $kabi.

 -- $maintainer  $date
CHANGELOG
say "dpkg-buildpackage of tpu-modules-$kabi (log $logs/tpu-modules.log)"
(cd "$mstage" && dpkg-buildpackage -us -uc -b) >"$logs/tpu-modules.log" 2>&1 || {
	tail -n 40 "$logs/tpu-modules.log" >&2
	die "dpkg-buildpackage of tpu-modules-$kabi failed (log: $logs/tpu-modules.log)"
}

# ---- the local apt repository -----------------------------------------------------------------
mkdir -p "$out/dbgsym"
mv "$work"/*-dbgsym_*.deb "$out/dbgsym/"
mv "$work"/*.deb "$out/"
rm -rf "$work"
(
	cd "$out"
	dpkg-scanpackages --multiversion . /dev/null 2>"$logs/scanpackages.log" >Packages.tmp
	gzip -9nc Packages.tmp >Packages.gz.tmp
	mv Packages.tmp Packages
	mv Packages.gz.tmp Packages.gz
	apt-ftparchive -o APT::FTPArchive::Release::Origin=tpu-stack \
		-o APT::FTPArchive::Release::Label=tpu-stack release . >Release.tmp
	mv Release.tmp Release
)
echo "$key" >"$out/.stamp"
say "done in $((SECONDS - start)) s: apt repository $out"
(cd "$out" && ls -s --block-size=K ./*.deb)
