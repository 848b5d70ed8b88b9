"""The swftools a whole-process benchmark times: a fresh install of the checkout (the default),
an existing environment (``--venv``), or the checkout in place (``--in-place``).

Standard library only. A fresh install is ``python -m venv`` + ``pip install CHECKOUT`` (a
regular, non-editable install; pip's own wheel cache may serve the dependencies) in a temporary
folder, so nothing a developer built beside the sources (numba's cache, ``make aot``'s modules,
stale bytecode) is seen: the numbers are what a user gets from ``pip install``.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The kernel caches of swftools before its kernels were compiled at install (numba's, and
# ``make aot``'s). swftools reads neither now; each is still pointed at an empty folder of the
# benchmark, so that a cache brought back by mistake is timed cold, as a user would first get it.
CACHE_VARIABLES = ("NUMBA_CACHE_DIR", "SWFTOOLS_AOT_DIR")
# numba's cache files (index, data): none may be inside an installed package
KERNEL_CACHE_SUFFIXES = (".nbi", ".nbc")


@dataclass
class Installed:
    """How to run the swftools under test: its bin folder and the environment of its processes."""

    bin: Path
    env: dict[str, str]
    how: str  # one line for the benchmark's header
    caches: Path | None = None  # parent of the per-run kernel cache folders (None: in place)
    fresh_count: list[int] = field(default_factory=lambda: [0])

    def cmd(self, *args: str) -> list[str]:
        exe = self.bin / "swftools"
        return [str(exe), *args] if exe.exists() else [str(self.bin / "python"), "-m",
                                                       "swftools", *args]

    def cold_env(self) -> dict[str, str]:
        """The environment with kernel caches in new, empty folders (a first run ever)."""
        if self.caches is None:
            raise SystemExit("a cold (first) run needs a fresh install or --venv, not --in-place")
        self.fresh_count[0] += 1
        env = dict(self.env)
        for var in CACHE_VARIABLES:
            folder = self.caches / f"cold-{self.fresh_count[0]}" / var.lower()
            folder.mkdir(parents=True)
            env[var] = str(folder)
        return env


def _clean_env(caches: Path) -> dict[str, str]:
    """The caller's environment without what would redirect imports or reuse a cache."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV",
                        *CACHE_VARIABLES)}
    for var in CACHE_VARIABLES:
        folder = caches / "warm" / var.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[var] = str(folder)
    return env


def kernel_cache_files(venv: Path) -> list[Path]:
    """numba cache files inside the installed package (must be none in a fresh install)."""
    return sorted(p for p in venv.glob("lib/python*/site-packages/swftools/**/*")
                  if p.suffix in KERNEL_CACHE_SUFFIXES)


def fresh_install(tmp: Path) -> Installed:
    """``python -m venv`` + ``pip install ROOT`` (non-editable) in ``tmp``; empty kernel caches."""
    venv = tmp / "venv"
    started = time.perf_counter()
    print(f"installing the checkout {ROOT} into a fresh venv {venv} (pip install, non-editable) "
          "...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                          "--disable-pip-version-check", str(ROOT)], env=env, cwd=str(tmp),
                         capture_output=True, text=True)
    if pip.returncode != 0:  # its warnings only when it failed
        raise SystemExit(f"pip install {ROOT} failed:\n{pip.stdout[-3000:]}{pip.stderr[-3000:]}")
    stale = kernel_cache_files(venv)
    if stale:
        raise SystemExit(f"the fresh install holds kernel cache files: {stale[:3]}")
    installed = _venv(venv, tmp / "caches")
    installed.how = (f"AS INSTALLED: fresh venv, `pip install {ROOT.name}` (regular, non-editable; "
                     f"{time.perf_counter() - started:.0f} s), no run-time kernel cache (the old "
                     "NUMBA_CACHE_DIR and SWFTOOLS_AOT_DIR point at empty folders), no PYTHONPATH")
    return installed


def existing_venv(venv: Path, tmp: Path) -> Installed:
    """A venv given with ``--venv``: its swftools, kernel caches pointed at empty folders."""
    if not (venv / "bin" / "python").exists():
        raise SystemExit(f"--venv {venv}: no bin/python there")
    installed = _venv(venv, tmp / "caches")
    stale = kernel_cache_files(venv)
    installed.how = (f"existing venv {venv} (--venv), NUMBA_CACHE_DIR and SWFTOOLS_AOT_DIR empty "
                     "at start, no PYTHONPATH"
                     + (f"; WARNING: {len(stale)} numba cache files inside the package"
                        if stale else ""))
    return installed


def _venv(venv: Path, caches: Path) -> Installed:
    found = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import swftools, sys; print(swftools.__file__)"],
                           env=_clean_env(caches), capture_output=True, text=True,
                           cwd=str(caches.parent))
    if found.returncode != 0 or str(ROOT / "swftools") in found.stdout:
        raise SystemExit(f"{venv}: swftools is not installed there (or resolves to the checkout): "
                         f"{found.stdout.strip()} {found.stderr.strip()[-300:]}")
    return Installed(bin=venv / "bin", env=_clean_env(caches), how="", caches=caches)


def in_place() -> Installed:
    """This interpreter and the checkout as it is (a developer's caches, ``make aot``'s modules)."""
    # the package's bytecode, as a wheel install has it (PYTHONDONTWRITEBYTECODE, set on some
    # machines, would make every timed process compile the modules it imports)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "swftools")], check=True)
    return Installed(bin=Path(sys.executable).parent, env=dict(os.environ),
                     how="IN PLACE (--in-place): this interpreter's environment and the "
                         "checkout, with whatever kernel caches it has (not as a user installs)")


def header(installed: Installed, repeat: int, slow_repeat: int) -> str:
    """What was measured and how (printed first)."""
    load = os.getloadavg()[0]
    return (f"swftools whole-process benchmark\n  swftools under test: {installed.how}\n"
            f"  swftools run as: {installed.cmd()[0]}\n"
            f"  method: each figure is a whole fresh process (interpreter start included), ours and"
            f" the peer alternating in this run, one untimed warm-up each, medians of {repeat} "
            f"(slow pairs {slow_repeat})\n"
            f"  machine: {platform.platform()}, Python {platform.python_version()}, "
            f"{os.cpu_count()} cores, load average {load:.1f} at start")
