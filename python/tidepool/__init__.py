"""tidepool: water simulation and rendering, as numpy arrays.

A thin layer over libtidepool (include/tidepool.h) through ctypes. Load a scene file (or
its text), then ask for frames; a Scene is a sequence of its colour frames:

>>> import tidepool
>>> with tidepool.load("scenes/pond.json", size=(160, 90)) as scene:
...     rgb = scene.frame(30)              # uint8, 90 x 160 x 3
...     h = scene.height_field(30)         # float32, 90 x 160, height units
...     rgb.shape, h.dtype.name, len(scene), scene[-1].shape
((90, 160, 3), 'float32', 240, (90, 160, 3))

The pixels are those `tidepool render` writes to PNG for the same scene and size. A bad
scene raises SceneError with the file, line, column and message:

>>> try:
...     tidepool.loads('{"format": "tidepool-scene/1", "size": [64, 64], "fps": 0}')
... except tidepool.SceneError as e:
...     (e.line, e.col) > (0, 0), "fps" in e.message
(True, True)

One Scene may be shared between threads: its calls take turns (docs/python.md).
"""

import ctypes
import json
import numbers
import operator
import os
import threading
import warnings
import weakref
from collections.abc import Sequence
from typing import (Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union,
                    overload)

import numpy as np
import numpy.typing as npt

from . import _lib
from ._lib import library_path, program_path
from ._version import __version__

__all__ = ["load", "loads", "Scene", "SceneError", "FrameIndexError", "version",
           "program_path", "library_path", "MODES", "MAX_THREADS", "MAX_FRAMES",
           "CHECKPOINTS_NONE", "__version__"]

MODES = _lib.MODES  # the library's names, by tp_mode_name
MAX_THREADS = _lib.MAX_THREADS
MAX_FRAMES = _lib.MAX_FRAMES
CHECKPOINTS_NONE = _lib.CHECKPOINTS_NONE
_SIZE_MAX = 8192  # a render size's side, as the library takes it
_SCALE_MAX = 16.0
_SEED_MAX = 2**53
_INT_MAX = 2**31 - 1

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
Overrides = Union[Mapping[str, Any], Iterable[str], str]
Array = npt.NDArray[Any]


def version() -> str:
    """The library's version (the same as tidepool.__version__: the import checks it)."""
    return str(_lib.lib.tp_version().decode())


class SceneError(Exception):
    """A scene that cannot be loaded or run: where (file, line, col) and what (message).

    line and col are 1-based, 0 when the error has no place in the file. text is the whole
    one-line message as `tidepool validate` prints it.
    """

    def __init__(self, code: int, file: str, line: int, col: int, message: str,
                 text: str) -> None:
        super().__init__(text)
        self.code, self.file, self.line, self.col = code, file, line, col
        self.message, self.text = message, text


class FrameIndexError(IndexError, ValueError):
    """A frame index outside the scene: an IndexError, as sequences raise, and a
    ValueError, as the library's other refusals are."""


def _raise(rc: int, err: _lib.Error) -> None:
    def d(b: bytes) -> str:
        return b.decode("utf-8", "replace")

    e = SceneError(rc, d(err.file), err.line, err.col, d(err.message), d(err.text))
    if rc == _lib.ERROR_ARGUMENT:
        raise ValueError(e.text)
    raise e


# ---- checking arguments as the CLI checks its options ---------------------------------------

