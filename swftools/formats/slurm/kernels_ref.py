"""The sacct splitter's kernels in pure Python: the reference of the compiled ones
(``_kernels.pyx``, statement for statement) and their fallback where those were not built
(``swftools.extensions``). ``kernels`` drives them; ``tests/test_formats_slurm_kernels.py`` checks
both agree."""

from __future__ import annotations

from swftools.formats.slurm.kernels import (_BAD, _DONE, _FULL, _ID_LEN, _ID_START, _JOBS, _POS,
                                            _ROW, _STEP_FULL, _STEPS)


def scan(buf, width, id_pos, want, job_row, job_start, offsets, cells, step_row, step_line,
         step_offsets, step_ids, step_after_job, state):
    """Walk the lines from ``state[_POS]`` until the text ends, a line has a field count other
    than ``width`` (its row goes to ``state[_BAD]``) or an output is full (``state[_FULL]``: the
    job cells, ``state[_STEP_FULL]``: the step ids; resumed by a second call with larger
    outputs). ``buf`` must end with a line break. A job line gets its row and start, and each
    wanted cell (``want[field]``: its column k, or -1) is appended to ``cells[k]`` (ending at
    ``offsets[k, job + 1]``); a step line gets its row and start, its JobID appended to
    ``step_ids`` (ending at ``step_offsets[step + 1]``), and whether the text before its first
    ``.`` is the JobID of the latest job line (then that job exists)."""
    buf = memoryview(buf)  # Python ints, not numpy scalars
    n = len(buf)
    special = [False] * 256
    special[124] = True
    special[10] = True
    special[13] = True
    i, row = int(state[_POS]), int(state[_ROW])
    jobs, steps = int(state[_JOBS]), int(state[_STEPS])
    last_start, last_len = int(state[_ID_START]), int(state[_ID_LEN])
    columns = offsets.shape[0]
    capacity = cells.shape[1]
    at = [0] * columns
    size = [0] * columns
    while i < n:
        if jobs >= len(job_row) or steps >= len(step_row):
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
                while not special[c]:
                    if c == 46 and id_dot < 0:  # '.'
                        id_dot = i - cell
                    i += 1
                    c = buf[i]
                id_start = cell
                id_len = i - cell
            else:
                c = buf[i]
                while not special[c]:
                    i += 1
                    c = buf[i]
            if field < width:
                k = int(want[field])
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
                if int(offsets[k, jobs]) + size[k] > capacity:
                    full = True
            if full:
                i = line
                state[_FULL] = 1
                break
            for k in range(columns):
                to = int(offsets[k, jobs])
                src = at[k]
                for j in range(size[k]):
                    cells[k, to + j] = buf[src + j]
                offsets[k, jobs + 1] = to + size[k]
            job_row[jobs] = row
            job_start[jobs] = line
            jobs += 1
            last_start, last_len = id_start, id_len
        else:
            to = int(step_offsets[steps])
            if to + id_len > len(step_ids):
                i = line
                state[_STEP_FULL] = 1
                break
            for j in range(id_len):
                step_ids[to + j] = buf[id_start + j]
            step_offsets[steps + 1] = to + id_len
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



def cells(buf, starts, want, last_field, lengths, offsets, data, first, last, copy):
    """For the lines starting at ``starts[first:last]``: the length of each wanted cell
    (``want[field]``: its column, or -1; fields after ``last_field`` are not looked at) into
    ``lengths[row, column]``, or with ``copy`` its bytes into ``data`` from
    ``offsets[column, row]``."""
    buf = memoryview(buf)  # Python ints, not numpy scalars
    n = len(buf)
    for r in range(first, last):
        i = int(starts[r])
        field = 0
        cell = i
        while field <= last_field:
            c = buf[i] if i < n else 10
            if c == 124 or c == 10 or c == 13:
                k = int(want[field])
                if k >= 0:
                    if copy:
                        at = int(offsets[k, r])
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



def running_offsets(lengths, offsets):
    """``offsets[k]``: the running sums of ``lengths[:, k]``, each column after the previous."""
    at = 0
    for k in range(lengths.shape[1]):
        offsets[k, 0] = at
        for r in range(lengths.shape[0]):
            at += int(lengths[r, k])
            offsets[k, r + 1] = at



def uints(offsets, data, values, status):
    """Cells of 1-18 ASCII digits -> ``values``; ``status`` 0 (a number), 1 (empty), 2 (not)."""
    for r in range(len(values)):
        a, b = int(offsets[r]), int(offsets[r + 1])
        values[r] = 0
        if a == b:
            status[r] = 1
            continue
        if b - a > 18:
            status[r] = 2
            continue
        value = 0
        state = 0
        for j in range(a, b):
            c = int(data[j])
            if c < 48 or c > 57:
                state = 2
                break
            value = value * 10 + (c - 48)
        status[r] = state
        if state == 0:
            values[r] = value

