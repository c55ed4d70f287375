#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetches the real data sets the workloads train and evaluate on, from Debian's archive, without
# installing anything: `apt-get download` + `dpkg -x` into the cache.
#   dataset-fashion-mnist  Fashion-MNIST, 60,000 + 10,000 28x28 images (gzipped idx files)
#   python3-sklearn        scikit-learn's bundled sets; digits.csv.gz (1,797 8x8 digits) is used
#   libonnx-testdata       ONNX's backend conformance suite (node tests: model.onnx + test data)
# Result:
#   $TPU_CACHE/datasets/<package>_<version>/     the unpacked package (.done once complete)
#   $TPU_CACHE/datasets/fashion-mnist            -> its usr/share/datasets/fashion-mnist
#   $TPU_CACHE/datasets/sklearn                  -> its .../sklearn/datasets/data
#   $TPU_CACHE/datasets/onnx-testdata            -> its usr/share/libonnx-testdata/data
# The Fashion-MNIST idx files are also kept inflated beside the .gz files (the readers take the
# plain file when it exists): the guest's emulated CPU inflates them at a few MB/s, which every
# VM run that loads them would pay again.
# Re-runnable: a package counts as fetched only after it was unpacked completely.
set -euo pipefail
cache=${TPU_CACHE:-$HOME/.cache/tpu-stack}
dest=$cache/datasets
mkdir -p "$dest"

# fetch PACKAGE LINK SUBDIR: unpacks PACKAGE's candidate version, points LINK at SUBDIR inside it.
fetch() {
	local pkg=$1 link=$2 sub=$3 version dir
	version=$(apt-cache policy "$pkg" | sed -n 's/^  Candidate: //p')
	[ -n "$version" ] && [ "$version" != "(none)" ] ||
		{ echo "fetch-datasets: package $pkg not in apt's lists (run tools/setup-host.sh)" >&2; exit 1; }
	dir=$dest/${pkg}_${version//:/%3a}
	if [ ! -f "$dir/.done" ]; then
		echo "fetch-datasets: fetching $pkg $version"
		rm -rf "$dir" && mkdir -p "$dir/deb"
		(cd "$dir/deb" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$version" >/dev/null)
		dpkg -x "$dir"/deb/*.deb "$dir/root"
		rm -rf "$dir/deb"
		[ -d "$dir/root/$sub" ] || { echo "fetch-datasets: $pkg has no $sub" >&2; exit 1; }
		touch "$dir/.done"
	fi
	# Relative, so that the link holds however the cache is reached (a symlinked cache too).
	ln -sfn "${dir#"$dest/"}/root/$sub" "$dest/$link"
	echo "fetch-datasets: $link in $dest/$link"
}

fetch dataset-fashion-mnist fashion-mnist usr/share/datasets/fashion-mnist
for gz in "$dest"/fashion-mnist/*.gz; do
	plain=${gz%.gz}
	[ -e "$plain" ] || { gzip -dc "$gz" >"$plain.tmp" && mv "$plain.tmp" "$plain"; }
done
fetch python3-sklearn sklearn usr/lib/python3/dist-packages/sklearn/datasets/data
fetch libonnx-testdata onnx-testdata usr/share/libonnx-testdata/data