def _integer(value: Any, what: str) -> int:
    """An int (numpy integers too), never a bool, float or str: TypeError otherwise."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("%s must be an integer, not bool" % what)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__)) from None


def _bounded(value: Any, what: str, lo: int, hi: int) -> int:
    n = _integer(value, what)
    if not lo <= n <= hi:
        raise (OverflowError if abs(n) > _INT_MAX else ValueError)(
            "%s must be in %d..%d (got %d)" % (what, lo, hi, n))
    return n


def _number(value: Any, what: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a number, not %s" % (what, type(value).__name__))
    return float(value)


def _text(value: Any, what: str) -> bytes:
    """UTF-8 bytes of a str, refusing NUL (C would cut the string there)."""
    if not isinstance(value, str):
        raise TypeError("%s must be a str, not %s" % (what, type(value).__name__))
    if "\0" in value:
        raise ValueError("%s: embedded null character" % what)
    return value.encode("utf-8", "surrogateescape")


def _override_items(overrides: Optional[Overrides]) -> List[bytes]:
    """overrides= as the library's "KEY=VALUE" sets: a mapping {"params.damping": 4}
    (values as JSON) or "KEY=VALUE" strings."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        out = []
        for k, v in overrides.items():
            key = _text(k, "overrides= key")
            if not key or b"=" in key:
                raise ValueError("overrides= key %r: must be a dotted path such as "
                                 "params.damping" % k)
            out.append(key + b"=" + _text(json.dumps(v), "overrides=[%r]" % k))
        return out
    if isinstance(overrides, str):
        overrides = [overrides]
    return [_text(s, "overrides= item") for s in overrides]


def _options(size: Optional[Tuple[int, int]], scale: Optional[float], frames: Optional[int],
             seed: Optional[int], overrides: Optional[Overrides], threads: int,
             checkpoint_bytes: int, checkpoint_every: int,
             keep: List[Any]) -> _lib.LoadOptions:
    o = _lib.LoadOptions()
    if size is not None:
        if isinstance(size, (str, bytes)) or not isinstance(size, Iterable):
            raise TypeError("size= must be (width, height), not %s" % type(size).__name__)
        wh: List[Any] = list(size)
        if len(wh) != 2:
            raise ValueError("size= must be (width, height) (got %d values)" % len(wh))
        o.width = _bounded(wh[0], "size= width", 2, _SIZE_MAX)
        o.height = _bounded(wh[1], "size= height", 2, _SIZE_MAX)
    if scale is not None:
        f = _number(scale, "scale=")
        if not 0 < f <= _SCALE_MAX:  # also NaN
            raise ValueError("scale= must be in (0, %g] (got %r)" % (_SCALE_MAX, scale))
        o.scale = f
    if frames is not None:
        o.frames = _bounded(frames, "frames=", 1, MAX_FRAMES)
    if seed is not None:
        o.has_seed, o.seed = 1, _bounded(seed, "seed=", 0, _SEED_MAX)
    o.threads = _bounded(threads, "threads=", 0, MAX_THREADS)
    o.checkpoint_bytes = _bounded(checkpoint_bytes, "checkpoint_bytes=", 0,
                                  2**(8 * ctypes.sizeof(ctypes.c_size_t)) - 1)
    o.checkpoint_every = _bounded(checkpoint_every, "checkpoint_every=", CHECKPOINTS_NONE,
                                  _INT_MAX)
    sets = _override_items(overrides)
    arr = (ctypes.c_char_p * max(1, len(sets)))(*sets)
    keep.append(arr)
    o.sets, o.nsets = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p)), len(sets)
    o.names, o.nnames = _lib.NAMES, len(_lib.OVERRIDE_NAMES)
    return o


def _overrides_of(overrides: Optional[Overrides], kw: Dict[str, Any]) -> Optional[Overrides]:
    """The deprecated set= keyword (it shadowed the builtin) as overrides=."""
    if "set" in kw:
        warnings.warn("set= is deprecated: use overrides=", DeprecationWarning, stacklevel=3)
        if overrides is not None:
            raise TypeError("give overrides= only (set= is its deprecated name)")
        overrides = kw.pop("set")
    if kw:
        raise TypeError("unexpected keyword argument %r" % sorted(kw)[0])
    return overrides


