"""Ahead-of-time compiled kernels: numba functions built once into a C extension module.

A process that runs numba-compiled code pays about 0.3 s before its first call, even with
``cache=True``: importing numba (~0.15 s) and loading its CPU target (~0.15 s). The same functions
compiled ahead of time with ``numba.pycc`` form an ordinary extension module that imports in a
millisecond and needs neither numba nor a compiler to run. They hold the GIL (no threads), and
building needs numba, setuptools and a C compiler (``make aot``; about 7 s), so the module is an
optional accelerator: callers load it with :func:`load` and fall back to their numba functions
when it is absent (never built, or built from other sources or versions).

The file lives in ``$SWFTOOLS_AOT_DIR`` (default ``~/.cache/swftools/aot``) under a name keyed by
the kernel source file, the numba and numpy versions and the interpreter, so an edited kernel or
an upgraded numba is never served stale code. ``SWFTOOLS_AOT=0`` turns the modules off.

When numba does run, :func:`load_numba_target` loads it without scipy.linalg (0.15-0.2 s less).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType

ENV_DIR = "SWFTOOLS_AOT_DIR"
ENV_SWITCH = "SWFTOOLS_AOT"


def cache_dir() -> Path:
    """Where the compiled modules are kept (``$SWFTOOLS_AOT_DIR``, else the user cache)."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "swftools" / "aot"


def enabled() -> bool:
    """Whether compiled modules are used at all (``SWFTOOLS_AOT=0`` turns them off)."""
    return os.environ.get(ENV_SWITCH, "1") != "0"


def _versions() -> str:
    from importlib.metadata import version

    import numpy

    return f"numba {version('numba')}; numpy {numpy.__version__}; {sys.version}; " \
           f"{platform.machine()}; {sys.implementation.cache_tag}; {_cpu()}"


def _cpu() -> str:
    """The processor the modules are built for (they use its instruction set, as numba's JIT
    does): its model and feature flags from /proc/cpuinfo where there is one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            lines = fh.read(1 << 16).splitlines()
    except OSError:
        return platform.processor()
    found = {}
    for line in lines:
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "flags", "Features", "CPU part") and key not in found:
            found[key] = value.strip()
    return "; ".join(f"{k}={v}" for k, v in sorted(found.items()))


def module_path(name: str, source: Path | Sequence[Path]) -> Path:
    """The file of module ``name`` compiled from ``source`` (a file, or the files its kernels
    depend on) by this numba, numpy and Python."""
    files = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    text = b"".join(Path(f).read_bytes() for f in files)
    digest = hashlib.sha256(text + _versions().encode()).hexdigest()[:20]
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return cache_dir() / f"{name}.{digest}{suffix}"


def load(name: str, source: Path | Sequence[Path]) -> ModuleType | None:
    """The compiled module ``name`` of the kernels in ``source``, or None when there is none
    for this source and these versions (or it cannot be loaded)."""
    if not enabled():
        return None
    path = module_path(name, source)
    if not path.is_file():
        return None
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError:
        return None
    return module


def build(name: str, source: Path | Sequence[Path],
          exports: Mapping[str, tuple[Callable, str]]) -> Path:
    """Compile ``exports`` (exported name -> (pure-Python function, numba signature)) into the
    module ``name`` for ``source`` and return its path; written atomically, so concurrent builds
    and readers never see half a file. Needs numba.pycc, setuptools and a C compiler."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending-deprecation notice
        from numba.pycc import CC

    target = module_path(name, source)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        cc = CC(name)
        cc.target_cpu = "host"  # this processor's instruction set (the key names it), as the JIT
        cc.output_dir = str(work)
        cc.verbose = False
        for exported, (function, signature) in exports.items():
            cc.export(exported, signature)(function)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cc.compile()
        built = [p for p in work.iterdir() if p.name.startswith(name) and p.suffix in (".so", ".pyd")]
        if len(built) != 1:
            raise RuntimeError(f"numba.pycc built {[p.name for p in work.iterdir()]}, "
                               f"expected one {name} extension module")
        os.replace(built[0], target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def kernel_threads() -> int:
    """Threads a compiled kernel splits its work into: the usable cores, at most 8."""
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1), 8))


def load_numba_target() -> None:
    """Load numba's CPU target (what its first compiled call loads) without scipy.linalg.

    ``numba.np.arraymath`` imports scipy.linalg (0.15-0.2 s of every process, numpy.f2py with
    it) only to learn whether BLAS is there for ``np.correlate`` / ``np.convolve`` on floats;
    swftools' kernels (SWF, replay) use neither, nor any linear algebra. So the target is
    loaded once with that import made to fail: numba then records "no BLAS" for those two
    functions (a plain loop instead), while ``np.dot`` and ``np.linalg`` in compiled code still
    import scipy.linalg when they are compiled. Nothing is done when scipy.linalg or the target
    are loaded already. Called from the main thread, before any other thread imports."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    from numba.core.registry import cpu_target

    name = "scipy.linalg.cython_blas"
    sys.modules[name] = None  # type: ignore[assignment]  # "import scipy.linalg.cython_blas" fails
    try:
        cpu_target.target_context.refresh()
    finally:
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]


__all__ = ["build", "cache_dir", "enabled", "kernel_threads", "load", "load_numba_target",
           "module_path"]
