"""libtidepool through ctypes: the structs of include/tidepool.h, the calls' signatures,
where the library and the program are, and the import's checks.

The structs are laid out here by hand, as ctypes needs them; the import compares each
one's size with the library's own (tp_struct_size) and the library's version with the
package's, and refuses a libtidepool that does not match (ImportError).
"""

import ctypes
import os
import pathlib
import shutil
import sys
from typing import Any, Dict, List, Optional, Tuple

from ._version import __version__

ERROR_ARGUMENT, ERROR_INPUT, ERROR_IO = -2, -3, -4
FRAME_STATS_MAX = 16
MAX_THREADS = 1024
MAX_FRAMES = 1000000
CHECKPOINTS_NONE = -1
# tp_override: how the library's messages name the load options (tp_load_options.names).
OVERRIDE_NAMES = ("overrides=", "size=", "scale=", "frames=", "seed=", "output")

_HERE = pathlib.Path(__file__).resolve().parent
_NATIVE = _HERE / "_native"  # what pip installs: the library, the program, its av plugin
_TREE_BUILD = _HERE.parents[1] / "build"  # python/tidepool in a tree built with make


class _Sized(ctypes.Structure):
    """A struct of tidepool.h: its first member, size, says how long it is (TP_*_INIT)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.size = ctypes.sizeof(self)


class Error(_Sized):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("code", ctypes.c_int),
        ("file", ctypes.c_char * 1024),
        ("line", ctypes.c_int),
        ("col", ctypes.c_int),
        ("message", ctypes.c_char * 1024),
        ("text", ctypes.c_char * 2048),
    ]


class LoadOptions(_Sized):
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
        ("names", ctypes.POINTER(ctypes.c_char_p)),
        ("nnames", ctypes.c_int),
    ]


class Format(_Sized):
    _fields_ = [("size", ctypes.c_size_t)] + [
        (n, ctypes.c_int) for n in ("width", "height", "channels", "bytes_per_sample")
    ]


class SceneInfo(_Sized):
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


class FrameStats(_Sized):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("frame", ctypes.c_int),
        ("t", ctypes.c_double),
        ("n", ctypes.c_int),
        ("name", ctypes.c_char_p * FRAME_STATS_MAX),
        ("value", ctypes.c_double * FRAME_STATS_MAX),
    ]


# The structs the package lays out, by their C names, for the import's check.
STRUCTS = {
    "tp_error": Error,
    "tp_load_options": LoadOptions,
    "tp_format": Format,
    "tp_scene_info": SceneInfo,
    "tp_frame_stats": FrameStats,
}


def _first_existing(paths: List[pathlib.Path]) -> Optional[pathlib.Path]:
    for p in paths:
        if p.exists():
            return p
    return None


def _installed(name: str) -> Optional[str]:
    """What `make install` recorded in _installed.py (LIBRARY, PROGRAM), if it ran."""
    try:
        from . import _installed as inst  # type: ignore[attr-defined]
    except ImportError:
        return None
    value = getattr(inst, name, None)
    return value if isinstance(value, str) else None


def library_path() -> str:
    """The libtidepool the package uses: $TIDEPOOL_LIBRARY, else the one installed with it
    (pip, or make install), else the tree's build/ beside it, else the loader's."""
    env = os.environ.get("TIDEPOOL_LIBRARY")
    if env:
        return env
    found = _first_existing([_NATIVE / "libtidepool.so.0"])
    if found:
        return str(found)
    inst = _installed("LIBRARY")
    if inst:
        return inst
    found = _first_existing([_TREE_BUILD / "libtidepool.so.0"])
    return str(found) if found else "libtidepool.so.0"


def program_path() -> str:
    """The tidepool program that goes with the package: the one pip installed inside it
    (with its av plugin beside it), else make install's, else the tree's build/, else the
    first `tidepool` on PATH. Raises FileNotFoundError if there is none."""
    candidates = [_NATIVE / "tidepool"]
    inst = _installed("PROGRAM")
    if inst:
        candidates.append(pathlib.Path(inst))
    candidates.append(_TREE_BUILD / "tidepool")
    found = _first_existing(candidates)
    if found:
        return str(found)
    on_path = shutil.which("tidepool")
    if on_path:
        return on_path
    raise FileNotFoundError(2, "no tidepool program beside the package, installed or on PATH",
                            "tidepool")


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    E = ctypes.POINTER(Error)
    sig: Dict[str, Tuple[Any, List[Any]]] = {
        "tp_version": (ctypes.c_char_p, []),
        "tp_version_number": (I, []),
        "tp_struct_size": (S, [ctypes.c_char_p]),
        "tp_mode_name": (ctypes.c_char_p, [I]),
        "tp_mode_from_name": (I, [ctypes.c_char_p]),
        "tp_scene_load_file": (I, [ctypes.c_char_p, ctypes.POINTER(LoadOptions),
                                   ctypes.POINTER(P), E]),
        "tp_scene_load_string": (I, [ctypes.c_char_p, ctypes.c_char_p,
                                     ctypes.POINTER(LoadOptions), ctypes.POINTER(P), E]),
        "tp_scene_free": (None, [P]),
        "tp_scene_get_info": (I, [P, ctypes.POINTER(SceneInfo)]),
        "tp_scene_text": (ctypes.c_char_p, [P]),
        "tp_scene_format": (I, [P, I, ctypes.POINTER(Format), E]),
        "tp_scene_set_threads": (I, [P, I]),
        "tp_scene_seek": (I, [P, I, E]),
        "tp_scene_position": (I, [P]),
        "tp_scene_render": (I, [P, I, I, P, S, E]),
        "tp_scene_height": (I, [P, I, P, S, E]),
        "tp_scene_stats": (I, [P, I, ctypes.POINTER(FrameStats), E]),
        "tp_scene_reuse_checkpoints": (I, [P, P]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def _open() -> ctypes.CDLL:
    path = library_path()
    try:
        lib = _bind(ctypes.CDLL(path))
    except (OSError, AttributeError) as e:
        raise ImportError("tidepool: cannot use libtidepool at %s: %s" % (path, e)) from e
    have = lib.tp_version().decode()
    if have != __version__:
        raise ImportError("tidepool %s: libtidepool at %s is version %s; the package needs %s"
                          % (__version__, path, have, __version__))
    for cname, cls in STRUCTS.items():
        theirs = lib.tp_struct_size(cname.encode())
        if theirs != ctypes.sizeof(cls):
            raise ImportError("tidepool %s: libtidepool at %s has %s of %d bytes; the package "
                              "lays it out in %d" % (__version__, path, cname, theirs,
                                                     ctypes.sizeof(cls)))
    return lib


lib = _open()


def _mode_names() -> Tuple[str, ...]:
    """The library's render modes in their numbers: tp_mode_name(0), (1), ... up to NULL
    (the package keeps no list of its own)."""
    names: List[str] = []
    while True:
        name = lib.tp_mode_name(len(names))
        if name is None:
            return tuple(names)
        names.append(name.decode())


MODES = _mode_names()


def mode_number(name: str) -> int:
    """tp_mode_from_name(name): the mode's number, or -1 (also for a name C cannot hold)."""
    try:
        raw = name.encode()
    except UnicodeEncodeError:
        return -1
    return -1 if b"\0" in raw else int(lib.tp_mode_from_name(raw))

# The names messages give the load options, as the library takes them.
_NAMES = (ctypes.c_char_p * len(OVERRIDE_NAMES))(*(n.encode() for n in OVERRIDE_NAMES))
NAMES = ctypes.cast(_NAMES, ctypes.POINTER(ctypes.c_char_p))


def is_finalizing() -> bool:
    return sys.is_finalizing()
