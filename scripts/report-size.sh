#!/bin/sh
# The size of compare's HTML report now and before its pictures became WebP (issue 47: at
# most a quarter, lossless), for the same frames and the same pictured frames (12, the
# default --html-frames), with and without FLIP maps.
#
#   sh scripts/report-size.sh [BIN] [BASE_REV]
#
# BIN: the tidepool to measure (default build/tidepool). BASE_REV: the commit to compare
# with (default 4dce4b3, the last before the WebP report); it is built once, from
# `git archive`, under build/report-base-REV. Both compare the same PNG frames, rendered by
# BIN into a temporary directory:
#   rain  scenes/rain.json, 60 frames, against the same with params.height_damping=6
#         (every frame from 4 on differs: the 12 worst are pictured)
#   pond  scenes/pond.json, 43 frames; B is A for frames 0-30 and
#         --set render.refraction=1.2 from 31 on (12 failing, all pictured)
# The figures (and why rain misses a quarter) are in docs/compare.md, "Size policy".
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "${1:-$root/build/tidepool}")" && pwd)/$(basename "${1:-build/tidepool}")
rev=${2:-4dce4b3}
[ -x "$bin" ] || { echo "report-size: $bin: no such program (make first)" >&2; exit 2; }

base_dir=$root/build/report-base-$rev
if [ ! -x "$base_dir/build/tidepool" ]; then
	echo "report-size: building $rev in $base_dir (once)" >&2
	rm -rf "$base_dir"
	mkdir -p "$base_dir"
	git -C "$root" archive "$rev" | tar -x -C "$base_dir"
	make -C "$base_dir" -s -j"$(nproc)" build/tidepool >"$base_dir.log" 2>&1 ||
		{ tail -20 "$base_dir.log"; exit 1; }
fi
base=$base_dir/build/tidepool

work=$(mktemp -d /tmp/report-size.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
cd "$root"
"$bin" render scenes/rain.json -q -y --frames 60 -o "$work/rain-a/%04d.png"
"$bin" render scenes/rain.json -q -y --frames 60 --set params.height_damping=6 -o "$work/rain-b/%04d.png"
"$bin" render scenes/pond.json -q -y --frames 43 -o "$work/pond-a/%04d.png"
"$bin" render scenes/pond.json -q -y --frames 43 --set render.refraction=1.2 -o "$work/pond-r/%04d.png"
mkdir -p "$work/pond-b"
for k in $(seq 0 42); do
	f=$(printf %04d.png "$k")
	if [ "$k" -le 30 ]; then cp "$work/pond-a/$f" "$work/pond-b/$f"; else cp "$work/pond-r/$f" "$work/pond-b/$f"; fi
done

size() { wc -c <"$1" | tr -d ' '; }
printf '%-6s %-6s %12s %12s %7s\n' scene maps before now ratio
for scene in rain pond; do
	for maps in "" flip; do
		opt=${maps:+--metric flip}
		# shellcheck disable=SC2086
		"$base" compare "$work/$scene-a/%04d.png" "$work/$scene-b/%04d.png" $opt -q \
			--html "$work/before.html" || [ $? -eq 1 ]
		# shellcheck disable=SC2086
		"$bin" compare "$work/$scene-a/%04d.png" "$work/$scene-b/%04d.png" $opt -q \
			--html "$work/now.html" || [ $? -eq 1 ]
		b=$(size "$work/before.html")
		n=$(size "$work/now.html")
		awk -v s="$scene" -v m="${maps:-none}" -v b="$b" -v n="$n" \
			'BEGIN { printf "%-6s %-6s %12d %12d %6.1f%%\n", s, m, b, n, 100 * n / b }'
	done
done
