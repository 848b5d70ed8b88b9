"""Lean start-up (issue 15): the CLI and ``--help`` load no heavy library.

Each check runs a fresh interpreter (``sys.modules`` of this test process is full of everything
the other tests imported) and lists the modules it ended up with. Timings are not asserted here:
they are figures of ``benchmarks/bench_process.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Loaded only by the commands that use them, when they run.
HEAVY = ("scipy", "matplotlib", "duckdb", "frictionless", "numba", "pandas", "pyarrow",
         "jsonschema", "numpy", "dask",
         "rich")  # typer's rich help rendering (the CLI asks for click's plain help)

_DUMP = "import sys, json; print(json.dumps(sorted(sys.modules)))"

# Runs the console entry point on each argv in turn (catching the help's SystemExit), in one
# interpreter, then prints the modules loaded.
_HELP_SCRIPT = """
import contextlib, io, json, sys
import swftools.cli as cli
codes = []
for argv in json.loads(sys.argv[1]):
    sys.argv = ["swftools", *argv]
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.main()
        except SystemExit as exc:
            codes.append(exc.code)
print(json.dumps({"codes": codes, "modules": sorted(sys.modules)}))
"""


def _fresh(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def _help_paths() -> list[list[str]]:
    from swftools.cli import command_paths

    return [list(p) for p in command_paths()]


def test_import_cli_loads_no_heavy_module():
    modules = json.loads(_fresh("import swftools.cli; " + _DUMP))
    assert "swftools.cli.convert" in modules  # the commands are registered ...
    assert _heavy(modules) == []  # ... without their libraries


def test_import_swftools_loads_no_heavy_module():
    """``import swftools`` keeps ``convert/read/write`` and the subpackages lazy."""
    modules = json.loads(_fresh("import swftools; " + _DUMP))
    assert _heavy(modules) == []
    assert "swftools.formats.swf" not in modules


def test_every_help_loads_no_heavy_module():
    """``swftools --help`` and ``swftools COMMAND [SUBCOMMAND] --help``, all in one process."""
    paths = _help_paths()
    assert len(paths) > 10 and ["convert"] in paths and ["whatif", "run"] in paths
    result = json.loads(_fresh(_HELP_SCRIPT, json.dumps([[*p, "--help"] for p in paths])))
    assert result["codes"] == [0] * len(paths)
    assert _heavy(result["modules"]) == []


def test_lazy_attributes_still_work():
    """What ``swftools/__init__.py`` loads on first use is what it loaded eagerly before."""
    modules = json.loads(_fresh(
        "import swftools, swftools.formats as f; "
        "assert swftools.read is f.read and swftools.write is f.write "
        "and swftools.convert is f.convert; "
        "from swftools import __version__; assert __version__ == swftools.__version__; "
        + _DUMP))
    assert "swftools.formats" in modules
    with pytest.raises(AttributeError):
        import swftools

        swftools.no_such_thing  # noqa: B018


def test_help_constants_equal_the_library():
    """The CLI spells a few names for its help text instead of importing their (heavy) modules."""
    from swftools.cli import anonymize as cli_anonymize
    from swftools.cli import replay as cli_replay
    from swftools.privacy.pseudonyms import DEFAULT_KEY_ENV
    from swftools.replay import ALLOCATIONS, POLICIES
    from swftools.replay.compare import DAY_S

    assert cli_replay.POLICIES == POLICIES
    assert cli_replay.ALLOCATIONS == ALLOCATIONS
    assert cli_replay.DAY_S == DAY_S
    assert cli_anonymize.DEFAULT_KEY_ENV == DEFAULT_KEY_ENV
    from swftools.cli import telemetry as cli_telemetry
    from swftools.telemetry.engine import DEFAULT_MEMORY_CAP_MB

    assert cli_telemetry.MEMORY_CAP_MB == DEFAULT_MEMORY_CAP_MB


# The SWF path of convert and the flat-pool replay run on numpy, pyarrow and the compiled kernels
# only (no numba: 0.3-0.45 s a process): pyarrow would import pandas on its first Python/numpy
# conversion (0.15-0.25 s).
_SWF_RUN_SCRIPT = """
import json, sys
import swftools.cli as cli
for argv in json.loads(sys.argv[1]):
    sys.argv = ["swftools", *argv]
    try:
        cli.main()
    except SystemExit as exc:
        assert not exc.code, (argv, exc.code)
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("command", ["convert", "replay"])
def test_swf_convert_and_flat_replay_load_no_pandas_or_scipy(tmp_path, command):
    src = tmp_path / "in.swf"
    src.write_text("; Version: 2.2\n; MaxProcs: 8\n; UnixStartTime: 1000\n" + "".join(
        f"{j} {10 * j} {j % 3} {50 + j} {1 + j % 4} 1.5 -1 {1 + j % 4} 100 -1 1 {j % 2} 1 -1 "
        f"{1 + j % 2} 1 -1 -1\n" for j in range(1, 40)), encoding="ascii")
    argv = (["convert", str(src), "--out", str(tmp_path / "out.swf")] if command == "convert"
            else ["replay", str(src), "--procs", "8", "--out", str(tmp_path / "replay")])
    modules = json.loads(_fresh(_SWF_RUN_SCRIPT, json.dumps([argv])).splitlines()[-1])
    # the command did run its compiled kernels
    assert "pyarrow" in modules and "swftools.formats.swf._kernels" in modules
    unwanted = ("pandas", "scipy", "numpy.f2py", "matplotlib", "duckdb", "frictionless",
                "dask", "numba", "llvmlite")
    assert [m for m in modules if m.startswith(unwanted)] == []
    # SWF to SWF, and a replay of a trace in submit order, go through numpy and the buffers:
    # pyarrow.compute costs ~0.1 s to import
    assert "pyarrow.compute" not in modules


