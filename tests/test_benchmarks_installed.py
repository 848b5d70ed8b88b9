"""benchmarks/_installed.py: what the whole-process benchmark runs swftools as (issue 26)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def installed():
    spec = importlib.util.spec_from_file_location("_installed", BENCHMARKS / "_installed.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["_installed"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("_installed", None)


def test_timed_processes_see_no_checkout_and_empty_kernel_caches(installed, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(BENCHMARKS.parent))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "warm-from-a-developer"))
    monkeypatch.setenv("SWFTOOLS_AOT_DIR", str(tmp_path / "aot-from-make-aot"))
    env = installed._clean_env(tmp_path / "caches")
    assert "PYTHONPATH" not in env
    for var in installed.CACHE_VARIABLES:
        folder = Path(env[var])
        assert folder.is_dir() and not any(folder.iterdir())
        assert folder.is_relative_to(tmp_path / "caches")


def test_every_cold_run_gets_new_empty_caches(installed, tmp_path):
    ours = installed.Installed(bin=tmp_path, env=installed._clean_env(tmp_path / "c"), how="",
                               caches=tmp_path / "c")
    first, second = ours.cold_env(), ours.cold_env()
    for var in installed.CACHE_VARIABLES:
        assert first[var] != second[var] != ours.env[var]
        assert not any(Path(second[var]).iterdir())
    in_place = installed.Installed(bin=tmp_path, env={}, how="")
    with pytest.raises(SystemExit, match="in-place"):
        in_place.cold_env()


def test_kernel_cache_files_are_found_in_the_installed_package(installed, tmp_path):
    package = tmp_path / "lib" / "python3.11" / "site-packages" / "swftools"
    (package / "replay" / "__pycache__").mkdir(parents=True)
    (package / "replay" / "__pycache__" / "engine.cpython-311.pyc").write_bytes(b"")
    assert installed.kernel_cache_files(tmp_path) == []
    stale = package / "replay" / "__pycache__" / "engine_jit.run-12.py311.nbi"
    stale.write_bytes(b"")
    assert installed.kernel_cache_files(tmp_path) == [stale]
