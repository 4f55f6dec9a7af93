"""Baking the maps: the `tidepool` program in a subprocess, into a folder that only ever
holds a complete bake. No bpy here.

The scene goes into a fresh folder beside the final one (NAME.baking-PID) as scene.json,
whose outputs are the maps next to it; `tidepool render scene.json` writes them there
(each frame under a temporary name, renamed when complete). When every frame is there
the old folder is moved aside, the new one renamed into place and the old one removed; a
cancelled or failed bake removes its own folder and leaves the last complete bake as it
was. Progress is the number of displacement frames present.
"""
import glob
import json
import os
import shutil
import stat
import subprocess

from . import scene as tp_scene

HERE = os.path.dirname(os.path.abspath(__file__))


def program():
    """The tidepool program the bake runs, and where it was found.

    In order: $TIDEPOOL_PROGRAM; the Python package's tidepool.program_path() (the wheel
    ships the program; shim until the package has it: an ImportError or a missing
    attribute falls through); the program `make install` put beside the add-on
    (_installed.py); the program bundled in the add-on's zip (bin/tidepool, with
    lib/libtidepool.so.0 beside it); `tidepool` on PATH."""
    env = os.environ.get("TIDEPOOL_PROGRAM")
    if env:
        return env
    try:
        import tidepool  # noqa: PLC0415 (only when a bake asks)
        path = tidepool.program_path()
        if path and os.access(path, os.X_OK):
            return str(path)
    except (ImportError, AttributeError, OSError):
        pass
    try:  # make install writes the program's path beside the add-on
        from ._installed import PROGRAM  # noqa: PLC0415
        if os.access(PROGRAM, os.X_OK):
            return PROGRAM
    except ImportError:
        pass
    bundled = os.path.join(HERE, "bin", "tidepool")
    if os.path.isfile(bundled):
        # Blender's zip install does not keep the execute bit
        mode = os.stat(bundled).st_mode
        if not mode & stat.S_IXUSR:
            os.chmod(bundled, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return bundled
    found = shutil.which("tidepool")
    if found:
        return found
    raise FileNotFoundError(
        "the tidepool program was not found: install tidepool (make install), or the "
        "add-on's zip with the program in it (make blender-zip), or set TIDEPOOL_PROGRAM")


class BakeError(RuntimeError):
    pass


class Bake:
    """One bake of scene dict `sc` into folder `dest` (created or replaced on success)."""

    def __init__(self, sc, dest):
        self.sc = tp_scene.for_bake(sc)
        self.dest = os.path.abspath(dest)
        self.work = "%s.baking-%d" % (self.dest, os.getpid())
        self.frames = tp_scene.frames_of(self.sc)
        self.proc = None
        self.log = None
        self.done = False

    def start(self):
        prog = program()
        if os.path.exists(self.work):
            shutil.rmtree(self.work)
        os.makedirs(self.work)
        path = os.path.join(self.work, "scene.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(tp_scene.dumps(self.sc))
        self.log = open(os.path.join(self.work, "bake.log"), "w+b")
        # -y: the folder is new; the program prints its own progress to the log. Blender
        # keeps a core and the upper hand: one thread fewer than the cores (the bytes
        # do not depend on the thread count), a lower priority, and OpenMP threads that
        # sleep rather than spin while they wait
        threads = max(1, (os.cpu_count() or 2) - 1)
        env = dict(os.environ)
        env.setdefault("OMP_WAIT_POLICY", "passive")
        self.proc = subprocess.Popen([prog, "render", path, "-y", "--threads", str(threads)],
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env,
                                     preexec_fn=lambda: os.nice(10))
        return self

    def progress(self):
        """Frames of displacement written so far."""
        return len(glob.glob(os.path.join(glob.escape(self.work), "disp_[0-9]*.exr")))

    def poll(self):
        """None while the program runs; then True (the bake is in place) or raises."""
        if self.proc is None or self.proc.poll() is None:
            return None
        rc = self.proc.wait()
        self.log.seek(0)
        out = self.log.read().decode("utf-8", "replace").strip()
        self.log.close()
        if rc != 0:
            self._discard()
            lines = [ln for ln in out.splitlines() if ln.startswith("tidepool:")]
            raise BakeError(lines[-1] if lines else "tidepool render failed (exit %d)" % rc)
        if self.progress() != self.frames:
            self._discard()
            raise BakeError("tidepool wrote %d of %d frames" % (self.progress(), self.frames))
        os.remove(os.path.join(self.work, "bake.log"))
        old = "%s.old-%d" % (self.dest, os.getpid())
        if os.path.exists(self.dest):
            os.rename(self.dest, old)
        os.rename(self.work, self.dest)
        if os.path.exists(old):
            shutil.rmtree(old)
        self.done = True
        return True

    def cancel(self):
        """Stops the program and removes everything this bake wrote."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log is not None and not self.log.closed:
            self.log.close()
        self._discard()

    def wait(self, tick=None):
        """Runs the bake to its end (blocking; for `blender -b` and scripts)."""
        import time  # noqa: PLC0415
        while self.poll() is None:
            if tick:
                tick(self.progress(), self.frames)
            time.sleep(0.05)
        return True

    def _discard(self):
        if os.path.exists(self.work):
            shutil.rmtree(self.work, ignore_errors=True)


def save_scene(sc, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(tp_scene.dumps(sc))


def load_scene(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
