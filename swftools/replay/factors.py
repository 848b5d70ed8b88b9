"""Keyed run-time factors in compiled form: what a what-if model hands the compiled engine.

The engine's general path takes a run-time factor as a Python callback
``runtime_factor(j, nodes, gpus)``; with ``PlacementInputs.factor_by_key`` the callback promises
that a job's factor depends on the job only through its key and on the placement only through its
signature (``Placement.signature``: the GPU models held, the lowest score held, the nodes and
racks spanned, the GPUs per node). A ``FactorKernel`` is the same factor as a function of the key
and the signature, which the compiled engine evaluates without the Python callback:

    function(key, models, s_min, nodes, racks, per_node, params) -> factor

``key`` is ``keys[row]`` (int), ``models`` the bit set of the GPU model indices held (bit ``m``
for ``PlacementInputs.gpu_model`` value ``m``), ``s_min`` the lowest score held (float),
``nodes`` and ``racks`` the counts spanned, ``per_node`` the GPUs held on each node,
``params`` the kernel's own constants as one float64 array. It must return exactly the float the
callback returns for that placement (the compiled and Python paths are tested job for job).

With ``score_grids`` (``K x nodes x GPUs per node``, one score grid per key: a what-if model's
per-class scores) ``s_min`` is the lowest score held in the grid of the job's key, not in the
placement inputs' ``score``. Such a factor is not keyed in the Python sense (its signature's
lowest score differs per key), so the Python engine calls the callback for every placement;
the compiled engine reads the key's grid.

The engine calls a factor through a C-level method (``_factors.pyx``: ``FactorCallback.call``,
one signature for every factor). ``function`` is a plain Python function (the reference); when it
has a compiled twin, a ``FactorCallback`` subclass taking ``params`` set as its ``compiled``
attribute (the what-if model's: ``whatif/kernel.py``), the engine calls that at C speed; any
other function still works, called from the engine through Python (``_factors.PythonFactor``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class FactorKernel:
    """A keyed run-time factor in compiled form (see the module docstring)."""

    function: Callable[..., float]  # (key, models, s_min, nodes, racks, per_node, params)
    params: np.ndarray  # float64: the function's constants, its last argument
    keys: np.ndarray  # int64: the factor key of each row of the replayed table
    score_grids: np.ndarray | None = None  # float64 K x nodes x g: s_min per key's grid

    def callback(self) -> Any:
        """The engine's ``_factors.FactorCallback`` for this kernel: its compiled twin when the
        function has one, else the function called through Python. Needs the extension."""
        from swftools.replay import _factors

        params = np.ascontiguousarray(self.params, dtype=np.float64)
        compiled = getattr(self.function, "compiled", None)
        if compiled is not None:
            return compiled(params)
        return _factors.PythonFactor(self.function, params)

    def factor(self, row: int, models: int, s_min: float, nodes: int, racks: int,
               per_node: int) -> float:
        """The factor of ``row`` on a placement of this signature, as the engine computes it
        (the function itself without the extension)."""
        args = (int(self.keys[row]), int(models), float(s_min), int(nodes), int(racks),
                int(per_node))
        try:
            callback = self.callback()
        except ImportError:
            params = np.ascontiguousarray(self.params, dtype=np.float64)
            return float(self.function(*args, params))
        return float(callback.factor(*args))
