"""Keyed run-time factors in compiled form: what a what-if model hands the compiled engine.

The engine's general path takes a run-time factor as a Python callback
``runtime_factor(j, nodes, gpus)``; with ``PlacementInputs.factor_by_key`` the callback promises
that a job's factor depends on the job only through its key and on the placement only through its
signature (``Placement.signature``: the GPU models held, the lowest score held, the nodes and
racks spanned, the GPUs per node). A ``FactorKernel`` is the same factor as a function that numba
compiles, of the key and the signature, so the compiled engine evaluates it without calling back
into Python:

    function(key, models, s_min, nodes, racks, per_node, params) -> factor

``key`` is ``keys[row]`` (int64), ``models`` the bit set of the GPU model indices held (bit ``m``
for ``PlacementInputs.gpu_model`` value ``m``), ``s_min`` the lowest score held (float64),
``nodes`` and ``racks`` the counts spanned, ``per_node`` the GPUs held on each node (int64),
``params`` the kernel's own constants as one float64 array (every kernel has this one signature,
``factors_jit.SIGNATURE``). It must return exactly the float the callback returns for that
placement (the compiled and Python paths are tested job for job).

``function`` is a plain Python function of a module with a source file, written in the subset
numba compiles (it may call ``@njit`` helpers): ``factors_jit`` compiles it once as a C callback
of that signature, which the engine calls through a pointer. So the engine is compiled once for
every kernel (and cached on disk), not once per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class FactorKernel:
    """A keyed run-time factor in compiled form (see the module docstring)."""

    function: Callable[..., float]  # (key, models, s_min, nodes, racks, per_node, params)
    params: np.ndarray  # float64: the function's constants, its last argument
    keys: np.ndarray  # int64: the factor key of each row of the replayed table

    def factor(self, row: int, models: int, s_min: float, nodes: int, racks: int,
               per_node: int) -> float:
        """The factor of ``row`` on a placement of this signature, compiled as the engine runs
        it (for tests and for callers outside the engine)."""
        from swftools.replay.factors_jit import call

        params = np.ascontiguousarray(self.params, dtype=np.float64)
        return float(call(self.function, int(self.keys[row]), int(models), float(s_min),
                          int(nodes), int(racks), int(per_node), params))
