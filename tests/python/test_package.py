"""The package behaves as Python does (issue 41): errors, argument checks, a sequence of
frames, two calls for a path and a text, the import's checks, deprecated aliases, threads,
and nothing called at interpreter shutdown.

Run from the repository root after `make` (make check-python does it).
"""

import collections.abc
import ctypes
import errno
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tidepool

ROOT = pathlib.Path(__file__).resolve().parents[2]
POND = str(ROOT / "scenes" / "pond.json")
SMALL = dict(scale=0.1, frames=12)  # 64 x 36


@pytest.fixture(scope="module")
def scene():
    with tidepool.load(POND, **SMALL) as s:
        yield s


def run_python(code, **env):
    e = dict(os.environ, PYTHONPATH=str(ROOT / "python"), **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=e, cwd=str(ROOT), timeout=600)


def test_files_that_cannot_be_read_raise_the_oserror_of_open(tmp_path):
    missing = str(tmp_path / "missing.json")
    with pytest.raises(FileNotFoundError) as ei:
        tidepool.load(missing)
    assert ei.value.errno == errno.ENOENT and ei.value.filename == missing
    with pytest.raises(IsADirectoryError) as ei:
        tidepool.load(tmp_path)
    assert ei.value.errno == errno.EISDIR and ei.value.filename == str(tmp_path)
    locked = tmp_path / "locked.json"
    locked.write_text(pathlib.Path(POND).read_text())
    locked.chmod(0)
    try:
        if os.geteuid() == 0:  # root reads any file: the mode cannot refuse it
            tidepool.load(locked, **SMALL).close()
        else:
            with pytest.raises(PermissionError) as ei:
                tidepool.load(locked)
            assert ei.value.errno == errno.EACCES and ei.value.filename == str(locked)
    finally:
        locked.chmod(0o644)
    # a path is a path: text that looks like JSON is not guessed to be a scene
    with pytest.raises(FileNotFoundError):
        tidepool.load('{"format": "tidepool-scene/1"}')
    with pytest.raises(TypeError):
        tidepool.load(42)


@pytest.mark.parametrize("bad", [1.5, "2", True, False, np.float64(2.0), None, [1]])
def test_a_frame_index_must_be_an_integer(scene, bad):
    for call in (scene.frame, scene.height_field, scene.stats, scene.__getitem__):
        with pytest.raises(TypeError):
            call(bad)


def test_numpy_integers_and_negative_indices_are_frames(scene):
    last = scene.frame(11)
    assert np.array_equal(scene[np.int64(11)], last)
    assert np.array_equal(scene.frame(np.int32(-1)), last)
    assert np.array_equal(scene[-12], scene.frame(0))
    assert np.array_equal(scene.height_field(np.uint8(3)), scene.height_field(-9))


@pytest.mark.parametrize("n", [12, -13, 2**32 + 5, -2**32, 2**63, 2**80])
def test_frames_outside_the_scene_are_refused_never_wrapped(scene, n):
    with pytest.raises((ValueError, OverflowError)):
        scene.frame(n)
    with pytest.raises(IndexError):
        scene[n]


@pytest.mark.parametrize("kw,exc,word", [
    (dict(size=(2**32 + 64, 36)), OverflowError, "size="),
    (dict(size=(64, 2**31)), OverflowError, "size="),
    (dict(size=(1, 36)), ValueError, "size="),
    (dict(size=(64, 36, 1)), ValueError, "size="),
    (dict(size="64x36"), TypeError, "size="),
    (dict(size=(64.0, 36)), TypeError, "size="),
    (dict(frames=0), ValueError, "frames="),
    (dict(frames=1000001), ValueError, "frames="),
    (dict(frames=2**32 + 1), OverflowError, "frames="),
    (dict(frames=True), TypeError, "frames="),
    (dict(threads=1025), ValueError, "threads="),
    (dict(threads=100000), ValueError, "threads="),
    (dict(threads=-1), ValueError, "threads="),
    (dict(threads=2**32), OverflowError, "threads="),
    (dict(seed=-1), ValueError, "seed="),
    (dict(seed=2**64 + 3), OverflowError, "seed="),
    (dict(scale=0), ValueError, "scale="),
    (dict(scale=float("nan")), ValueError, "scale="),
    (dict(scale="0.5"), TypeError, "scale="),
    (dict(checkpoint_every=-2), ValueError, "checkpoint_every="),
    (dict(checkpoint_bytes=-1), ValueError, "checkpoint_bytes="),
    (dict(checkpoint_bytes=2**64), OverflowError, "checkpoint_bytes="),
])
def test_every_keyword_is_checked_as_the_cli_checks_its_option(kw, exc, word):
    with pytest.raises(exc) as ei:
        tidepool.load(POND, **kw)
    assert word in str(ei.value) and "--" not in str(ei.value), str(ei.value)


