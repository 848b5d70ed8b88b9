"""``swftools.aot`` (issue 15): numba functions compiled ahead of time into an extension module,
keyed by their source and versions, loaded without numba, absent -> None (callers fall back)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from swftools import aot


def _scale(values, factor):  # compiled below: a pure-Python function, as pycc takes them
    out = np.empty(len(values), np.int64)
    for i in range(len(values)):
        out[i] = values[i] * factor
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(cache dir, source file, module path) of a module built once for these tests."""
    directory = tmp_path_factory.mktemp("aot")
    source = directory / "kernel_source.py"
    source.write_text("# the kernels' source: its bytes key the module\n", encoding="utf-8")
    saved = os.environ.get(aot.ENV_DIR)
    os.environ[aot.ENV_DIR] = str(directory)
    try:
        path = aot.build("swftools_test_aot", source,
                         {"scale": (_scale, "int64[:](int64[:], int64)")})
    finally:
        if saved is None:
            del os.environ[aot.ENV_DIR]
        else:
            os.environ[aot.ENV_DIR] = saved
    return directory, source, path


def test_build_then_load_runs_without_numba(built):
    directory, source, path = built
    assert path.is_file() and path.parent == directory
    assert [p.name for p in directory.iterdir() if p.name.startswith(".")] == []  # no leftovers
    code = f"""
import json, sys
from pathlib import Path
from swftools import aot
import numpy as np
module = aot.load("swftools_test_aot", Path({str(source)!r}))
print(json.dumps({{"out": module.scale(np.arange(4), 3).tolist(),
                   "numba": "numba" in sys.modules}}))
"""
    env = {**os.environ, aot.ENV_DIR: str(directory), aot.ENV_SWITCH: "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env, timeout=120)
    assert json.loads(done.stdout) == {"out": [0, 3, 6, 9], "numba": False}


def test_no_module_for_another_source_or_when_switched_off(built, monkeypatch, tmp_path):
    directory, source, path = built
    monkeypatch.setenv(aot.ENV_DIR, str(directory))
    monkeypatch.setenv(aot.ENV_SWITCH, "1")
    assert aot.module_path("swftools_test_aot", source) == path
    assert aot.load("swftools_test_aot", source) is not None
    edited = tmp_path / "kernel_source.py"
    edited.write_text(source.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert aot.module_path("swftools_test_aot", edited) != path  # an edit is never served stale
    assert aot.load("swftools_test_aot", edited) is None
    monkeypatch.setenv(aot.ENV_SWITCH, "0")
    assert aot.load("swftools_test_aot", source) is None
    monkeypatch.setenv(aot.ENV_DIR, str(tmp_path / "empty"))
    monkeypatch.setenv(aot.ENV_SWITCH, "1")
    assert aot.load("swftools_test_aot", source) is None


def test_a_broken_file_is_no_module(monkeypatch, tmp_path):
    monkeypatch.setenv(aot.ENV_DIR, str(tmp_path))
    monkeypatch.setenv(aot.ENV_SWITCH, "1")
    source = tmp_path / "src.py"
    source.write_text("x = 1\n", encoding="utf-8")
    path = aot.module_path("swftools_broken_aot", source)
    path.write_bytes(b"not an extension module")
    assert aot.load("swftools_broken_aot", source) is None


def test_default_cache_dir_is_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(aot.ENV_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert aot.cache_dir() == tmp_path / "swftools" / "aot"
