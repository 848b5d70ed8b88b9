"""Shared fixtures: the real traces in ../shared/traces (skipped with a reason when absent)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SWFTOOLS_SHARED", ROOT.parent / "shared"))
TRACES = SHARED / "traces"
SAMPLES = ROOT / "samples"

# How hard the properties search: ``examples(n)`` draws n examples in the default run (`make
# test`, CI: the suite stays under 10 minutes on 2 cores) and n x SWFTOOLS_TEST_DEPTH in a
# deeper one (`make test-deep`, weekly). The heaviest properties (compiled-vs-Python twins,
# brute-force references) give their own n; the others take the profile's 30, locally and in CI.
TEST_DEPTH = max(1, int(os.environ.get("SWFTOOLS_TEST_DEPTH", "1")))


def examples(n: int) -> int:
    """``max_examples`` for a property: ``n`` scaled by ``SWFTOOLS_TEST_DEPTH``."""
    return n * TEST_DEPTH


settings.register_profile("swftools", max_examples=examples(30), deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("swftools")

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


def text_under_c_locale(code: str, *args: str) -> str:
    """What ``python -c code args`` prints with UTF-8 hex-encoded (``print(x.encode().hex())``),
    run under the C locale (ASCII; neither UTF-8 mode nor an I/O encoding forced): for tests that
    a file is read as UTF-8 whatever the user's locale."""
    import subprocess
    import sys

    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}
    env.pop("PYTHONIOENCODING", None)
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=False, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return bytes.fromhex(done.stdout.strip()).decode("utf-8")


def other_hash_seed() -> str:
    """A ``PYTHONHASHSEED`` for a child process other than this process's seed (random unless
    set): the determinism tests compare what this process wrote with what the child writes."""
    return "1" if os.environ.get("PYTHONHASHSEED") == "4242" else "4242"


def built_once(tmp_path_factory, name: str, build) -> Path:
    """The folder ``build(folder)`` makes, made once per test run and shared by the xdist
    workers: the first to ask builds it under a lock, the others wait for it and read it. Only
    for outputs no test changes (an expensive build two test modules read)."""
    import fcntl
    import shutil

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    target = base / f"built-{name}"
    with open(base / f"built-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_dir():
            partial = base / f"built-{name}.partial"
            shutil.rmtree(partial, ignore_errors=True)  # a build that failed in another worker
            build(partial)
            partial.rename(target)
    return target


def sample_html_report(tmp_path_factory) -> Path:
    """``report --html --whatif`` of the bundled sample (its what-if of ``packed`` and ``lxv`` on
    ``aaic-v100-half`` beside it, ``../whatif``), both made by the CLI in child processes under
    ``other_hash_seed()``; built once per run (tests/test_report_html.py compares it with its
    in-process run, tests/test_report_browser.py opens its page)."""
    import subprocess
    import sys

    def build(folder: Path) -> None:
        folder.mkdir()
        env = dict(os.environ, PYTHONHASHSEED=other_hash_seed())
        cli = [sys.executable, "-m", "swftools.cli"]
        sample = str(SAMPLES / "aaic-sample.csv.gz")
        for argv in (["whatif", sample, "--site", "aaic-v100-half", "--policies", "packed,lxv",
                      "-o", str(folder / "whatif")],
                     ["report", sample, "-o", str(folder / "rep"), "--html",
                      "--whatif", str(folder / "whatif")]):
            subprocess.run(cli + argv, check=True, capture_output=True, env=env)

    return built_once(tmp_path_factory, "sample-html-report", build) / "rep"


# A 1x1 PNG: what the stub below writes for each figure file
_PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63"
    "f8ffff3f030008fc02fea79aa0a00000000049454e44ae426082")


@contextlib.contextmanager
def stubbed_figures():
    """Figures as placeholders (a small SVG naming the figure, a 1x1 PNG), not drawn: for tests
    about something else in a report or a release (refusals, ``--force``, the page's tables),
    where matplotlib's drawing was most of the time (about 0.3 s a figure, 27 a release). The
    figures are drawn for real by the figure tests, the browser test and every byte-identity
    test (the example archive, the cross-process report and release), which never stub them."""
    from swftools.report import figures

    def svg(data, name, *, narrow=False):
        assert name in figures.available(data), name
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="90" height="40">'
                f'<title>{name}{" (narrow)" if narrow else ""}</title></svg>')

    def draw(data, out_dir):
        names = figures.available(data)
        for name in names:
            (out_dir / name).write_bytes(_PNG_1X1)
        return names

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(figures, "svg", svg)
        patch.setattr(figures, "draw", draw)
        yield


@pytest.fixture
def stub_figures():
    """``stubbed_figures()`` for one test."""
    with stubbed_figures():
        yield


def pytest_collection_modifyitems(config, items):
    """Files with slow tests first (each file's tests stay together and in order): with
    ``--dist loadfile`` the workers then end on short files, not one on a long file while the
    other has nothing left."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