def load(path: PathLike, *, size: Optional[Tuple[int, int]] = None,
         scale: Optional[float] = None, frames: Optional[int] = None,
         seed: Optional[int] = None, overrides: Optional[Overrides] = None, threads: int = 0,
         checkpoint_bytes: int = 0, checkpoint_every: int = 0, **deprecated: Any) -> "Scene":
    """Loads the scene file at `path` (as json.load reads a file; loads() takes text).

    size=(w, h) or scale=F render it at another size (the scene is scaled to it, as with
    `tidepool render --size`); overrides={"params.damping": 4} changes values as --set
    does (or "KEY=VALUE" strings); frames= and seed= replace the scene's. threads= (0..1024,
    0: every core) does not change the frames. checkpoint_bytes= bounds the memory kept
    for seeking backwards; checkpoint_every=N keeps one every N frames (0: after every
    40 ms of simulating; CHECKPOINTS_NONE: none).

    Raises FileNotFoundError, IsADirectoryError, PermissionError (with errno and filename)
    for a file that cannot be read, SceneError for a bad scene, TypeError, ValueError or
    OverflowError for a bad argument.
    """
    if isinstance(path, Mapping):
        warnings.warn("load(dict) is deprecated: use loads(dict)", DeprecationWarning,
                      stacklevel=2)
        return loads(path, size=size, scale=scale, frames=frames, seed=seed,
                     overrides=_overrides_of(overrides, deprecated), threads=threads,
                     checkpoint_bytes=checkpoint_bytes, checkpoint_every=checkpoint_every)
    overrides = _overrides_of(overrides, deprecated)
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError("path must be a str, bytes or os.PathLike, not %s"
                        % type(path).__name__)
    fspath = os.fsdecode(os.fspath(path))
    name = _text(fspath, "path")
    # the errors of open(): FileNotFoundError, IsADirectoryError, PermissionError, ...
    with open(fspath, "rb"):
        pass
    keep: List[Any] = []
    opts = _options(size, scale, frames, seed, overrides, threads, checkpoint_bytes,
                    checkpoint_every, keep)
    handle, err = ctypes.c_void_p(), _lib.Error()
    rc = _lib.lib.tp_scene_load_file(name, ctypes.byref(opts), ctypes.byref(handle),
                                     ctypes.byref(err))
    if rc < 0:
        _raise(rc, err)
    return Scene(handle)


def loads(text: Union[str, bytes, Mapping[str, Any]], *, name: Optional[str] = None,
          size: Optional[Tuple[int, int]] = None, scale: Optional[float] = None,
          frames: Optional[int] = None, seed: Optional[int] = None,
          overrides: Optional[Overrides] = None, threads: int = 0, checkpoint_bytes: int = 0,
          checkpoint_every: int = 0, **deprecated: Any) -> "Scene":
    """Loads a scene from its JSON text (str or UTF-8 bytes) or a dict, as json.loads.

    name= stands for the file in messages, and its folder resolves the scene's relative
    paths (background images); None: "<string>" in the working directory. The other
    keywords are load()'s.
    """
    overrides = _overrides_of(overrides, deprecated)
    if isinstance(text, Mapping):
        text = json.dumps(text)
    elif isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    data = _text(text, "text")
    label = None if name is None else _text(os.fsdecode(os.fspath(name)), "name=")
    keep: List[Any] = []
    opts = _options(size, scale, frames, seed, overrides, threads, checkpoint_bytes,
                    checkpoint_every, keep)
    handle, err = ctypes.c_void_p(), _lib.Error()
    rc = _lib.lib.tp_scene_load_string(data, label, ctypes.byref(opts), ctypes.byref(handle),
                                       ctypes.byref(err))
    if rc < 0:
        _raise(rc, err)
    return Scene(handle)


class _Handle:
    """The scene's tp_scene pointer, freed once: by close(), or by the garbage collector
    while the interpreter still runs (never during its shutdown, when the library's
    bindings may be gone)."""

    def __init__(self, h: ctypes.c_void_p) -> None:
        self.h: Optional[ctypes.c_void_p] = h

    def free(self) -> None:
        h, self.h = self.h, None
        if h and not _lib.is_finalizing():
            _lib.lib.tp_scene_free(h)


