# The built-in placements compiled (``placement/_choose.pyx``; the layout in its docstring).
from libc.stdint cimport int64_t

from swftools.replay._factors cimport FactorCallback
from swftools.replay.placement._waiting cimport Waiting

cdef enum:
    WORD = 32  # nodes per word of a node set
    PACKED = 0
    BEST_FIT = 1
    RANDOM = 2
    EVEN = 3
    PRIORITY = 4
    VARIABILITY_FIRST = 5
    LOCALITY_FIRST = 6
    LXV = 7
    PM_FIRST = 8
    PAL = 9
    PRIORITY_WC = 10

cdef enum:
    H_N = 0
    H_GROUPS = 1
    H_T = 2
    H_R = 3
    O_GRP = 4
    O_RACK = 5
    O_MODEL = 6
    O_ORDER = 7
    O_GC = 8
    O_GW = 9
    O_CURW = 10
    O_CURM = 11
    O_LEFT = 12
    O_TAKE = 13
    O_MARK = 14
    O_STAMP = 15
    O_CAND = 16
    O_OKW = 17
    O_OKNODE = 18
    O_OKGPU = 19
    O_TWR = 20
    O_TW = 21
    O_BYU = 22
    O_BYUCNT = 23
    O_HIGH = 24
    HEADER = 25

ctypedef struct State:
    int64_t* exact  # (g + 1) x words, row major: the managed nodes with exactly f free GPUs
    int64_t words
    int64_t* cnt  # g + 1
    int64_t* free  # per node
    int64_t* gpu_free  # per node, bits
    int64_t g
    int64_t pol
    int64_t* aux  # the policy's tables (placement.tables)
    const double* score  # n x g, or (keys x n) x g when score_by_key
    bint score_by_key  # a keyed factor's lowest score is over the grid of its key
    const int64_t* paux  # pm-first and pal: their tables (placement/_pal.pyx)
    const double* pval
    Waiting* wc  # priority-wc's waiting jobs (NULL for the other policies)

cdef int64_t set_capacity(State* s, int64_t managed, int64_t nodes) noexcept nogil
cdef void take(State* s, const int64_t* chosen, int64_t count, int64_t per_node,
               int64_t gpus) noexcept nogil
cdef void give_back(State* s, int64_t managed, const int64_t* node_list, int64_t lo,
                    int64_t hi, int64_t per_node, int64_t gpus) noexcept nogil
cdef int64_t cands_word(const State* s, int64_t w, int64_t per_node) noexcept nogil
cdef void place(const State* s, bint best_fit, int64_t nodes, int64_t per_node,
                int64_t* out) noexcept nogil
cdef int64_t choose(State* s, int64_t j, int64_t nodes, int64_t per_node,
                    FactorCallback kernel, const int64_t* keys, int64_t* out) except -1
cdef double factor(State* s, int64_t j, const int64_t* chosen, int64_t count, int64_t gpus,
                   FactorCallback kernel, const int64_t* keys) except? -1.0
