"""Shared fixtures: the real traces in ../shared/traces (skipped with a reason when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SWFTOOLS_SHARED", ROOT.parent / "shared"))
TRACES = SHARED / "traces"
SAMPLES = ROOT / "samples"

settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=30, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")

SWF_TRACES = sorted(p.name for p in TRACES.glob("*.swf.gz")) if TRACES.is_dir() else []


def trace_path(name: str) -> Path:
    """Path of a real trace; skips the test with a reason when ../shared is not beside the checkout."""
    path = TRACES / name
    if not path.is_file():
        pytest.skip(f"real trace {name} not available: {TRACES} is absent "
                    "(CI provides ../shared beside the checkout)")
    return path


@pytest.fixture
def traces_dir() -> Path:
    if not TRACES.is_dir():
        pytest.skip(f"{TRACES} is absent (CI provides ../shared beside the checkout)")
    return TRACES
