"""How the compiled general path calls a ``factors.FactorKernel`` and still caches on disk.

A numba function that takes another numba function as an argument is typed by that dispatcher
object, which a new process re-creates: its disk cache never matches, and every process would
compile the whole engine again (tens of seconds). So the engine takes a ``KernelRef`` instead:
an object of a numba type keyed by the kernel's *name* (module, qualified name, a hash of its
module's source and of the engine's sources), and calls ``call_factor(ref, ...)``, whose
overload looks the function up in ``REGISTRY`` when it compiles. The cache then holds one engine
per kernel name and is found again by the next process; a changed kernel module or engine
module gets a new name, hence a new specialization (numba's own cache sees only the file of the
function it caches, not the modules it calls). A change in another module the kernel calls is
not seen.

The kernel is inlined into the engine (numba IR, ``inline="always"``, from its ``py_func``): a
call would bind its ``params`` arrays, two atomic reference-count operations each, per factor
(``lxv`` evaluates four or five factors per job: inlined, its replay takes 40 % less time).
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path
from typing import Any

from numba import njit
from numba.core import types
from numba.extending import (NativeValue, models, overload, register_model, typeof_impl,
                             unbox)

REGISTRY: dict[str, Any] = {}  # kernel name -> its numba function


class KernelRef:
    """A factor kernel function as the compiled engine takes it (see the module docstring)."""

    def __init__(self, function: Any) -> None:
        self.name = kernel_name(function)
        if self.name not in REGISTRY:  # the kernel's code, to be inlined into the engine
            REGISTRY[self.name] = njit(inline="always")(getattr(function, "py_func", function))


ENGINE_SOURCES = ("engine_general_jit.py", "engine_gpu_jit.py", "engine_flat_jit.py",
                  "factors_jit.py", "placement/jit.py", "placement/mtrand.py")
_names: dict[Any, str] = {}


def kernel_name(function: Any) -> str:
    """``module.qualname@hash``: a hash of the engine's sources and of the kernel module's source
    when it has a file (an edit of either makes a new name), else of the function's identity
    (then no cache across processes)."""
    name = _names.get(function)
    if name is not None:
        return name
    py = getattr(function, "py_func", function)
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for source in ENGINE_SOURCES:
        digest.update((here / source).read_bytes())
    try:
        digest.update(Path(inspect.getsourcefile(py) or "").read_bytes())
    except (OSError, TypeError):
        digest.update(repr(id(function)).encode())
    name = _names[function] = f"{py.__module__}.{py.__qualname__}@{digest.hexdigest()[:16]}"
    return name


class KernelType(types.Dummy):
    """The numba type of a ``KernelRef``: equal for equal kernel names (in any process)."""

    def __init__(self, name: str) -> None:
        self.kernel_name = name
        super().__init__(name=f"FactorKernel({name})")

    @property
    def key(self) -> str:
        return self.kernel_name


register_model(KernelType)(models.OpaqueModel)


@typeof_impl.register(KernelRef)
def _typeof_ref(val: KernelRef, c: Any) -> KernelType:
    return KernelType(val.name)


@unbox(KernelType)
def _unbox_ref(typ: KernelType, obj: Any, c: Any) -> NativeValue:
    return NativeValue(c.context.get_dummy_value())


def call_factor(ref, key, models, s_min, nodes, racks, per_node, params):
    """``ref``'s kernel of (``key``, the signature, ``params``): compiled code only."""
    raise NotImplementedError("call_factor is for compiled code")


@overload(call_factor, inline="always")
def _call_factor(ref, key, models, s_min, nodes, racks, per_node, params):
    if isinstance(ref, KernelType):
        function = REGISTRY[ref.kernel_name]

        def impl(ref, key, models, s_min, nodes, racks, per_node, params):  # pragma: no cover
            return function(key, models, s_min, nodes, racks, per_node, params)
        return impl
    return None
