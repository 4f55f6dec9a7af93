#!/bin/sh
# Renders the README's stills into docs/stills/ with the built binary.
# Usage: scripts/stills.sh [path/to/tidepool]   (needs ImageMagick for the 2x2 tiling)
set -eu
BIN=${1:-build/tidepool}
OUT=docs/stills
CONVERT=/usr/bin/convert
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$OUT"

# still SCENE FRAME NAME: frame FRAME of SCENE as $OUT/NAME.png
still() {
	"$BIN" render "$1" -q -y --frames $(($2 + 1)) -o "$tmp/$3-%04d.png"
	cp "$(printf "%s/%s-%04d.png" "$tmp" "$3" "$2")" "$OUT/$3.png"
}

still scenes/pond.json 110 pond
still scenes/rain.json 99 rain
still scenes/boxes.json 99 boxes
still scenes/shallow_float.json 90 shallow_float
still scenes/sph_dambreak.json 45 sph_dambreak
still scenes/sph_box.json 90 sph_box
still scenes/rowing.json 360 rowing
still scenes/wind_pool.json 90 wind_pool

# One scene at two render sizes, both shown at 640x360: a 320x180 preview (pixels doubled)
# and a 1920x1080 final (area-averaged down): the same picture.
"$BIN" render scenes/boxes.json -q -y --scale 0.5 --frames 100 -o "$tmp/p-%04d.png"
"$BIN" render scenes/boxes.json -q -y --size 1920x1080 --frames 100 -o "$tmp/f-%04d.png"
$CONVERT "$tmp/p-0099.png" -filter point -resize 640x360 "$OUT/boxes_320.png"
$CONVERT "$tmp/f-0099.png" -filter box -resize 640x360 "$OUT/boxes_1920.png"

# A tileable caustics frame, tiled 2x2 to show there is no seam.
"$BIN" render scenes/textures/caustics_loop.json -q -y --range 30-30 -o "caustics=$tmp/c-%04d.png"
$CONVERT \( "$tmp/c-0030.png" "$tmp/c-0030.png" +append \) \
	\( "$tmp/c-0030.png" "$tmp/c-0030.png" +append \) -append "$OUT/caustics_2x2.png"
# Wind-wave caustics (airy, exact loop), tiled 2x2 likewise.
"$BIN" render scenes/textures/pool_caustics.json -q -y --range 30-30 -o "caustics=$tmp/w-%04d.png"
$CONVERT \( "$tmp/w-0030.png" "$tmp/w-0030.png" +append \) \
	\( "$tmp/w-0030.png" "$tmp/w-0030.png" +append \) -append "$OUT/pool_caustics_2x2.png"
# The preview page (docs/preview.md) in headless Chromium, as its browser test takes it.
TP_BIN="$BIN" TP_PREVIEW_STILL="$(pwd)/$OUT/preview.png" /usr/bin/python3 -m pytest -q \
	-p no:cacheprovider tests/browser/test_page.py -k screenshot >"$tmp/preview.log" 2>&1 ||
	{ cat "$tmp/preview.log"; exit 1; }

# Choppy ocean maps (docs/textures.md): frame 16 of scenes/textures/ocean_choppy.json as
# 16-bit PNGs brought to 8 bits: the displaced height (levelled over the frame), the
# normal map, the foam, the displacement (X Y Z as R G B around mid-grey, 4000 levels
# per height unit) tiled 2x2, and crops of the height without and with choppiness.
OC=scenes/textures/ocean_choppy.json
"$BIN" render "$OC" -q -y --frames 17 --set maps.height.scale=4000 -o "height=$tmp/oh-%04d.png" \
	-o "normal=$tmp/on-%04d.png" -o "foam=$tmp/of-%04d.png" -o "displacement=$tmp/od-%04d.png"
"$BIN" render "$OC" -q -y --frames 17 --set maps.height.scale=4000 --set ambient.choppiness=0 \
	--set outputs='[{"mode": "height", "path": "x.png"}]' -o "height=$tmp/o0-%04d.png"
$CONVERT "$tmp/oh-0016.png" -auto-level -depth 8 "$OUT/ocean_height.png"
$CONVERT "$tmp/on-0016.png" -depth 8 "$OUT/ocean_normal.png"
$CONVERT "$tmp/of-0016.png" -depth 8 "$OUT/ocean_foam.png"
$CONVERT \( "$tmp/od-0016.png" "$tmp/od-0016.png" +append \) \
	\( "$tmp/od-0016.png" "$tmp/od-0016.png" +append \) -append -resize 50% -depth 8 \
	"$OUT/ocean_displacement_2x2.png"
for c in o0 oh; do
	$CONVERT "$tmp/$c-0016.png" -crop 128x128+192+192 +repage -filter point -resize 256x256 \
		"$tmp/$c-crop.png"
done
$CONVERT "$tmp/o0-crop.png" "$tmp/oh-crop.png" +append -auto-level -depth 8 "$OUT/ocean_crests.png"
# Anti-aliased refraction (docs/internals.md): a grout line of rain.json refracted by a ring,
# frame 30 at 1920x1080, a 40x40 crop enlarged 8x (pixels as squares): one lookup a pixel
# (render.antialias false) on the left, the default on the right.
for aa in false true; do
	"$BIN" render scenes/rain.json -q -y --size 1920x1080 --range 30-30 --set render.antialias=$aa \
		-o "$tmp/aa-$aa-%04d.png"
	$CONVERT "$tmp/aa-$aa-0030.png" -crop 40x40+108+204 +repage -filter point -resize 320x320 \
		"$tmp/aa-$aa.png"
done
$CONVERT "$tmp/aa-false.png" -size 8x320 xc:white "$tmp/aa-true.png" +append "$OUT/refraction_aa.png"
echo "stills: $(ls "$OUT" | wc -l) images in $OUT"