def test_a_loop_cut_by_frames_is_refused_in_python_words():
    # The core's message names the client's words: the CLI says --frames, --range and
    # --set (tests/test_textures.c); Python its keywords, and no --flag.
    with pytest.raises(ValueError) as ei:
        tidepool.load(str(ROOT / "scenes" / "textures" / "ocean_choppy.json"), frames=4)
    msg = str(ei.value)
    assert "frames= 4: the scene is a 64-frame loop" in msg, msg
    assert "render some of its frames (0-63)" in msg and "--" not in msg, msg

def test_the_bounds_themselves_are_taken():
    with tidepool.load(POND, scale=0.05, frames=1, threads=1024, seed=2**53,
                       checkpoint_every=tidepool.CHECKPOINTS_NONE) as s:
        assert len(s) == 1 and s[0].shape == (18, 32, 3)
    with tidepool.load(POND, size=(np.int64(64), np.int16(36)), frames=np.int32(3)) as s:
        assert s.size == (64, 36) and len(s) == 3


def test_nul_bytes_are_refused_not_cut(tmp_path):
    with pytest.raises(ValueError):
        tidepool.load(POND + "\0.txt")
    with pytest.raises(ValueError):
        tidepool.load(POND, overrides={"params.damping\0x": 4})
    with pytest.raises(ValueError):
        tidepool.load(POND, overrides=["params.damping=4\0garbage"])
    # a NUL inside a value travels as JSON escapes it (\u0000), whole: the scene refuses it
    with pytest.raises(tidepool.SceneError) as ei:
        tidepool.load(POND, overrides={"background.pattern": "tiles\0x"})
    assert "u0000x" in ei.value.message
    with pytest.raises(ValueError):
        tidepool.loads(pathlib.Path(POND).read_text() + "\0")
    with pytest.raises(ValueError):
        tidepool.loads(pathlib.Path(POND).read_text(), name="a\0b")


def test_messages_name_the_keywords_not_the_cli_flags():
    with pytest.raises(tidepool.SceneError) as ei:
        tidepool.load(POND, scale=0.1, overrides={"params.damping": 99})
    assert "params.damping (from overrides=): " in ei.value.message, ei.value.text
    assert "--" not in ei.value.text
    with pytest.raises(ValueError) as ei:
        tidepool.load(POND, overrides=["params"])
    assert "overrides= params: expected KEY=VALUE" in str(ei.value)
    with pytest.raises(ValueError) as ei:
        tidepool.load(POND, size=(100, 100))
    assert "size=: 100x100 has another shape" in str(ei.value), str(ei.value)
    with pytest.raises(ValueError) as ei:
        tidepool.load(POND, size=(64, 36), scale=0.5)
    assert "scale= and size=: give one or the other" in str(ei.value)


def test_a_scene_is_a_sequence_of_colour_frames(scene):
    assert isinstance(scene, collections.abc.Sequence) and len(scene) == 12
    frames = list(scene)
    assert len(frames) == 12
    for n in (0, 5, 11):
        assert np.array_equal(frames[n], scene.frame(n))
    assert [n for n, _ in scene.frames(start=3, stop=6)] == [3, 4, 5]
    picked = scene[10:2:-4]
    assert len(picked) == 2 and np.array_equal(picked[1], frames[6])
    assert np.array_equal(list(reversed(scene))[0], frames[11])
    with pytest.raises(TypeError):
        frames[0] in scene


def test_a_path_and_a_text_are_two_calls(tmp_path):
    text = pathlib.Path(POND).read_text()
    with tidepool.load(POND, **SMALL) as a, tidepool.loads(text, **SMALL) as b, \
            tidepool.loads(text.encode(), name=POND, **SMALL) as c, \
            tidepool.load(pathlib.Path(POND), **SMALL) as d:
        assert a.path == POND and b.path == "<string>" and c.path == POND
        for s in (b, c, d):
            assert np.array_equal(a[7], s[7])


def test_deprecated_names_still_work_and_warn():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with tidepool.load(POND, scale=0.1, frames=4, set={"params.damping": 3}) as old, \
                tidepool.load(POND, scale=0.1, frames=4, overrides={"params.damping": 3}) as new:
            assert np.array_equal(old.height(2), new.height_field(2))
            assert np.array_equal(old[3], new[3])
        with tidepool.load({"format": "tidepool-scene/1", "size": [64, 64]}) as d:
            assert d.size == (64, 64)
    kinds = [str(x.message) for x in w if x.category is DeprecationWarning]
    assert any("set=" in k for k in kinds) and any("height_field" in k for k in kinds)
    assert any("loads" in k for k in kinds)
    with pytest.raises(TypeError), pytest.warns(DeprecationWarning):
        tidepool.load(POND, set=["a=1"], overrides=["a=1"])
    with pytest.raises(TypeError):
        tidepool.load(POND, nonsense=1)


