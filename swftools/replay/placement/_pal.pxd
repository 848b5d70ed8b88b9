# ``pm-first`` and ``pal`` compiled (``placement/_pal.pyx``; the layout in its docstring).
from libc.stdint cimport int64_t

cdef enum:
    P_N = 0  # nodes
    P_C = 1  # application classes
    P_PAL = 2  # 1: ``pal``, 0: ``pm-first``
    P_JOBS = 3
    P_RANK = 4  # offsets of the blocks
    P_WORST = 5
    P_POS = 6
    P_CELLS = 7
    P_CLASS = 8
    P_HEADER = 9

cdef int64_t choose_pal(const int64_t* exact, int64_t words, int64_t g,
                        const int64_t* gpu_free, const int64_t* paux, const double* pval,
                        int64_t j, int64_t nodes, int64_t per_node,
                        int64_t* out) noexcept nogil
