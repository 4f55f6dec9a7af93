#!/bin/sh
# make check-pip: the Python package installs and works as pip users get it (issue 41).
# The tree's files (tracked and new, not ignored: a fresh clone of the work tree as it
# would be committed) are copied to a scratch folder; a fresh venv (--system-site-packages:
# numpy from Debian; no index is reachable, so --no-build-isolation --no-index) runs
# `pip install .` and `pip wheel .` there, which build libtidepool with make; then, from a
# folder outside any tree, the package renders a frame, its bundled program writes an MP4
# through its av plugin, and the wheel is checked to hold the library, the program, the
# plugin and py.typed.
set -eu
PYTHON=${PYTHON:-/usr/bin/python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tidepool-pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

mkdir "$tmp/src" "$tmp/away" "$tmp/wheels"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tmp/src")
"$PYTHON" -m venv --system-site-packages "$tmp/venv"
pip="$tmp/venv/bin/pip --disable-pip-version-check -q"
(cd "$tmp/src" && TIDEPOOL_JOBS=${TIDEPOOL_JOBS:-2} $pip install --no-build-isolation --no-index .)
(cd "$tmp/src" && $pip wheel --no-build-isolation --no-index --no-deps -w "$tmp/wheels" .)

cp "$ROOT/scenes/pond.json" "$tmp/away/"
cd "$tmp/away"
env -u PYTHONPATH -u TIDEPOOL_LIBRARY "$tmp/venv/bin/python" - "$tmp" <<'PY'
import pathlib, subprocess, sys, zipfile

import tidepool

tmp = pathlib.Path(sys.argv[1])
site = tmp / "venv"
for f in (tidepool.__file__, tidepool.library_path(), tidepool.program_path()):
    assert pathlib.Path(f).resolve().is_relative_to(site.resolve()), f + " is not the venv's"
assert tidepool.__version__ == tidepool.version()
with tidepool.load("pond.json", size=(64, 36)) as scene:
    rgb = scene[10]
assert rgb.shape == (36, 64, 3) and rgb.dtype.name == "uint8" and rgb.std() > 0
r = subprocess.run([tidepool.program_path(), "render", "pond.json", "--size", "64x36",
                    "--frames", "3", "-o", "pond.mp4", "-q", "-y"], capture_output=True,
                   text=True)
assert r.returncode == 0, r.stderr
assert pathlib.Path("pond.mp4").stat().st_size > 500
wheels = list((tmp / "wheels").glob("tidepool-*.whl"))
assert len(wheels) == 1, wheels
names = set(zipfile.ZipFile(wheels[0]).namelist())
for want in ("tidepool/__init__.py", "tidepool/py.typed", "tidepool/_native/libtidepool.so.0",
             "tidepool/_native/tidepool", "tidepool/_native/tidepool-av.so"):
    assert want in names, want + " is not in " + wheels[0].name
assert "linux" in wheels[0].name, wheels[0].name + ": a pure wheel cannot hold the library"
print("check-pip: ok:", wheels[0].name, "installed, frame", rgb.shape, "and an MP4 from",
      tidepool.program_path())
PY
