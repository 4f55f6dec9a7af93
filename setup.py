"""The build step pyproject.toml cannot say: make builds libtidepool, the tidepool program
and its av plugin, and they go into the package as tidepool/_native/ (the program finds
the library and the plugin beside it, through its $ORIGIN run path). The wheel is then
specific to this platform, not pure Python."""

import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

NATIVE = ("libtidepool.so.0", "tidepool", "tidepool-av.so")
HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithMake(build_py):
    def run(self) -> None:
        build = os.environ.get("TIDEPOOL_BUILD", "build")
        jobs = os.environ.get("TIDEPOOL_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["make", "-j" + jobs, "BUILD=" + build]
                       + ["%s/%s" % (build, n) for n in NATIVE], cwd=HERE, check=True)
        super().run()
        dest = os.path.join(self.build_lib, "tidepool", "_native")
        os.makedirs(dest, exist_ok=True)
        for n in NATIVE:
            shutil.copy2(os.path.join(HERE, build, n), os.path.join(dest, n))


class NativeDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        return True  # a platform wheel: it holds the library and the program


os.makedirs(os.path.join(HERE, "build"), exist_ok=True)  # egg_base, before make makes it
setup(cmdclass={"build_py": BuildWithMake}, distclass=NativeDistribution,
      options={"build": {"build_base": "build/setuptools"},
               "egg_info": {"egg_base": "build"}})
