"""Building kernels ahead of time for a test (``swftools.aot``), shared by the SWF kernel and
replay kernel tests."""

from __future__ import annotations

import os
from pathlib import Path


def build_aot_module(tmp_path_factory, build, name: str, sources) -> tuple[Path, object]:
    """Kernels built ahead of time (``build()``, see ``swftools.aot``) into a fresh directory and
    loaded: (directory, module). The environment is restored afterwards."""
    from swftools import aot

    directory = tmp_path_factory.mktemp(f"aot-{name}")
    saved = {key: os.environ.get(key) for key in (aot.ENV_DIR, aot.ENV_SWITCH)}
    os.environ.update({aot.ENV_DIR: str(directory), aot.ENV_SWITCH: "1"})
    try:
        build()
        module = aot.load(name, sources)
    finally:
        for key, value in saved.items():
            if value is None:
                del os.environ[key]
            else:
                os.environ[key] = value
    assert module is not None
    return directory, module
