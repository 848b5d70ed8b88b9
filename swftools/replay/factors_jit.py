"""How the compiled general path calls a ``factors.FactorKernel``: through a function pointer of
one fixed signature, so that numba compiles (and caches on disk) the engine once for every
kernel.

A numba function that takes another numba function is typed by that dispatcher object, which a
new process re-creates: its disk cache never matches, and each kernel would need an engine of
its own (about a minute to compile each). A C callback (``numba.cfunc``) of a fixed signature is
typed by the signature alone (numba's first-class function type): the engine's cache holds for
any kernel, and a call costs a few nanoseconds more than an inlined one (an indirect call; one
array argument, ``params``).
"""

from __future__ import annotations

from typing import Any, Callable

from numba import cfunc, njit, types

SIGNATURE = types.float64(types.int64, types.int64, types.float64, types.int64, types.int64,
                          types.int64, types.float64[::1])
_compiled: dict[Any, Any] = {}
_jitted: dict[Any, Any] = {}


def no_factor(key, models, s_min, nodes, racks, per_node, params):  # pragma: no cover
    """The kernel passed when there is no run-time factor (never called)."""
    return 1.0


def compiled(function: Callable[..., float]) -> Any:
    """``function`` as a C callback of ``SIGNATURE`` (compiled once a process, cached on disk
    when it has a source file)."""
    got = _compiled.get(function)
    if got is None:
        got = _compiled[function] = cfunc(SIGNATURE, cache=True)(
            getattr(function, "py_func", function))
    return got


def jitted(function: Callable[..., float]) -> Any:
    """``function`` compiled by numba for calls from Python (the same machine code as the
    engine's: for the tests that hold a kernel to its Python twin)."""
    got = _jitted.get(function)
    if got is None:
        got = _jitted[function] = njit(SIGNATURE, cache=True)(
            getattr(function, "py_func", function))
    return got
