"""tidepool: water simulation and rendering, as numpy arrays.

A thin layer over libtidepool (include/tidepool.h) through ctypes. Load a scene file, or a
scene as a dict, and ask for frames:

>>> import tidepool
>>> with tidepool.load("scenes/pond.json", size=(160, 90)) as scene:
...     rgb = scene.frame(30)              # uint8, 90 x 160 x 3
...     h = scene.height(30)               # float32, 90 x 160, height units
...     rgb.shape, rgb.dtype.name, h.dtype.name
((90, 160, 3), 'uint8', 'float32')

The pixels are those `tidepool render` writes to PNG for the same scene and size. A bad
scene raises SceneError with the file, line, column and message:

>>> try:
...     tidepool.load({"format": "tidepool-scene/1", "size": [64, 64], "fps": 0})
... except tidepool.SceneError as e:
...     (e.line, e.col) > (0, 0), "fps" in e.message
(True, True)
"""

import ctypes
import ctypes.util
import json
import os
import pathlib

import numpy as np

__all__ = ["load", "Scene", "SceneError", "version", "MODES"]

MODES = ("color", "height", "normal", "caustics", "particles", "displacement", "foam")

_ERROR_ARGUMENT, _ERROR_INPUT, _ERROR_IO = -2, -3, -4
_FRAME_STATS_MAX = 16


class _Sized(ctypes.Structure):
    """A struct of tidepool.h: its first member, size, says how long it is."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.size = ctypes.sizeof(self)


class _Error(_Sized):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("code", ctypes.c_int),
        ("file", ctypes.c_char * 1024),
        ("line", ctypes.c_int),
        ("col", ctypes.c_int),
        ("message", ctypes.c_char * 1024),
        ("text", ctypes.c_char * 2048),
    ]


class _LoadOptions(_Sized):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("scale", ctypes.c_double),
        ("frames", ctypes.c_int),
        ("has_seed", ctypes.c_int),
        ("seed", ctypes.c_uint64),
        ("sets", ctypes.POINTER(ctypes.c_char_p)),
        ("nsets", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("checkpoint_bytes", ctypes.c_size_t),
        ("checkpoint_every", ctypes.c_int),
        ("output", ctypes.c_char_p),
    ]


class _Format(_Sized):
    _fields_ = [("size", ctypes.c_size_t)] + [
        (n, ctypes.c_int) for n in ("width", "height", "channels", "bytes_per_sample")]


class _Info(_Sized):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("path", ctypes.c_char_p),
        ("solver", ctypes.c_char_p),
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("ref_width", ctypes.c_int),
        ("ref_height", ctypes.c_int),
        ("frames", ctypes.c_int),
        ("fps", ctypes.c_double),
        ("modes", ctypes.c_uint),
        ("heightfield", ctypes.c_int),
    ]


class _Stats(_Sized):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("frame", ctypes.c_int),
        ("t", ctypes.c_double),
        ("n", ctypes.c_int),
        ("name", ctypes.c_char_p * _FRAME_STATS_MAX),
        ("value", ctypes.c_double * _FRAME_STATS_MAX),
    ]


def _find_library():
    """The library beside this tree's build, as installed, or on the loader's path."""
    env = os.environ.get("TIDEPOOL_LIBRARY")
    if env:
        return env
    try:
        from . import _installed  # written by `make install`

        return _installed.LIBRARY
    except ImportError:
        pass
    tree = pathlib.Path(__file__).resolve().parents[2] / "build" / "libtidepool.so.0"
    if tree.exists():
        return str(tree)
    return ctypes.util.find_library("tidepool") or "libtidepool.so.0"


def _bind(lib):
    P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    E = ctypes.POINTER(_Error)
    sig = {
        "tp_version": (ctypes.c_char_p, []),
        "tp_version_number": (I, []),
        "tp_scene_load_file": (I, [ctypes.c_char_p, ctypes.POINTER(_LoadOptions), ctypes.POINTER(P), E]),
        "tp_scene_load_string": (
            I,
            [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_LoadOptions), ctypes.POINTER(P), E],
        ),
        "tp_scene_free": (None, [P]),
        "tp_scene_get_info": (I, [P, ctypes.POINTER(_Info)]),
        "tp_scene_text": (ctypes.c_char_p, [P]),
        "tp_scene_format": (I, [P, I, ctypes.POINTER(_Format), E]),
        "tp_scene_set_threads": (I, [P, I]),
        "tp_scene_seek": (I, [P, I, E]),
        "tp_scene_step": (I, [P, E]),
        "tp_scene_position": (I, [P]),
        "tp_scene_render": (I, [P, I, I, P, S, E]),
        "tp_scene_height": (I, [P, I, P, S, E]),
        "tp_scene_stats": (I, [P, I, ctypes.POINTER(_Stats), E]),
        "tp_scene_reuse_checkpoints": (I, [P, P]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


_lib = _bind(ctypes.CDLL(_find_library()))


def version():
    """The library's version, "0.2.0"."""
    return _lib.tp_version().decode()


