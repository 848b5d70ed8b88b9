"""The sacct splitter's kernels compiled (Cython): the same functions as ``kernels_ref`` (the
pure-Python reference, see there for what each does), with the same outputs; they release the
GIL, so ``kernels`` runs them in threads. ``scan`` finds the separators 64 bytes at a time (a
bit mask per block) rather than byte by byte, and counts a step line's remaining fields from
the masks (a step line keeps only its JobID); the other kernels follow the reference statement
for statement."""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memchr, memcpy

cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* The text is looked at 64 bytes at a time: one bit per byte that is a '|', one per byte
       that ends a line ('\\n', '\\r'), with SSE2 (every x86-64; else byte by byte). The cells
       of a block are then found by counting zero bits, without a branch per byte. */
    typedef struct {
        const uint8_t* b; int64_t n; int64_t base; uint64_t bars; uint64_t ends;
    } swf_specials;

    static inline int swf_ctz(uint64_t x) {  /* x != 0 */
        int k = 0;
    #if defined(__GNUC__) || defined(__clang__)
        k = __builtin_ctzll(x);
    #else
        while (!(x & 1)) { x >>= 1; k++; }
    #endif
        return k;
    }

    static inline int64_t swf_popcount(uint64_t x) {
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int64_t)((x * 0x0101010101010101ULL) >> 56);
    }

    static inline void swf_block(swf_specials* s, int64_t i) {
        const uint8_t* p = s->b + i;
        int64_t count = s->n - i < 64 ? s->n - i : 64, j = 0;
        uint64_t bars = 0, ends = 0;
    #if defined(__SSE2__)
        const __m128i bar = _mm_set1_epi8('|'), nl = _mm_set1_epi8('\\n'),
                      cr = _mm_set1_epi8('\\r');
        for (; j + 16 <= count; j += 16) {
            __m128i v = _mm_loadu_si128((const __m128i*)(p + j));
            bars |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, bar)) << j;
            ends |= (uint64_t)(uint32_t)_mm_movemask_epi8(
                _mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr))) << j;
        }
    #endif
        for (; j < count; j++) {
            if (p[j] == '|') bars |= (uint64_t)1 << j;
            else if (p[j] == '\\n' || p[j] == '\\r') ends |= (uint64_t)1 << j;
        }
        s->base = i; s->bars = bars; s->ends = ends;
    }

    /* The first '|', '\\n' or '\\r' at or after i (the text ends with a line break). */
    static inline int64_t swf_next_special(swf_specials* s, int64_t i) {
        for (;;) {
            int64_t off = i - s->base;
            if (off >= 0 && off < 64) {
                uint64_t m = (s->bars | s->ends) >> off;
                if (m) return i + swf_ctz(m);
                i = s->base + 64;
            }
            swf_block(s, i);
        }
    }

    /* The first '\\n' or '\\r' at or after i, and in *bars how many '|' come before it. */
    static inline int64_t swf_line_end(swf_specials* s, int64_t i, int64_t* bars) {
        int64_t count = 0;
        for (;;) {
            int64_t off = i - s->base;
            if (off >= 0 && off < 64) {
                uint64_t e = s->ends >> off, b = s->bars >> off;
                if (e) {
                    int t = swf_ctz(e);
                    *bars = count + swf_popcount(b & ((((uint64_t)1) << t) - 1));
                    return i + t;
                }
                count += swf_popcount(b);
                i = s->base + 64;
            }
            swf_block(s, i);
        }
    }
    """
    ctypedef struct swf_specials:
        const uint8_t* b
        int64_t n
        int64_t base
        uint64_t bars
        uint64_t ends
    int64_t swf_next_special(swf_specials* s, int64_t i) nogil
    int64_t swf_line_end(swf_specials* s, int64_t i, int64_t* bars) nogil

ctypedef fused offset_t:
    int32_t
    int64_t

# _scan's state (kernels._POS, ...): byte position, row, job lines, step lines, the latest job
# line's JobID (start, length), the first row with a wrong field count, done, cells full
cdef enum:
    _POS = 0
    _ROW = 1
    _JOBS = 2
    _STEPS = 3
    _ID_START = 4
    _ID_LEN = 5
    _BAD = 6
    _DONE = 7
    _FULL = 8
    _STEP_FULL = 9


def scan(const uint8_t[::1] buf, int64_t width, int64_t id_pos, const int64_t[::1] want,
         int64_t[::1] job_row, int64_t[::1] job_start, int32_t[:, ::1] offsets,
         uint8_t[:, ::1] cells, int64_t[::1] step_row, int64_t[::1] step_line,
         int32_t[::1] step_offsets, uint8_t[::1] step_ids, uint8_t[::1] step_after_job,
         int64_t[::1] state):
    """``kernels_ref.scan``."""
    cdef int64_t columns = offsets.shape[0]
    at_a = bytearray(8 * max(columns, 1))
    size_a = bytearray(8 * max(columns, 1))
    cdef int64_t* at = <int64_t*><char*>at_a
    cdef int64_t* size = <int64_t*><char*>size_a
    with nogil:
        _scan(buf, width, id_pos, want, job_row, job_start, offsets, cells, step_row,
              step_line, step_offsets, step_ids, step_after_job, state, at, size)


cdef void _scan(const uint8_t[::1] buf, int64_t width, int64_t id_pos,
                const int64_t[::1] want, int64_t[::1] job_row, int64_t[::1] job_start,
                int32_t[:, ::1] offsets, uint8_t[:, ::1] cells, int64_t[::1] step_row,
                int64_t[::1] step_line, int32_t[::1] step_offsets, uint8_t[::1] step_ids,
                uint8_t[::1] step_after_job, int64_t[::1] state, int64_t* at,
                int64_t* size) noexcept nogil:
    cdef int64_t n = buf.shape[0]
    cdef int64_t i = state[_POS], row = state[_ROW]
    cdef int64_t jobs = state[_JOBS], steps = state[_STEPS]
    cdef int64_t last_start = state[_ID_START], last_len = state[_ID_LEN]
    cdef int64_t columns = offsets.shape[0]
    cdef int64_t capacity = cells.shape[1]
    cdef int64_t line, field, id_start, id_len, id_dot, cell, k, j, to, bars = 0
    cdef uint8_t c = 0
    cdef bint full, same
    cdef const uint8_t* dot
    cdef swf_specials specials
    specials.b = &buf[0]
    specials.n = n
    specials.base = -128
    specials.bars = 0
    specials.ends = 0
    while i < n:
        if jobs >= job_row.shape[0] or steps >= step_row.shape[0]:
            break
        line = i
        field = 0
        id_start = -1
        id_len = 0
        id_dot = -1
        while True:
            cell = i
            i = swf_next_special(&specials, i)
            c = buf[i]
            if field == id_pos:
                dot = <const uint8_t*>memchr(&buf[cell], 46, i - cell)  # '.'
                if dot != NULL:
                    id_dot = dot - &buf[cell]
                id_start = cell
                id_len = i - cell
            if field < width:
                k = want[field]
                if k >= 0:
                    at[k] = cell
                    size[k] = i - cell
            field += 1
            if c != 124:
                break
            i += 1
            if id_dot >= 0:  # a step line: only the count of its other fields is still needed
                i = swf_line_end(&specials, i, &bars)
                field += bars + 1
                c = buf[i]
                break
        if i == line and width > 1:  # an empty line: a line of empty cells, as pyarrow has it
            field = width
            for k in range(columns):
                at[k] = line
                size[k] = 0
            id_start = line
        if c == 13 and i + 1 < n and buf[i + 1] == 10:
            i += 1
        i += 1
        if field != width:
            state[_BAD] = row
            state[_DONE] = 1
            return
        if id_dot < 0:
            full = False
            for k in range(columns):
                if offsets[k, jobs] + size[k] > capacity:
                    full = True
            if full:
                i = line
                state[_FULL] = 1
                break
            for k in range(columns):
                to = offsets[k, jobs]
                if size[k]:
                    memcpy(&cells[k, to], &buf[at[k]], size[k])
                offsets[k, jobs + 1] = <int32_t>(to + size[k])
            job_row[jobs] = row
            job_start[jobs] = line
            jobs += 1
            last_start, last_len = id_start, id_len
        else:
            to = step_offsets[steps]
            if to + id_len > step_ids.shape[0]:
                i = line
                state[_STEP_FULL] = 1
                break
            if id_len:
                memcpy(&step_ids[to], &buf[id_start], id_len)
            step_offsets[steps + 1] = <int32_t>(to + id_len)
            same = last_start >= 0 and last_len == id_dot
            if same:
                for j in range(id_dot):
                    if buf[id_start + j] != buf[last_start + j]:
                        same = False
                        break
            step_row[steps] = row
            step_line[steps] = line
            step_after_job[steps] = same
            steps += 1
        row += 1
    state[_POS], state[_ROW] = i, row
    state[_JOBS], state[_STEPS] = jobs, steps
    state[_ID_START], state[_ID_LEN] = last_start, last_len
    if i >= n:
        state[_DONE] = 1


def cells(const uint8_t[::1] buf, const int64_t[::1] starts, const int64_t[::1] want,
          int64_t last_field, int64_t[:, :] lengths, int64_t[:, :] offsets, uint8_t[::1] data,
          int64_t first, int64_t last, bint copy):
    """``kernels_ref.cells``."""
    cdef int64_t n = buf.shape[0], r, i, field, cell, k, at, j
    cdef uint8_t c
    with nogil:
        for r in range(first, last):
            i = starts[r]
            field = 0
            cell = i
            while field <= last_field:
                c = buf[i] if i < n else 10
                if c == 124 or c == 10 or c == 13:
                    k = want[field]
                    if k >= 0:
                        if copy:
                            at = offsets[k, r]
                            for j in range(cell, i):
                                data[at] = buf[j]
                                at += 1
                        else:
                            lengths[r, k] = i - cell
                    field += 1
                    if c != 124:
                        break
                    cell = i + 1
                i += 1


def running_offsets(const int64_t[:, :] lengths, int64_t[:, ::1] offsets):
    """``kernels_ref.running_offsets``."""
    cdef int64_t at = 0, k, r
    with nogil:
        for k in range(lengths.shape[1]):
            offsets[k, 0] = at
            for r in range(lengths.shape[0]):
                at += lengths[r, k]
                offsets[k, r + 1] = at


def uints(const offset_t[::1] offsets, const uint8_t[::1] data, int64_t[::1] values,
          uint8_t[::1] status):
    """``kernels_ref.uints``."""
    cdef int64_t r, a, b, value, j
    cdef uint8_t c, st
    with nogil:
        for r in range(values.shape[0]):
            a, b = offsets[r], offsets[r + 1]
            values[r] = 0
            if a == b:
                status[r] = 1
                continue
            if b - a > 18:
                status[r] = 2
                continue
            value = 0
            st = 0
            for j in range(a, b):
                c = data[j]
                if c < 48 or c > 57:
                    st = 2
                    break
                value = value * 10 + (c - 48)
            status[r] = st
            if st == 0:
                values[r] = value
