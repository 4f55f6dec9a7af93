"""The Python module over libtidepool: arrays, errors, the CLI's pixels, threads, install.

Run from the repository root after `make` (make check-python does it):
    PYTHONPATH=python /usr/bin/python3 -m pytest tests/python
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest
from PIL import Image

import tidepool

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("TP_BUILD", ROOT / "build"))
TP_BIN = os.environ.get("TP_BIN", str(BUILD / "tidepool"))
POND = str(ROOT / "scenes" / "pond.json")


def cli(*args, cwd=None):
    r = subprocess.run([TP_BIN, *args], capture_output=True, text=True, cwd=cwd)
    return r


def read_png(path):
    """Decoded pixels as numpy: 16-bit PNGs keep their 16 bits."""
    im = Image.open(path)
    if im.mode in ("I;16", "I;16B", "I"):
        return np.asarray(im, dtype=np.uint16) if im.mode != "I" else np.asarray(im).astype(np.uint16)
    return np.asarray(im)


def read_png16_rgb(path):
    """Pillow cannot open 16-bit RGB: decode it with the CLI's own converter is no check,
    so use a plain zlib-and-filter decoder of the PNG format instead."""
    import struct
    import zlib

    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert (depth, ctype, interlace) == (16, 2, 0)
    bpp, row = 6, w * 6
    raw = zlib.decompress(idat)
    out = bytearray(h * row)
    prev = bytearray(row)
    for y in range(h):
        f, line = raw[y * (row + 1)], bytearray(raw[y * (row + 1) + 1:(y + 1) * (row + 1)])
        for i in range(row):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out[y * row:(y + 1) * row] = line
        prev = line
    return np.frombuffer(bytes(out), dtype=">u2").reshape(h, w, 3).astype(np.uint16)


def test_import_from_the_tree_after_make():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    env.pop("TIDEPOOL_LIBRARY", None)
    r = subprocess.run([sys.executable, "-c",
                        "import tidepool; print(tidepool.version(), tidepool.__version__)"],
                       capture_output=True, text=True, env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    want = cli("--version").stdout.split()[1]
    assert r.stdout.split() == [want, want]


@pytest.mark.parametrize("mode,frame", [("color", 24), ("height", 24), ("normal", 24),
                                        ("caustics", 24)])
def test_pixels_equal_the_cli_png(tmp_path, mode, frame):
    out = tmp_path / "f%04d.png"
    r = cli("render", POND, "--size", "128x72", "--range", "%d-%d" % (frame, frame),
            "-o", "%s=%s" % (mode, out), "-q", "-y")
    assert r.returncode == 0, r.stderr
    png = tmp_path / ("f%04d.png" % frame)
    with tidepool.load(POND, size=(128, 72)) as scene:
        got = scene.frame(frame, mode)
    if got.ndim == 3 and got.dtype == np.uint16:
        want = read_png16_rgb(png)
    else:
        want = read_png(png)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape,
                                                                 want.dtype)
    assert np.array_equal(got, want)
    assert got.std() > 0  # not a blank frame


def test_arrays_shapes_and_types():
    with tidepool.load(POND, scale=0.25) as s:
        assert s.size == (160, 90) and s.solver == "ripple" and len(s) == s.frame_count == 240
        assert s.modes == ("color", "height", "normal", "caustics", "displacement")
        c = s.frame(40)
        assert c.shape == (90, 160, 3) and c.dtype == np.uint8 and c.flags.c_contiguous
        h = s.height_field(40)
        assert h.shape == (90, 160) and h.dtype == np.float32
        assert 0 < np.abs(h).max() < 10
        assert s.frame(40, "height").dtype == np.uint16
        with pytest.raises(ValueError):
            s.frame(40, "particles")
        with pytest.raises(ValueError):
            s.frame(100000)
        with pytest.raises(ValueError):
            s.frame(0, "nonsense")
    with pytest.raises(ValueError):
        s.frame(0)  # closed


def test_a_dict_with_set_values_is_the_file_with_set():
    scene = json.loads(pathlib.Path(POND).read_text())
    scene.pop("output", None)
    with tidepool.load(POND, scale=0.2, overrides={"params.damping": 3, "seed": 9}) as a, \
            tidepool.loads(dict(scene, seed=9, params=dict(scene.get("params", {}), damping=3)),
                           scale=0.2) as b, \
            tidepool.load(POND, scale=0.2) as c:
        assert np.array_equal(a.frame(50), b.frame(50))
        assert not np.array_equal(a.frame(50), c.frame(50))
        assert '"damping": 3' in a.text or '"damping":3' in a.text


def test_scene_errors_carry_line_col_and_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "format": "tidepool-scene/1",\n  "size": [64, 64],\n'
                   '  "drops": [ { "t": 0, "at": [10, 10], "radius": -2 } ]\n}\n')
    with pytest.raises(tidepool.SceneError) as ei:
        tidepool.load(str(bad))
    e = ei.value
    assert (e.file, e.line) == (str(bad), 4) and e.col > 1
    assert "drops[0].radius" in e.message
    # the same message `tidepool validate` prints
    r = cli("validate", str(bad))
    assert r.returncode == 3 and ("tidepool: %s" % e.text) in r.stderr
    with pytest.raises(tidepool.SceneError) as ei:
        tidepool.loads({"format": "tidepool-scene/1", "size": [64, 64], "fps": -1})
    assert ei.value.line == 1 and "fps" in ei.value.message
    with pytest.raises(FileNotFoundError):
        tidepool.load(str(tmp_path / "missing.json"))


def test_frames_iterates_in_order_and_stats_match_render_stats(tmp_path):
    stats = tmp_path / "stats.jsonl"
    r = cli("render", POND, "--scale", "0.2", "--frames", "12", "-o", "null", "--stats",
            str(stats), "-q")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in stats.read_text().splitlines()]
    with tidepool.load(POND, scale=0.2, frames=12) as s:
        seen = [n for n, f in s.frames()]
        assert seen == list(range(12))
        for n in (11, 3):
            got = s.stats(n)
            want = {k: v for k, v in lines[n].items() if k != "boxes"}
            assert set(got) == set(want)
            for k in want:
                assert got[k] == pytest.approx(want[k], rel=1e-7, abs=1e-12), k


def test_two_scenes_in_two_threads_give_the_frames_of_each_alone():
    scenes = [str(ROOT / "scenes" / n) for n in ("rowing.json", "rain.json")]

    def run(path, out):
        with tidepool.load(path, scale=0.2, threads=1) as s:
            out.extend(s.frame(n).tobytes() for n in range(0, 40, 4))

    alone = [[], []]
    for p, o in zip(scenes, alone):
        run(p, o)
    both = [[], []]
    ts = [threading.Thread(target=run, args=a) for a in zip(scenes, both)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert both == alone and len(alone[0]) == 10


def test_an_edited_scene_reuses_the_states_before_the_edit():
    """reuse(): a drop moved at 3.5 s (frame 105) keeps the checkpoints before it; the frames
    after the edit equal a fresh load's, and the old scene keeps none."""
    edit = {"drops.3.at": [260, 250]}
    old = tidepool.load(POND, scale=0.125, checkpoint_every=10)
    old.frame(200)
    new = tidepool.load(POND, scale=0.125, overrides=edit)
    taken = new.reuse(old)
    assert taken == 10  # frames 10, 20, .. 100: states before 3.5 s
    assert new.reuse(old) == 0
    fresh = tidepool.load(POND, scale=0.125, overrides=edit)
    for n in (150, 104, 110, 30):
        assert np.array_equal(new.frame(n), fresh.frame(n)), n
    # the edit shows (at 80x45 the moved drop is 2 cells wide; by frame 150 its rings have
    # spread too thin to change a byte of the picture)
    assert not np.array_equal(new.frame(110), old.frame(110))
    with pytest.raises(TypeError):
        new.reuse("pond.json")
    with pytest.raises(ValueError):
        new.reuse(new)


