"""The sacct splitter's kernels compiled (Cython): the same functions as ``kernels_ref`` (the
pure-Python reference, see there for what each does), statement for statement; they release
the GIL, so ``kernels`` runs them in threads."""

from libc.stdint cimport int32_t, int64_t, uint8_t

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


cdef inline bint _special(uint8_t c) noexcept nogil:
    return c == 124 or c == 10 or c == 13


def scan(const uint8_t[::1] buf, int64_t width, int64_t id_pos, const int64_t[::1] want,
         int64_t[::1] job_row, int64_t[::1] job_start, int32_t[:, ::1] offsets,
         uint8_t[:, ::1] cells, int64_t[::1] step_row, int64_t[::1] step_line,
         int64_t[::1] step_start, int64_t[::1] step_len, uint8_t[::1] step_after_job,
         int64_t[::1] state):
    """``kernels_ref.scan``."""
    cdef int64_t columns = offsets.shape[0]
    at_a = bytearray(8 * max(columns, 1))
    size_a = bytearray(8 * max(columns, 1))
    cdef int64_t* at = <int64_t*><char*>at_a
    cdef int64_t* size = <int64_t*><char*>size_a
    with nogil:
        _scan(buf, width, id_pos, want, job_row, job_start, offsets, cells, step_row,
              step_line, step_start, step_len, step_after_job, state, at, size)


cdef void _scan(const uint8_t[::1] buf, int64_t width, int64_t id_pos,
                const int64_t[::1] want, int64_t[::1] job_row, int64_t[::1] job_start,
                int32_t[:, ::1] offsets, uint8_t[:, ::1] cells, int64_t[::1] step_row,
                int64_t[::1] step_line, int64_t[::1] step_start, int64_t[::1] step_len,
                uint8_t[::1] step_after_job, int64_t[::1] state, int64_t* at,
                int64_t* size) noexcept nogil:
    cdef int64_t n = buf.shape[0]
    cdef int64_t i = state[_POS], row = state[_ROW]
    cdef int64_t jobs = state[_JOBS], steps = state[_STEPS]
    cdef int64_t last_start = state[_ID_START], last_len = state[_ID_LEN]
    cdef int64_t columns = offsets.shape[0]
    cdef int64_t capacity = cells.shape[1]
    cdef int64_t line, field, id_start, id_len, id_dot, cell, k, j, to, src
    cdef uint8_t c = 0
    cdef bint full, same
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
            if field == id_pos:
                c = buf[i]
                while not _special(c):
                    if c == 46 and id_dot < 0:  # '.'
                        id_dot = i - cell
                    i += 1
                    c = buf[i]
                id_start = cell
                id_len = i - cell
            else:
                c = buf[i]
                while not _special(c):
                    i += 1
                    c = buf[i]
            if field < width:
                k = want[field]
                if k >= 0:
                    at[k] = cell
                    size[k] = i - cell
            field += 1
            if c != 124:
                break
            i += 1
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
                src = at[k]
                for j in range(size[k]):
                    cells[k, to + j] = buf[src + j]
                offsets[k, jobs + 1] = <int32_t>(to + size[k])
            job_row[jobs] = row
            job_start[jobs] = line
            jobs += 1
            last_start, last_len = id_start, id_len
        else:
            same = last_start >= 0 and last_len == id_dot
            if same:
                for j in range(id_dot):
                    if buf[id_start + j] != buf[last_start + j]:
                        same = False
                        break
            step_row[steps] = row
            step_line[steps] = line
            step_start[steps] = id_start
            step_len[steps] = id_len
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


def slices(const uint8_t[::1] buf, const int64_t[::1] starts, const int64_t[::1] offsets,
           uint8_t[::1] data, int64_t first, int64_t last):
    """``kernels_ref.slices``."""
    cdef int64_t r, at, src, j
    with nogil:
        for r in range(first, last):
            at = offsets[r]
            src = starts[r]
            for j in range(offsets[r + 1] - at):
                data[at + j] = buf[src + j]


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
