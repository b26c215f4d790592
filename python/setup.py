"""Packaging of the kiln Python package (metadata in pyproject.toml).

The package is pure Python over Kiln's C API (ctypes). When a built
libKilnCAPI.so is found (KILN_LIBRARY, else $KILN_BUILD_DIR/lib, else the
checkout's build/lib), it is copied into the package, so the installed
package finds it next to itself; otherwise the installed package looks for it
at run time (see kiln/_capi.py).
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

LIB = "libKilnCAPI.so"


def find_library():
    env = os.environ.get("KILN_LIBRARY")
    if env:
        return os.path.join(env, LIB) if os.path.isdir(env) else env
    here = os.path.dirname(os.path.abspath(__file__))
    for build in (os.environ.get("KILN_BUILD_DIR"),
                  os.path.join(os.path.dirname(here), "build")):
        if build and os.path.exists(os.path.join(build, "lib", LIB)):
            return os.path.join(build, "lib", LIB)
    return None


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        lib = find_library()
        if lib:
            target = os.path.join(self.build_lib, "kiln", LIB)
            # Copy the file the symlink chain ends at (libKilnCAPI.so.0.x.y)
            # under the plain name the package loads.
            shutil.copyfile(os.path.realpath(lib), target)
            print("kiln: bundled %s" % os.path.realpath(lib))
        else:
            print("kiln: no %s found (set KILN_LIBRARY); the package will "
                  "look for it at run time" % LIB)


setup(cmdclass={"build_py": BuildPyWithLibrary})