def test_doctests_in_the_module_run():
    import doctest

    r = doctest.testmod(tidepool, verbose=False)
    assert r.failed == 0 and r.attempted >= 3


def test_plain_import_after_make_install(tmp_path):
    prefix = tmp_path / "prefix"
    site = prefix / "lib" / ("python%d.%d" % sys.version_info[:2]) / "site-packages"
    # Another PREFIX recompiles main.o and avload.o (the paths built in) and relinks the
    # program, so install runs on a copy of what it reads (mtimes kept: nothing else is
    # rebuilt), never on the shared build the other suites run, and write in, meanwhile.
    build = tmp_path / "build"
    build.mkdir()
    for name in ("obj", "gen"):
        shutil.copytree(BUILD / name, build / name, ignore=shutil.ignore_patterns("*.tmp"))
    for name in ("libtputil.a", "libtidepool.so.0", "libtidepool.so", "tidepool",
                 "tidepool-av.so", "tidepool.1", "tidepool.pc"):
        shutil.copy2(BUILD / name, build / name, follow_symlinks=False)
    r = subprocess.run(["make", "-s", "install", "PREFIX=%s" % prefix, "PYTHONDIR=%s" % site,
                        "BUILD=%s" % build], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TIDEPOOL_LIBRARY")}
    env["PYTHONUSERBASE"] = str(prefix)  # the user site is on the path by default
    code = ("import tidepool; s = tidepool.load(%r, scale=0.1); "
            "print(tidepool.__file__, s.frame(5).shape, tidepool.program_path())" % POND)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert str(site) in r.stdout and "(36, 64, 3)" in r.stdout
    assert r.stdout.split()[-1] == str(prefix / "bin" / "tidepool")
    assert (site / "tidepool" / "py.typed").exists()
    # the C side: header and pkg-config file
    pc = subprocess.run(["pkg-config", "--cflags", "--libs", "tidepool"], capture_output=True,
                        text=True, env=dict(env, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig")))
    assert pc.returncode == 0 and "-ltidepool" in pc.stdout
    assert (prefix / "include" / "tidepool.h").exists()
    assert os.readlink(prefix / "lib" / "libtidepool.so") == "libtidepool.so.0"


def test_the_worked_example_in_docs_python_md_runs(tmp_path):
    doc = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert blocks, "docs/python.md has no python block"
    (tmp_path / "scenes").symlink_to(ROOT / "scenes")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    for i, code in enumerate(blocks):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=600)
        assert r.returncode == 0, "block %d:\n%s" % (i, r.stderr)
    sheet = Image.open(tmp_path / "sheet.png")
    assert sheet.size[0] >= 4 * 128 and sheet.size[1] >= 4 * 128
    tiles = sorted((tmp_path / "variants").glob("*.png"))
    assert len(tiles) == 16
    # 16 different textures
    assert len({t.read_bytes() for t in tiles}) == 16
