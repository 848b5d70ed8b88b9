# CPython's random.Random (MT19937 and the draws of the ``random`` placement), compiled:
# ``placement/_mtrand.pyx``; the state is ``mtrand.mt_state``'s uint32[625].
from libc.stdint cimport int64_t, uint32_t

cdef enum:
    GPU_OUT = 64  # scratch offset of a single-node job's sampled GPU indices (<= 62 GPUs)

cdef int64_t mt_genrand(uint32_t* mt) noexcept nogil
cdef int64_t mt_getrandbits(uint32_t* mt, int64_t k) noexcept nogil
cdef int64_t mt_randbelow(uint32_t* mt, int64_t n) noexcept nogil
cdef int64_t mt_setsize(int64_t k) noexcept nogil
cdef void mt_sample(uint32_t* mt, int64_t n, int64_t k, int64_t* out,
                    int64_t* scratch) noexcept nogil
cdef int64_t mt_draw(uint32_t* mt, const int64_t* exact, int64_t words, const int64_t* cnt,
                     const int64_t* gpu_free, int64_t g, int64_t nodes, int64_t per_node,
                     int64_t* out_nodes, int64_t* scratch, int64_t* gpus) noexcept nogil
