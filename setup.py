"""Build the compiled kernels: every ``swftools/**/*.pyx`` as an optional Cython extension
(a module that fails to build leaves its pure-Python reference in charge)."""

from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True,
              "language_level": 3}
extensions = [
    Extension(".".join(path.with_suffix("").parts), [str(path)],
              include_dirs=[numpy.get_include()], optional=True)
    for path in sorted(Path("swftools").glob("**/*.pyx"))
]
setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, include_path=["."]))
