#!/bin/sh
# Regenerates the golden frame-hash manifests, tests/golden/<scene>.manifest, one for
# every example scene scenes/<scene>.json (run by `make golden`).
#
# Each scene is rendered exactly as tests/test_golden.c renders it (ARGS below; the test
# checks they agree), and `tidepool compare --update` rewrites only the frames whose hash
# changed and lists them, so `git diff tests/golden` shows what an output change did.
# Usage: scripts/golden.sh [path/to/tidepool]
set -eu

BIN=${1:-build/tidepool}
ARGS="-q -o null --frames 16"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

status=0
for scene in scenes/*.json; do
	name=$(basename "$scene" .json)
	# shellcheck disable=SC2086
	"$BIN" render "$scene" $ARGS --threads 1 --hash "$tmp/$name.manifest"
	echo "golden: $name"
	"$BIN" compare --update "tests/golden/$name.manifest" "$tmp/$name.manifest" || status=1
done
# airy scenes: their height maps too, tests/golden/airy/<scene>-height.manifest (checked
# by tests/test_airy.c), which the renderer's look does not change.
mkdir -p tests/golden/airy
for scene in $(grep -l '"solver": "airy"' scenes/*.json); do
	name=$(basename "$scene" .json)
	"$BIN" render "$scene" -q -o height=null --frames 16 --threads 1 --hash "$tmp/$name-height.manifest"
	echo "golden: $name (height)"
	"$BIN" compare --update "tests/golden/airy/$name-height.manifest" "$tmp/$name-height.manifest" ||
		status=1
done
exit $status
