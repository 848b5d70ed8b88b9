"""How the compiled general path calls a ``factors.FactorKernel``: through a function pointer of
one fixed signature, so that numba compiles (and caches on disk) the engine once for every
kernel.

A numba function that takes another numba function is typed by that dispatcher object, which a
new process re-creates: its disk cache never matches, and each kernel would need an engine of
its own (about a minute to compile each). A C callback (``numba.cfunc``) of a fixed signature is
typed by the signature alone (numba's first-class function type): the engine's cache holds for
any kernel, and a call costs a few nanoseconds more than an inlined one (an indirect call; one
array argument, ``params``).

The callback is compiled from a copy of the kernel's function under another qualified name
(``CFUNC_SUFFIX``). numba names a function's disk cache after its source file, qualified name and
first line, and keys an entry by signature and bytecode only: a ``cfunc`` and an ``njit`` of one
function with one signature share an entry, and whichever process loads the other's machine
code (a C callback lacks the Python wrapper a dispatcher calls, and the reverse) crashes. Calls
from Python (``call``) go through the callback itself, so no ``njit`` of a kernel exists.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import Callable
from typing import Any

from numba import cfunc, njit, types

SIGNATURE = types.float64(types.int64, types.int64, types.float64, types.int64, types.int64,
                          types.int64, types.float64[::1])
CFUNC_SUFFIX = "__cfunc"  # the callback's cache files: ``<module>.<qualname>__cfunc-<line>...``
_compiled: dict[Any, Any] = {}


def no_factor(key, models, s_min, nodes, racks, per_node, params):  # pragma: no cover
    """The kernel passed when there is no run-time factor (never called)."""
    return 1.0


def _callback_source(function: Callable[..., float]) -> pytypes.FunctionType:
    """A copy of ``function`` (same code, globals and source file) named ``<qualname>__cfunc``:
    its own numba cache files, apart from any ``njit`` of ``function``."""
    py = getattr(function, "py_func", function)
    copy = pytypes.FunctionType(py.__code__, py.__globals__, py.__name__ + CFUNC_SUFFIX,
                                py.__defaults__, py.__closure__)
    copy.__qualname__ = py.__qualname__ + CFUNC_SUFFIX
    copy.__module__ = py.__module__
    copy.__doc__ = py.__doc__
    return copy


def compiled(function: Callable[..., float]) -> Any:
    """``function`` as a C callback of ``SIGNATURE`` (compiled once a process, cached on disk
    when it has a source file)."""
    got = _compiled.get(function)
    if got is None:
        got = _compiled[function] = cfunc(SIGNATURE, cache=True)(_callback_source(function))
    return got


@njit(cache=True)
def _call_kernel(kernel, key, models, s_min, nodes, racks, per_node,
                 params):  # pragma: no cover - compiled
    """One call of a callback of ``SIGNATURE``, as the engine makes it."""
    return kernel(key, models, s_min, nodes, racks, per_node, params)


def call(function: Callable[..., float], key: int, models: int, s_min: float, nodes: int,
         racks: int, per_node: int, params) -> float:
    """``function``'s factor from Python, computed by the engine's machine code (its C callback,
    called as the engine calls it): for the tests that hold a kernel to its Python twin."""
    return _call_kernel(compiled(function), key, models, s_min, nodes, racks, per_node, params)