class Scene(Sequence[Array]):
    """A loaded scene: a sequence of its colour frames (len, scene[i], negative indices,
    iteration), and any frame in any mode with frame(). Frames can be asked for in any
    order; going back replays from a checkpoint kept in memory.

    Safe across threads: the calls on one scene take turns (a lock per scene), and close()
    waits for a call in progress. Close it (or use `with`) to free its memory at once."""

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self._lock = threading.Lock()
        self._box = _Handle(handle)
        self._finalizer = weakref.finalize(self, self._box.free)
        self._finalizer.atexit = False  # nothing calls the library at shutdown
        info = _lib.SceneInfo()
        _lib.lib.tp_scene_get_info(handle, ctypes.byref(info))
        self.path: str = info.path.decode("utf-8", "surrogateescape")
        self.solver: str = info.solver.decode()
        self.width: int = info.width
        self.size: Tuple[int, int] = (info.width, info.height)
        self.reference_size: Tuple[int, int] = (info.ref_width, info.ref_height)
        self.frame_count: int = info.frames
        self.fps: float = info.fps
        self.modes: Tuple[str, ...] = tuple(m for i, m in enumerate(MODES)
                                            if info.modes & (1 << i))
        self.has_height: bool = bool(info.heightfield)

    def __enter__(self) -> "Scene":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self.frame_count

    def __repr__(self) -> str:
        return "<tidepool.Scene %r %s %dx%d, %d frames at %g fps%s>" % (
            self.path, self.solver, self.size[0], self.size[1], self.frame_count, self.fps,
            "" if self._box.h else ", closed")

    def close(self) -> None:
        """Frees the scene, once a call in progress in another thread has returned; later
        calls raise ValueError. Closing twice is harmless."""
        with self._lock:
            self._finalizer.detach()
            self._box.free()

    @property
    def closed(self) -> bool:
        return self._box.h is None

    def _handle(self) -> ctypes.c_void_p:
        """The handle, for a caller holding the lock."""
        h = self._box.h
        if not h:
            raise ValueError("the scene is closed")
        return h

    def _index(self, n: Any) -> int:
        """A frame index: an integer (not bool, float or str), negative from the end."""
        i = _integer(n, "frame index")
        k = i + self.frame_count if i < 0 else i
        if not 0 <= k < self.frame_count:
            raise FrameIndexError("frame %d is out of range (the scene has %d frames)"
                                  % (i, self.frame_count))
        return k

    @property
    def text(self) -> str:
        """The scene's JSON text after the overrides= edits."""
        with self._lock:
            return str(_lib.lib.tp_scene_text(self._handle()).decode("utf-8", "replace"))

    @property
    def position(self) -> int:
        """The frame the simulation is at (-1 before the first)."""
        with self._lock:
            return int(_lib.lib.tp_scene_position(self._handle()))

    def reuse(self, old: "Scene") -> int:
        """Takes the in-memory checkpoints of `old`, an earlier version of this scene loaded
        the same way, that are still valid for this one (those made before the first moment
        the two can simulate differently: an edited drop at 3 s keeps the states before it,
        a new colour keeps all), so frames near the edit come without simulating from the
        start. The frames are the same either way. Returns how many were taken; `old` keeps
        none."""
        if not isinstance(old, Scene):
            raise TypeError("reuse() takes a tidepool.Scene, not %s" % type(old).__name__)
        if old is self:
            raise ValueError("a scene cannot reuse its own checkpoints")
        first, second = sorted((self, old), key=id)  # one order: no deadlock
        with first._lock, second._lock:
            return int(_lib.lib.tp_scene_reuse_checkpoints(self._handle(), old._handle()))

    def frame(self, n: int, mode: str = "color") -> Array:
        """Frame n (negative: from the end) in `mode`: uint8 H x W x 3 for colour (and
        8-bit maps), uint16 for 16-bit maps; single-channel maps (height, caustics) are
        H x W."""
        if not isinstance(mode, str):
            raise TypeError("mode must be a str, not %s" % type(mode).__name__)
        number = _lib.mode_number(mode)
        if number < 0:
            raise ValueError("mode must be one of %s (got %r)" % (", ".join(MODES), mode))
        k = self._index(n)
        with self._lock:
            h = self._handle()
            fmt, err = _lib.Format(), _lib.Error()
            rc = _lib.lib.tp_scene_format(h, number, ctypes.byref(fmt),
                                          ctypes.byref(err))
            if rc < 0:
                _raise(rc, err)
            dtype = np.uint8 if fmt.bytes_per_sample == 1 else np.uint16
            shape = (fmt.height, fmt.width) + ((fmt.channels,) if fmt.channels > 1 else ())
            out = np.empty(shape, dtype=dtype)
            rc = _lib.lib.tp_scene_render(h, k, number, out.ctypes.data,
                                          out.strides[0], ctypes.byref(err))
            if rc < 0:
                _raise(rc, err)
        return out

    def height_field(self, n: int) -> Array:
        """The height field of frame n (negative: from the end) in height units (1.0 = a
        drop of strength 1 at its centre), float32 H x W."""
        k = self._index(n)
        out = np.empty((self.size[1], self.size[0]), dtype=np.float32)
        err = _lib.Error()
        with self._lock:
            rc = _lib.lib.tp_scene_height(self._handle(), k, out.ctypes.data, out.strides[0],
                                          ctypes.byref(err))
        if rc < 0:
            _raise(rc, err)
        return out

    def height(self, n: int) -> Array:
        """Deprecated: height_field(n) (`height` read as the picture's height)."""
        warnings.warn("Scene.height(n) is deprecated: use Scene.height_field(n)",
                      DeprecationWarning, stacklevel=2)
        return self.height_field(n)

    @overload
    def __getitem__(self, n: int) -> Array: ...

    @overload
    def __getitem__(self, n: slice) -> List[Array]: ...

    def __getitem__(self, n: Union[int, slice]) -> Union[Array, List[Array]]:
        """scene[i]: colour frame i (negative: from the end); scene[a:b:c]: a list."""
        if isinstance(n, slice):
            return [self.frame(k) for k in range(*n.indices(self.frame_count))]
        return self.frame(n)

    def __iter__(self) -> Iterator[Array]:
        """The colour frames in order: one pass of the simulation."""
        for _, f in self.frames():
            yield f

    def __contains__(self, value: object) -> bool:
        raise TypeError("`in` is not defined for the frames of a Scene")

    def frames(self, mode: str = "color", start: int = 0,
               stop: Optional[int] = None) -> Iterator[Tuple[int, Array]]:
        """Yields (n, frame) for n in [start, stop) in order: one simulation pass."""
        first = _bounded(start, "start=", 0, self.frame_count)
        last = self.frame_count if stop is None else _bounded(stop, "stop=", 0,
                                                              self.frame_count)
        for n in range(first, last):
            yield n, self.frame(n, mode)

    def stats(self, n: int) -> Dict[str, float]:
        """The solver's statistics after frame n, as `render --stats` prints them:
        {"frame": n, "t": seconds, "energy": ..., ...}."""
        k = self._index(n)
        st, err = _lib.FrameStats(), _lib.Error()
        with self._lock:
            rc = _lib.lib.tp_scene_stats(self._handle(), k, ctypes.byref(st), ctypes.byref(err))
        if rc < 0:
            _raise(rc, err)
        d: Dict[str, float] = {"frame": st.frame, "t": st.t}
        for i in range(st.n):
            d[st.name[i].decode()] = st.value[i]
        return d
