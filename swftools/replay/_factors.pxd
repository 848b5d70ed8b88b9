# The C-level form of a keyed run-time factor (``replay/_factors.pyx``, ``replay.factors``).
from libc.stdint cimport int64_t

cdef class FactorCallback:
    cdef double call(self, int64_t key, int64_t models, double s_min, int64_t nodes,
                     int64_t racks, int64_t per_node) except? -1.0
