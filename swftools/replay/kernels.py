"""The replay engines' compiled twins, loaded ahead-of-time compiled or through numba.

``engine_flat_jit.run_flat_compiled`` and ``engine_gpu_jit.run_gpu_compiled`` are numba
functions. Built ahead of time (``build_aot``, ``make aot``; see ``swftools.aot``) they form an
extension module that a replay loads in a millisecond instead of importing numba and loading its
CPU target (about 0.3 s of every replay process); without that module, or after the engines'
source changed, numba runs the same code. Both give the same schedules (tested).

The general path's twin (placements, factor kernels) is the Cython extension
``_engine_general.pyx``, built at install (``engine_general`` loads it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from swftools import aot

AOT_MODULE = "swftools_replay_kernels"
# exported name -> (module under swftools.replay, function, numba signature of the callers' args)
_I = "int64[:]"
AOT_EXPORTS = {
    "run_flat_compiled": ("engine_flat_jit", "run_flat_compiled",
                          f"{_I}({_I}, {_I}, {_I}, {_I}, int64, boolean)"),
    "run_gpu_compiled": ("engine_gpu_jit", "run_gpu_compiled",
                         f"UniTuple({_I}, 7)({', '.join([_I] * 11)}, int64, int64, boolean, "
                         f"boolean, {_I}, {_I}, int64)"),
}
_loaded: dict[str, Callable[..., Any]] = {}


def _sources() -> list[Path]:
    """The files the compiled engines depend on (their code and this module)."""
    here = Path(__file__).parent
    return [here / "engine_flat_jit.py", here / "engine_gpu_jit.py", Path(__file__)]


def kernel(name: str) -> Callable[..., Any]:
    """The compiled engine ``name`` (a key of ``AOT_EXPORTS``): ahead-of-time when built for
    this source and these versions, else numba's."""
    function = _loaded.get(name)
    if function is None:
        module = aot.load(AOT_MODULE, _sources())
        if module is not None:
            function = getattr(module, name)
        else:
            import importlib

            aot.load_numba_target()
            home, attribute, _ = AOT_EXPORTS[name]
            function = getattr(importlib.import_module(f"swftools.replay.{home}"), attribute)
        _loaded[name] = function
    return function


def build_aot() -> Path:
    """Compile the engines ahead of time (``swftools.aot.build``); returns the module's path."""
    import importlib

    exports = {}
    for name, (home, attribute, signature) in AOT_EXPORTS.items():
        jitted = getattr(importlib.import_module(f"swftools.replay.{home}"), attribute)
        exports[name] = (jitted.py_func, signature)
    return aot.build(AOT_MODULE, _sources(), exports)
