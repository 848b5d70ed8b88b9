"""Keyed run-time factors as the compiled general engine calls them: ``FactorCallback.call``, a
C-level method of the key and the placement signature (``replay.factors``). A compiled factor
subclasses it in Cython (the what-if model's: ``whatif/_kernel.pyx``); ``PythonFactor`` calls
any Python function of the same arguments (the slower path, a Python call per evaluation)."""

from libc.stdint cimport int64_t

import numpy as np


cdef class FactorCallback:
    """A factor of (key, models held as bits, lowest score held, nodes, racks, GPUs per node);
    the base class is the factor 1.0."""

    cdef double call(self, int64_t key, int64_t models, double s_min, int64_t nodes,
                     int64_t racks, int64_t per_node) except? -1.0:
        return 1.0

    def factor(self, int64_t key, int64_t models, double s_min, int64_t nodes, int64_t racks,
               int64_t per_node) -> float:
        """``call`` from Python (for tests and callers outside the engine)."""
        return self.call(key, models, s_min, nodes, racks, per_node)


cdef class PythonFactor(FactorCallback):
    """``function(key, models, s_min, nodes, racks, per_node, params) -> float`` called from
    the engine: any Python factor, one Python call per evaluation."""

    cdef object function
    cdef object params

    def __init__(self, function, params):
        self.function = function
        self.params = np.ascontiguousarray(params, dtype=np.float64)

    cdef double call(self, int64_t key, int64_t models, double s_min, int64_t nodes,
                     int64_t racks, int64_t per_node) except? -1.0:
        return float(self.function(key, models, s_min, nodes, racks, per_node, self.params))
