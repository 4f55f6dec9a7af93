#!/bin/sh
# check-blender-addon.sh [BIN] [ZIP] [STILL.png] - the tidepool Ocean add-on (blender/),
# installed from its zip (make blender-zip) into a scratch user scripts folder of headless
# Blender and checked by tests/blender/check_addon.py (run by `make check-blender`): the
# operator, each vertex against its texel, the seams, the loop, the panel's settings and
# Bake, Save and Load Scene, a cancelled bake, and maps byte-identical to `tidepool render`.
# Then, under xvfb-run, the modal bake with Blender's interface running
# (tests/blender/check_addon_ui.py: the event loop runs while it bakes, Esc cancels).
# With STILL.png, also renders a still of the add-on's sea.
set -eu

BIN=$(realpath "${1:-build/tidepool}")
ZIP=$(realpath "${2:-build/tidepool_blender.zip}")
STILL=${3:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

fail() {
	echo "check-blender-addon: FAIL: $*" >&2
	exit 1
}

command -v blender >/dev/null 2>&1 ||
	fail "blender is not installed (make deps, or apt-get install --no-install-recommends blender)"
[ -f "$ZIP" ] || fail "$ZIP is missing (make blender-zip)"
case "$STILL" in
"" | /*) ;;
*) STILL=$(pwd)/$STILL ;;
esac

WORK=$(mktemp -d /tmp/tidepool-addon.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
mkdir -p "$WORK/scripts" "$WORK/blend"

echo "check-blender-addon: $(blender --version 2>/dev/null | head -1), $(basename "$ZIP")"
rc=0
BLENDER_USER_SCRIPTS=$WORK/scripts blender -b --factory-startup --python-exit-code 1 \
	--python "$ROOT/tests/blender/check_addon.py" -- --zip "$ZIP" --bin "$BIN" \
	--work "$WORK/blend" ${STILL:+--still "$WORK/still.png"} >"$WORK/check.log" 2>&1 || rc=$?
grep -E '^(ok|FAIL) ' "$WORK/check.log" | sed 's/^/  /'
if [ $rc -ne 0 ]; then
	grep -q '^check_addon: .*FAILED' "$WORK/check.log" || tail -30 "$WORK/check.log" >&2
	fail "the add-on does not hold (exit $rc; lines FAIL above)"
fi
# The modal bake with Blender's interface running, on a virtual display (xvfb-run).
if command -v xvfb-run >/dev/null 2>&1; then
	rm -rf "$WORK/blend" && mkdir -p "$WORK/blend"
	BLENDER_USER_SCRIPTS=$WORK/scripts xvfb-run -a -s "-screen 0 1280x800x24" \
		blender --factory-startup --enable-event-simulate \
		--python "$ROOT/tests/blender/check_addon_ui.py" -- --zip "$ZIP" \
		--work "$WORK/blend" >"$WORK/ui.log" 2>&1 || true
	grep -E '^(ok|FAIL) ' "$WORK/ui.log" | sed 's/^/  /'
	if ! grep -q '^check_addon_ui: done, 0 failed' "$WORK/ui.log"; then
		grep -q '^check_addon_ui: done' "$WORK/ui.log" || tail -30 "$WORK/ui.log" >&2
		fail "the add-on's modal bake does not hold (lines FAIL above)"
	fi
else
	fail "xvfb-run is not installed (make deps): the modal bake needs Blender's interface"
fi
if [ -n "$STILL" ]; then
	convert "$WORK/still.png" -strip -colors 256 -dither None "$STILL.tmp.png"
	mv "$STILL.tmp.png" "$STILL"
	echo "check-blender-addon: wrote $STILL"
fi
echo "check-blender-addon: ok"
