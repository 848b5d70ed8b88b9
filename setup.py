"""Build the compiled kernels: every ``swftools/**/_*.pyx`` becomes an optional extension module.

The metadata is in ``pyproject.toml``; this file only adds the Cython extensions and copies
``schemas/`` and ``archive/templates/`` into the package (``swftools/_schemas``,
``swftools/release/_templates``), where an installed swftools finds them. An extension that
cannot be built (no C compiler) is skipped with a warning: the package then runs the
pure-Python reference of that kernel and says so once per process.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# copied into the package: (source folder, destination under the build's package root)
DATA_TREES = (("schemas", "swftools/_schemas"),
              ("archive/templates", "swftools/release/_templates"))
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True,
              "initializedcheck": False, "language_level": 3}
COMPILE_ARGS = [] if sys.platform == "win32" else ["-O2"]  # portable: no -march=native


def extensions() -> list:
    """One optional Extension per ``.pyx`` under ``swftools/``, named by its path."""
    import numpy
    from Cython.Build import cythonize
    from setuptools import Extension

    found = sorted(HERE.glob("swftools/**/*.pyx"))
    modules = [Extension(".".join(p.relative_to(HERE).with_suffix("").parts),
                         [str(p.relative_to(HERE))], include_dirs=[numpy.get_include()],
                         extra_compile_args=COMPILE_ARGS, optional=True,
                         define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")])
               for p in found]
    return cythonize(modules, compiler_directives=DIRECTIVES, quiet=True)


class BuildPy(build_py):
    """``build_py`` that also copies the schemas and release templates into the package and
    writes its version into ``swftools/_version.py`` (importlib.metadata costs ~50 ms a process:
    every convert records the version)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads them from the checkout
            return
        for source, target in DATA_TREES:
            destination = Path(self.build_lib) / target
            shutil.rmtree(destination, ignore_errors=True)
            shutil.copytree(HERE / source, destination)
        version = self.distribution.get_version()
        (Path(self.build_lib) / "swftools" / "_version.py").write_text(
            f'"""Written by setup.py when the package was built."""\n\nVERSION = {version!r}\n',
            encoding="utf-8")


class BuildExt(build_ext):
    """``build_ext`` that says, once, what a skipped extension means."""

    def run(self) -> None:
        super().run()
        missing = [e.name for e in self.extensions
                   if not Path(self.get_ext_fullpath(e.name)).exists()]
        if missing:
            print(f"swftools: could not compile {', '.join(missing)} (is a C compiler installed?); "
                  "the pure-Python kernels will run instead, much slower", file=sys.stderr)


setup(ext_modules=extensions(), cmdclass={"build_py": BuildPy, "build_ext": BuildExt})
