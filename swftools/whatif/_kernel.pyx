"""``whatif.kernel.sensitivity_factor`` compiled: the same operations on C doubles, as a
``replay._factors.FactorCallback`` the compiled engine calls (``params``: ``kernel.pack``)."""

from libc.stdint cimport int64_t

from swftools.replay._factors cimport FactorCallback

import numpy as np

cdef enum:
    HEADER = 4  # kernel.HEADER


cdef inline int64_t _recorded_level(int64_t gpus_per_node, int64_t max_rack_nodes,
                                    int64_t p) noexcept nogil:
    cdef int64_t nodes
    if p <= 1:
        return 0
    nodes = (p + gpus_per_node - 1) // gpus_per_node  # ceil (p > 1)
    if nodes == 1:
        return 1
    return 2 if nodes <= max_rack_nodes else 3


cdef inline double _comm_s(double grad_bytes, double bw, double lat, int64_t level,
                           int64_t p) noexcept nogil:
    if p <= 1 or level == 0:
        return 0.0
    return 2.0 * <double>(p - 1) / <double>p * grad_bytes / bw + 2.0 * <double>(p - 1) * lat


cdef class SensitivityFactor(FactorCallback):
    """The sensitivity model's factor over ``kernel.pack``'s params."""

    cdef object owner
    cdef const double* params
    cdef int64_t n_params

    def __init__(self, params):
        cdef const double[::1] view
        self.owner = np.ascontiguousarray(params, dtype=np.float64)
        view = self.owner
        self.params = &view[0]
        self.n_params = view.shape[0]

    cdef double call(self, int64_t key, int64_t models, double s_min, int64_t nodes,
                     int64_t racks, int64_t per_node) except? -1.0:
        cdef const double* params = self.params
        cdef int64_t n_cls = <int64_t>params[0]
        cdef int64_t n_masks = <int64_t>params[1]
        cdef int64_t ts = HEADER
        cdef int64_t ms = ts + n_cls
        cdef int64_t it = ms + n_cls * n_masks
        cdef int64_t gb = it + n_cls
        cdef int64_t bw = gb + n_cls
        cdef int64_t lat = bw + 4
        cdef int64_t p = nodes * per_node
        cdef int64_t level, rec
        cdef double r, i, g
        if p <= 1:
            level = 0
        elif nodes == 1:
            level = 1
        elif racks == 1:
            level = 2
        else:
            level = 3
        r = params[ts + key] / params[ms + key * n_masks + models] / s_min
        rec = _recorded_level(<int64_t>params[2], <int64_t>params[3], p)
        if r == 1.0 and level == rec:
            return 1.0
        i = params[it + key]
        g = params[gb + key]
        return ((i * r + _comm_s(g, params[bw + level], params[lat + level], level, p))
                / (i + _comm_s(g, params[bw + rec], params[lat + rec], rec, p)))