def _gpu_swf(path, jobs: int) -> None:
    """An SWF of ``jobs`` GPU jobs (1 to 16 GPUs) for the AAIC presets."""
    path.write_text("; Version: 2.2\n; MaxProcs: 320\n; UnixStartTime: 1500000000\n" + "".join(
        f"{j} {60 * j} -1 {300 + j % 997} {1 << j % 5} -1 -1 {1 << j % 5} 3600 -1 1 "
        f"{1 + j % 7} 1 -1 1 1 -1 -1\n" for j in range(1, jobs + 1)), encoding="ascii")


# Issue 26: a what-if run and a replay on a site preset pay for neither pandas (pyarrow's
# to_numpy, ~0.25 s), jsonschema (the presets are checked by the tests, ~0.1 s), pyarrow.compute
# (~40 ms), pyarrow.parquet (nothing written) nor numpy.ma (np.unique and a float np.median
# load it, ~10 ms).
NOT_ON_THE_REPLAY_PATH = ("pandas", "jsonschema", "pyarrow.compute", "pyarrow.parquet",
                          "numpy.ma", "scipy", "matplotlib", "importlib.metadata")


@pytest.mark.parametrize("jobs", [40, 2_000], ids=["python", "compiled"])
@pytest.mark.parametrize("command", ["whatif", "replay"])
def test_whatif_and_site_replay_load_none_of_the_heavy_modules(tmp_path, command, jobs):
    src = tmp_path / "in.swf"
    _gpu_swf(src, jobs)
    argv = (["whatif", "run", str(src), "--site", "aaic-v100-half", "--policies", "packed,lxv",
             "--no-progress"] if command == "whatif"
            else ["replay", str(src), "--site", "aaic", "--scheduler", "easy"])
    modules = json.loads(_fresh(_SWF_RUN_SCRIPT, json.dumps([argv])).splitlines()[-1])
    assert "swftools.replay.engine_gpu" in modules  # it did replay
    from swftools.replay.engine_gpu import COMPILED_MIN_JOBS

    if jobs >= COMPILED_MIN_JOBS:  # on the compiled engines
        assert ("swftools.replay._engine_general" if command == "whatif"
                else "swftools.replay._engine_gpu") in modules
    assert [m for m in modules if m in NOT_ON_THE_REPLAY_PATH
            or m.startswith(tuple(f"{p}." for p in NOT_ON_THE_REPLAY_PATH))] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")
@pytest.mark.parametrize(("preset", "expected"), [(None, "1"), ("2", "2")])
def test_cli_starts_numpy_without_a_blas_thread_pool(preset, expected):
    """The CLI defaults ``OPENBLAS_NUM_THREADS`` to 1 before numpy loads (swftools does no linear
    algebra; OpenBLAS's pool busy-waits on the other cores at start-up); a user's own setting
    is kept, and numpy's OpenBLAS honours it (the pool's threads exist with 2)."""
    import os

    code = ("import os, swftools.cli, numpy; "
            "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env)
    setting, threads = done.stdout.split()
    assert setting == expected
    assert int(threads) == int(expected)  # the main thread, plus OpenBLAS's others


_EXIT_SCRIPT = """
import atexit, gc, json, sys
import swftools.cli as cli
atexit.register(lambda: print("atexit ran", flush=True))
sys.argv = ["swftools", *json.loads(sys.argv[1])]
before = gc.get_freeze_count()
try:
    cli.main()
except SystemExit as exc:
    print("exit", exc.code, "frozen", before == 0 and gc.get_freeze_count() > 0)
"""


@pytest.mark.parametrize("good", [True, False], ids=["success", "bad-input"])
def test_console_entry_freezes_objects_before_exit(tmp_path, good):
    """The console entry point ends with ``gc.freeze()``, out of the reach of the last garbage
    collection at interpreter exit (~30 ms after a convert), whatever the command's outcome;
    output, the exit code and atexit handlers are as before."""
    src = tmp_path / "in.swf"
    src.write_text("; Version: 2.2\n1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n"
                   if good else "1 0 zero\n", encoding="ascii")
    out = tmp_path / "out.swf"
    done = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT,
                           json.dumps(["convert", str(src), "--out", str(out)])],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == [f"exit {0 if good else 1} frozen True", "atexit ran"]
    assert out.exists() == good
    assert ("wrote 1 of 1 job:" in done.stderr) == good


def test_verify_loads_neither_the_release_pipeline_nor_the_report(tmp_path):
    """``swftools verify`` checks an archive's files and page; it renders nothing, so it loads
    neither the pipeline that writes a release nor the report (matplotlib, scipy: seconds)."""
    out = json.loads(_fresh(_HELP_SCRIPT, json.dumps([["verify", str(tmp_path)]])))
    assert out["codes"] == [1]  # not an archive: three problems, after the command was imported
    assert "swftools.release.verify" in out["modules"]
    assert [m for m in out["modules"] if m.split(".")[0] in ("matplotlib", "scipy")
            or m.startswith(("swftools.report", "swftools.release.pipeline"))] == []
