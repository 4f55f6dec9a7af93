#!/bin/sh
# check-blender.sh [BIN] [SIZE] [STILL.png] - docs/textures.md's Blender recipe, in Blender
# (`make check-blender`, run by `make test`):
#   1. renders scenes/textures/ocean_choppy.json at SIZE x SIZE texels (default 128; the
#      same 64 m tile and 64-frame loop) as displacement, normal, foam and height EXRs
#      and 16-bit PNG normal maps, and the foam again without the example's
#      ambient.foam.range (foamraw, for the check that must fail);
#   2. builds the recipe in headless Blender (tests/blender/check_ocean.py) and checks the
#      evaluated mesh, the frame mapping, the axes, the seams, the foam and the normal map
#      against the EXRs read by OpenImageIO, and that foam covers at most a third of it;
#   3. builds the recipe as first written (--mutate literal) and requires its vertex, seam,
#      foam, foam cover and normal checks to fail, so that a check that cannot fail does
#      not pass.
# With STILL.png, also renders a still of the sea with Cycles (docs/stills/blender_ocean.png
# is `scripts/check-blender.sh build/tidepool 512 docs/stills/blender_ocean.png`).
# Needs Debian's blender and python3-openimageio (scripts/install-deps.sh installs them).
set -eu

BIN=$(realpath "${1:-build/tidepool}")
SIZE=${2:-128}
STILL=${3:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCENE=$ROOT/scenes/textures/ocean_choppy.json
PY=$ROOT/tests/blender/check_ocean.py

fail() {
	echo "check-blender: FAIL: $*" >&2
	exit 1
}

command -v blender >/dev/null 2>&1 ||
	fail "blender is not installed (make deps, or apt-get install --no-install-recommends blender)"
[ -x "$BIN" ] || fail "$BIN is not executable (make first)"
case "$STILL" in
"" | /*) ;;
*) STILL=$(pwd)/$STILL ;;
esac

WORK=$(mktemp -d /tmp/tidepool-blender.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM

# The tile in metres, the loop's frames and the frame rate, from the scene itself.
# shellcheck disable=SC2046 # three numbers, split on purpose
set -- $(/usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["size"][0] * s["params"]["metres"], int(round(s["loop"]["duration"] * s["fps"])), s["fps"])
' "$SCENE")
TILE=$1 FRAMES=$2 FPS=$3

"$BIN" render "$SCENE" -y --size "${SIZE}x$SIZE" \
	-o "displacement=$WORK/disp_%04d.exr" -o "normal=$WORK/normal_%04d.exr" \
	-o "foam=$WORK/foam_%04d.exr" -o "height=$WORK/height_%04d.exr" \
	-o "normal=$WORK/normalpng_%04d.png" --set maps.normal.bits=16 >"$WORK/render.log" 2>&1 ||
	{ cat "$WORK/render.log" >&2; fail "tidepool render of $SCENE"; }
"$BIN" render "$SCENE" -y --size "${SIZE}x$SIZE" --set 'ambient.foam.range=[0, 1]' \
	-o "foam=$WORK/foamraw_%04d.exr" >"$WORK/render.log" 2>&1 ||
	{ cat "$WORK/render.log" >&2; fail "tidepool render of $SCENE (foam without its range)"; }

# blender ARGS... -- CHECK-ARGS...: the check's own lines on stdout, the rest in a log.
run() {
	log=$1
	shift
	rc=0
	blender -b --factory-startup --python-exit-code 1 --python "$PY" -- \
		--maps "$WORK" --size "$SIZE" --tile "$TILE" --frames "$FRAMES" --fps "$FPS" \
		--height-dir "$WORK" "$@" >"$log" 2>&1 || rc=$?
	return $rc
}

echo "check-blender: $(blender --version 2>/dev/null | head -1), ${SIZE}x$SIZE texels"
rc=0
if [ -n "$STILL" ]; then
	run "$WORK/check.log" --still "$WORK/still.png" --still-samples 64 || rc=$?
else
	run "$WORK/check.log" || rc=$?
fi
grep -E '^(ok|FAIL|      if) ' "$WORK/check.log" | sed 's/^/  /'
if [ $rc -ne 0 ]; then
	grep -q '^check_ocean: .*FAILED' "$WORK/check.log" || tail -30 "$WORK/check.log" >&2
	fail "the Blender recipe of docs/textures.md does not hold (exit $rc; lines FAIL above)"
fi
if [ -n "$STILL" ]; then # 256 colours: a third of the size, no visible banding on the sea
	convert "$WORK/still.png" -strip -colors 256 -dither None "$STILL.tmp.png"
	mv "$STILL.tmp.png" "$STILL"
	echo "check-blender: wrote $STILL"
fi

# The recipe as first written must fail: Clamp and Interpolation left on, the Arrays by
# relative offset, the EXR normal straight into the Normal Map node, the foam's UV as is,
# the foam unshaped.
rc=0
run "$WORK/literal.log" --mutate literal || rc=$?
n=$(grep -cE '^FAIL  (frame 1:|X seam|foam:|foam cover:|flat plane)' "$WORK/literal.log" || true)
if [ $rc -ne 1 ] || [ "$n" -ne 5 ]; then
	tail -30 "$WORK/literal.log" >&2
	fail "the check does not catch the old recipe's mistakes (exit $rc; $n of the 5 checks failed)"
fi
echo "check-blender: ok (and the old recipe fails the vertex, seam, foam, foam cover and normal checks)"
