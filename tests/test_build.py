"""The build (issue 26): every Cython kernel of the checkout is built and importable, so that no
test of a compiled twin silently compares the pure-Python reference with itself."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = sorted(ROOT.glob("swftools/**/*.pyx"))


def test_there_are_kernels():
    assert {p.name for p in KERNELS} >= {"_kernels.pyx", "_engine_flat.pyx", "_engine_gpu.pyx"}


@pytest.mark.parametrize("source", KERNELS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_kernel_is_built(source):
    name = ".".join(source.relative_to(ROOT).with_suffix("").parts)
    module = importlib.import_module(name)  # ImportError: run `make dev` (needs a C compiler)
    assert Path(module.__file__).suffix in (".so", ".pyd"), module.__file__