class SceneError(Exception):
    """A scene that cannot be loaded or run: where (file, line, col) and what (message).

    line and col are 1-based, 0 when the error has no place in the file. text is the whole
    one-line message as `tidepool validate` prints it.
    """

    def __init__(self, code, file, line, col, message, text):
        super().__init__(text)
        self.code, self.file, self.line, self.col = code, file, line, col
        self.message, self.text = message, text


def _raise(rc, err):
    d = lambda b: b.decode("utf-8", "replace")  # noqa: E731
    e = SceneError(rc, d(err.file), err.line, err.col, d(err.message), d(err.text))
    if rc == _ERROR_ARGUMENT:
        raise ValueError(e.text)
    raise e


def _sets(set):
    """--set values: a dict {"params.damping": 4} (values as JSON) or "KEY=VALUE" strings."""
    if set is None:
        return []
    if isinstance(set, dict):
        return ["%s=%s" % (k, json.dumps(v)) for k, v in set.items()]
    if isinstance(set, str):
        return [set]
    return list(set)


def load(scene, size=None, set=None, scale=None, frames=None, seed=None, threads=0,
         checkpoint_bytes=0, checkpoint_every=0):
    """Loads a scene: a path to a JSON file, or the scene as a dict (or JSON text).

    size=(w, h) or scale=F render it at another size (the scene is scaled to it, as with
    `tidepool render --size`); set={"params.damping": 4} changes values as --set does;
    frames and seed override the scene's. threads=0 uses every core (the frames are the same
    for every count). checkpoint_bytes bounds the memory kept for seeking backwards;
    checkpoint_every=N keeps one every N frames (0: after every 40 ms of simulating).
    Raises SceneError for a bad scene, OSError for a file that cannot be read.
    """
    opts = _LoadOptions()
    if size is not None:
        opts.width, opts.height = (int(v) for v in size)
    if scale is not None:
        opts.scale = float(scale)
    if frames is not None:
        opts.frames = int(frames)
    if seed is not None:
        opts.has_seed, opts.seed = 1, int(seed)
    opts.threads = int(threads)
    opts.checkpoint_bytes = int(checkpoint_bytes)
    opts.checkpoint_every = int(checkpoint_every)
    sets = [s.encode() for s in _sets(set)]
    arr = (ctypes.c_char_p * max(1, len(sets)))(*sets)
    opts.sets, opts.nsets = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p)), len(sets)
    handle, err = ctypes.c_void_p(), _Error()
    if isinstance(scene, (str, os.PathLike)) and not str(scene).lstrip().startswith("{"):
        path = os.fspath(scene)
        rc = _lib.tp_scene_load_file(path.encode(), ctypes.byref(opts), ctypes.byref(handle),
                                     ctypes.byref(err))
        if rc == _ERROR_IO and not err.line:
            raise OSError(err.text.decode("utf-8", "replace"))
    else:
        text = scene if isinstance(scene, str) else json.dumps(scene)
        rc = _lib.tp_scene_load_string(text.encode(), b"<dict>", ctypes.byref(opts),
                                       ctypes.byref(handle), ctypes.byref(err))
    if rc < 0:
        _raise(rc, err)
    return Scene(handle)


