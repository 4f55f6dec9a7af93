#!/bin/sh
# Regenerates the golden frame-hash manifests of the texture scenes,
# tests/golden/textures/<scene>-<mode>.manifest, one per scene in scenes/textures/ and
# mode of its "outputs" (run by `make golden`).
#
# Each is rendered exactly as tests/test_textures.c renders it (ARGS below; the test
# checks they agree) but with one thread where the test uses two, and
# `tidepool compare --update` rewrites only the frames whose hash changed and lists them.
# Usage: scripts/golden-textures.sh [path/to/tidepool]
set -eu

BIN=${1:-build/tidepool}
ARGS="-q --size 64x64 --range 0-5"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p tests/golden/textures

status=0
for scene in scenes/textures/*.json; do
	name=$(basename "$scene" .json)
	modes=$(grep -o '"mode": *"[a-z]*"' "$scene" | sed 's/.*"\([a-z]*\)"$/\1/')
	for mode in $modes; do
		# shellcheck disable=SC2086
		"$BIN" render "$scene" $ARGS --threads 1 -o "$mode=null" --hash "$tmp/$name-$mode.manifest"
		echo "golden: $name ($mode)"
		"$BIN" compare --update "tests/golden/textures/$name-$mode.manifest" "$tmp/$name-$mode.manifest" ||
			status=1
	done
done
exit $status
