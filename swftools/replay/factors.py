"""Keyed run-time factors in compiled form: what a what-if model hands the compiled engine.

The engine's general path takes a run-time factor as a Python callback
``runtime_factor(j, nodes, gpus)``; with ``PlacementInputs.factor_by_key`` the callback promises
that a job's factor depends on the job only through its key and on the placement only through its
signature (``Placement.signature``: the GPU models held, the lowest score held, the nodes and
racks spanned, the GPUs per node). A ``FactorKernel`` is the same factor as a numba function of
the key and the signature, so the compiled engine evaluates it without calling back into Python:

    function(key, models, s_min, nodes, racks, per_node, params) -> factor

``key`` is ``keys[row]`` (int64), ``models`` the bit set of the GPU model indices held (bit ``m``
for ``PlacementInputs.gpu_model`` value ``m``), ``s_min`` the lowest score held (float64),
``nodes`` and ``racks`` the counts spanned, ``per_node`` the GPUs held on each node, ``params``
the kernel's own constants (a tuple of arrays and numbers). It must return exactly the float the
callback returns for that placement (the compiled and Python paths are tested job for job).

``replay()`` hands ``run_gpu`` the kernel with its keys in queue order; the compiled general path
(``engine_general_jit``) evaluates it inlined, through ``factors_jit.KernelRef`` (numba's disk
cache holds one engine per kernel). A kernel should be a plain ``@njit(cache=True)`` function of
a module with a source file; its signature is computed as ``Placement.signature`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class FactorKernel:
    """A keyed run-time factor as a compiled function (see the module docstring)."""

    function: Any  # a numba @njit function: (key, models, s_min, nodes, racks, per_node, params)
    params: tuple  # the function's last argument
    keys: np.ndarray  # int64: the factor key of each row of the replayed table

    def factor(self, row: int, models: int, s_min: float, nodes: int, racks: int,
               per_node: int) -> float:
        """The factor of ``row`` on a placement of this signature (through the compiled
        function; for tests and for callers outside the engine)."""
        return float(self.function(int(self.keys[row]), models, s_min, nodes, racks, per_node,
                                   self.params))