class Scene:
    """A loaded scene. Frames can be asked for in any order; going back replays from a
    checkpoint kept in memory. Close it (or use `with`) to free its memory at once."""

    def __init__(self, handle):
        self._h = handle
        info = _Info()
        _lib.tp_scene_get_info(handle, ctypes.byref(info))
        self.path = info.path.decode()
        self.solver = info.solver.decode()
        self.width = info.width
        self.size = (info.width, info.height)  # (width, height): scene.height(n) is a method
        self.reference_size = (info.ref_width, info.ref_height)
        self.frame_count = info.frames
        self.fps = info.fps
        self.modes = tuple(m for i, m in enumerate(MODES) if info.modes & (1 << i))
        self.has_height = bool(info.heightfield)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def __len__(self):
        return self.frame_count

    def __repr__(self):
        return "<tidepool.Scene %r %s %dx%d, %d frames at %g fps>" % (
            self.path, self.solver, self.size[0], self.size[1], self.frame_count, self.fps)

    def close(self):
        """Frees the scene; further calls raise ValueError."""
        h, self._h = getattr(self, "_h", None), None
        if h:
            _lib.tp_scene_free(h)

    def _handle(self):
        if not self._h:
            raise ValueError("the scene is closed")
        return self._h

    @property
    def text(self):
        """The scene's JSON text after the set= edits."""
        return _lib.tp_scene_text(self._handle()).decode()

    def reuse(self, old):
        """Takes the in-memory checkpoints of `old`, an earlier version of this scene loaded
        the same way, that are still valid for this one (those made before the first moment
        the two can simulate differently: an edited drop at 3 s keeps the states before it,
        a new colour keeps all), so frames near the edit come without simulating from the
        start. The frames are the same either way. Returns how many were taken; `old` keeps
        none."""
        if not isinstance(old, Scene):
            raise TypeError("reuse() takes a tidepool.Scene")
        if old is self:
            raise ValueError("a scene cannot reuse its own checkpoints")
        return _lib.tp_scene_reuse_checkpoints(self._handle(), old._handle())

    @property
    def position(self):
        """The frame the simulation is at (-1 before the first)."""
        return _lib.tp_scene_position(self._handle())

    def frame(self, n, mode="color"):
        """Frame n in `mode`: uint8 H x W x 3 for colour (and 8-bit maps), uint16 for 16-bit
        maps; single-channel maps (height, caustics) are H x W."""
        h = self._handle()
        m = MODES.index(mode) if mode in MODES else -1
        if m < 0:
            raise ValueError("mode must be one of %s (got %r)" % (", ".join(MODES), mode))
        fmt, err = _Format(), _Error()
        rc = _lib.tp_scene_format(h, m, ctypes.byref(fmt), ctypes.byref(err))
        if rc < 0:
            _raise(rc, err)
        dtype = np.uint8 if fmt.bytes_per_sample == 1 else np.uint16
        shape = (fmt.height, fmt.width) + ((fmt.channels,) if fmt.channels > 1 else ())
        out = np.empty(shape, dtype=dtype)
        rc = _lib.tp_scene_render(h, int(n), m, out.ctypes.data, out.strides[0], ctypes.byref(err))
        if rc < 0:
            _raise(rc, err)
        return out

    def height(self, n):
        """The height field of frame n in height units (1.0 = a drop of strength 1 at its
        centre), float32 H x W."""
        out = np.empty((self.size[1], self.size[0]), dtype=np.float32)
        err = _Error()
        rc = _lib.tp_scene_height(self._handle(), int(n), out.ctypes.data, out.strides[0],
                                  ctypes.byref(err))
        if rc < 0:
            _raise(rc, err)
        return out

    def frames(self, mode="color", start=0, stop=None):
        """Yields (n, frame) for n in [start, stop) in order: one simulation pass."""
        stop = self.frame_count if stop is None else stop
        for n in range(start, stop):
            yield n, self.frame(n, mode)

    def stats(self, n):
        """The solver's statistics after frame n, as `render --stats` prints them:
        {"frame": n, "t": seconds, "energy": ..., ...}."""
        st, err = _Stats(), _Error()
        rc = _lib.tp_scene_stats(self._handle(), int(n), ctypes.byref(st), ctypes.byref(err))
        if rc < 0:
            _raise(rc, err)
        d = {"frame": st.frame, "t": st.t}
        for i in range(st.n):
            d[st.name[i].decode()] = st.value[i]
        return d