def test_the_import_refuses_a_library_that_does_not_match(tmp_path):
    """A libtidepool of another version, or whose structs have other sizes: ImportError."""
    names = ["tp_version_number", "tp_scene_load_file", "tp_scene_load_string", "tp_scene_free",
             "tp_scene_get_info", "tp_scene_text", "tp_scene_format", "tp_scene_set_threads",
             "tp_scene_seek", "tp_scene_position", "tp_scene_render", "tp_scene_height",
             "tp_scene_stats", "tp_scene_reuse_checkpoints", "tp_mode_name", "tp_mode_from_name"]
    for version, sizes_differ, want in [
        ("0.1.0", False, "is version 0.1.0"),
        (tidepool.__version__, True, "has tp_error of"),
    ]:
        src = tmp_path / "fake.c"
        sizes = {c: ctypes.sizeof(t) for c, t in tidepool._lib.STRUCTS.items()}
        if sizes_differ:
            sizes["tp_error"] -= 1
        src.write_text(
            "#include <stddef.h>\n#include <string.h>\n"
            'const char *tp_version(void) { return "%s"; }\n' % version
            + "size_t tp_struct_size(const char *n) {\n"
            + "".join('  if (!strcmp(n, "%s")) return %d;\n' % kv for kv in sizes.items())
            + "  return 0;\n}\n"
            + "".join("int %s(void) { return -2; }\n" % n for n in names))
        lib = tmp_path / "libfake.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-I", str(ROOT / "include"), "-o", str(lib),
                        str(src)], check=True)
        r = run_python("import tidepool", TIDEPOOL_LIBRARY=str(lib))
        assert r.returncode != 0 and "ImportError" in r.stderr and want in r.stderr, r.stderr
    # the real one is taken, the same way
    r = run_python("import tidepool; print(tidepool.library_path())",
                   TIDEPOOL_LIBRARY=str(ROOT / "build" / "libtidepool.so.0"))
    assert r.returncode == 0, r.stderr


def test_nothing_calls_the_library_at_interpreter_shutdown(tmp_path):
    """A Scene left open at exit is not freed then (the library may be gone); one that is
    garbage-collected while the interpreter runs is freed once."""
    log = tmp_path / "frees"
    r = run_python("""
        import gc, os, sys
        import tidepool, tidepool._lib as L
        real = L.lib.tp_scene_free
        fd = os.open(%r, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        def spy(h):
            os.write(fd, b"shutdown\\n" if sys.is_finalizing() else b"running\\n")
            real(h)
        L.lib.tp_scene_free = spy
        s = tidepool.load(%r, scale=0.1)
        s[3]
        del s
        gc.collect()
        kept = tidepool.load(%r, scale=0.1)
        kept[2]
        cycle = [tidepool.load(%r, scale=0.1)]
        cycle.append(cycle)
    """ % (str(log), POND, POND, POND))
    assert r.returncode == 0, r.stderr
    assert log.read_text() == "running\n"


HAMMER = """
import random, sys, threading
import tidepool

rounds, bad = int(sys.argv[1]), []
want = {}
with tidepool.load(%(pond)r, scale=0.25, frames=20, threads=1) as ref:
    for n in range(20):
        want[n] = ref[n].tobytes()
rng = random.Random(7)
for r in range(rounds):
    scene = tidepool.load(%(pond)r, scale=0.25, frames=20, threads=2)
    done = threading.Event()

    def hammer(seed):
        g = random.Random(seed)
        while True:
            n = g.randrange(20)
            try:
                what = g.randrange(3)
                if what == 0:
                    if scene.frame(n).tobytes() != want[n]:
                        bad.append("frame %%d differs" %% n)
                elif what == 1:
                    scene.height_field(n)
                else:
                    scene.stats(n)
            except ValueError as e:
                if "closed" not in str(e):
                    bad.append(repr(e))
                return

    ts = [threading.Thread(target=hammer, args=(r * 4 + i,)) for i in range(4)]
    for t in ts:
        t.start()
    threading.Event().wait(rng.uniform(0, 0.02))
    scene.close()  # mid-render: waits for the call in progress
    for t in ts:
        t.join()
print("rounds", rounds, "problems", len(bad), bad[:3])
sys.exit(1 if bad else 0)
"""


def test_one_scene_hammered_from_four_threads_and_closed_mid_render():
    """100 rounds: 4 threads render, read heights and stats of one scene while the main
    thread closes it; every frame is the one a scene alone gives, no crash."""
    r = subprocess.run([sys.executable, "-c", HAMMER % {"pond": POND}, "100"],
                       capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert r.returncode == 0, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)
    assert "rounds 100 problems 0" in r.stdout
