"""Compiled splitter for ``sacct --parsable2`` text (``_kernels.pyx``, built at install).

sacct output is mostly job steps (``123.batch``, ``123.extern``, ``123.0``): about 2.3 of every
3.3 lines. A CSV reader materialises every cell of every line; here one pass over the bytes
finds the lines, checks their field counts, tells job lines from step lines (a ``.`` in the
JobID) and copies the read cells of the job lines out while they are in cache, into one string
array per column; the steps' JobIDs are copied after. Lines end at ``\\n``, ``\\r\\n`` or
``\\r``, and an empty line is a line of empty cells, as pyarrow's CSV reader has them. The
text is scanned in one newline-aligned part per core (a chunk of each column per part), in
threads: the kernels release the GIL. ``uints`` is the integer-cell grammar of the reader.
Where the kernels were not built, their pure-Python reference ``kernels_ref`` runs
(``swftools.extensions``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from types import ModuleType

import numpy as np
import pyarrow as pa

from swftools.extensions import load
from swftools.table import string_buffers
from swftools.fileio import usable_cores as workers  # threads the kernels use (at most 8)

_MIN_ROWS_PER_THREAD = 100_000
_MIN_GUESS = 1024  # rows a part's outputs start with at least (they grow when full)
# scan's state (the kernels'): byte position, row, job lines, step lines, the latest job line's
# JobID (start, length), the first row with a wrong field count (-1: none), whether the text is
# all read, whether the cells' buffer is full, whether the step ids' buffer is full
# (``_kernels.pyx`` has the same indices).
_POS, _ROW, _JOBS, _STEPS, _ID_START, _ID_LEN, _BAD, _DONE, _FULL, _STEP_FULL = range(10)
_kernels: ModuleType | None = None


def native() -> ModuleType:
    """The compiled kernels, else (not built) the pure-Python reference ``kernels_ref``."""
    global _kernels
    if _kernels is None:
        _kernels = load("swftools.formats.slurm._kernels", "reading sacct text")
        if _kernels is None:
            from swftools.formats.slurm import kernels_ref as _kernels
    return _kernels


_OUTPUTS = ("job_row", "job_start", "step_row", "step_line", "step_after_job")
_MIN_PART_BYTES = 8 << 20
_MAX_CELL_BYTES = 2 ** 31 - 1  # a column's cells in one part (int32 offsets)


def uints(cells: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The non-negative integer grammar of sacct's count and id cells (``[0-9]{1,18}``) over a
    string array without nulls: (int64 values, status: 0 a number, 1 empty, 2 anything else)."""
    if isinstance(cells, pa.ChunkedArray):
        cells = cells.combine_chunks()
    if cells.null_count:
        raise ValueError("uints: cells without nulls")
    n = len(cells)
    values, status = np.zeros(n, np.int64), np.zeros(n, np.uint8)
    if n:
        offsets, data = string_buffers(cells)
        native().uints(offsets, data if data.size else np.zeros(1, np.uint8), values, status)
    return values, status


class Scan:
    """What :func:`scan` found: ``bad_row`` (>= 0 when some line's field count is wrong), and
    for the job lines (rows counted from 0 after the header) ``job_row``, ``job_start`` and
    ``cells`` (a string array of each wanted column; chunked when the text was scanned in
    parts), ``rows`` (the lines after the header), for the step lines ``step_row``,
    ``step_line`` (start), ``step_ids`` (their JobIDs, a string array chunked like ``cells``)
    and ``step_after_job`` (see ``kernels_ref.scan``); a scan that found a bad row holds
    ``bad_row`` alone.
    The text is scanned in one newline-aligned part per core; the cells are copied while the
    line is in cache (a later pass over the lines would wait on memory for each)."""

    def __init__(self, data: bytes, begin: int, width: int, id_pos: int, want: np.ndarray):
        want = np.ascontiguousarray(want, np.int64)
        parts = max(1, min(workers(), (len(data) - begin) // _MIN_PART_BYTES))
        bounds = [begin]
        for k in range(1, parts):
            cut = data.find(b"\n", begin + (len(data) - begin) * k // parts)
            if cut < 0:
                break
            bounds.append(max(cut + 1, bounds[-1]))
        bounds.append(len(data))
        spans = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a] or [(begin, begin)]
        if len(spans) == 1:
            found = [_scan_part(data, *spans[0], width, id_pos, want)]
        else:
            with ThreadPoolExecutor(len(spans)) as pool:
                found = list(pool.map(lambda s: _scan_part(data, *s, width, id_pos, want), spans))
        self.bad_row = -1
        rows = 0
        for part in found:
            if part["bad_row"] >= 0:
                # the reader stops at a bad row, and a later part's rows are not shifted yet
                self.bad_row = rows + part["bad_row"]
                return
            part["job_row"] += rows
            part["step_row"] += rows
            rows += part["rows"]
        self.rows = rows
        for name in _OUTPUTS:
            arrays = [part[name] for part in found]
            setattr(self, name, arrays[0] if len(arrays) == 1 else np.concatenate(arrays))
        columns = [[part["cells"][k] for part in found] for k in range(int(want.max()) + 1)]
        self.cells = [c[0] if len(c) == 1 else pa.chunked_array(c) for c in columns]
        ids = [part["step_ids"] for part in found]
        self.step_ids = ids[0] if len(ids) == 1 else pa.chunked_array(ids, pa.string())


def _scan_part(data: bytes, begin: int, end: int, width: int, id_pos: int,
               want: np.ndarray) -> dict:
    """``kernels_ref.scan`` of the lines in ``data[begin:end]`` (rows counted from 0 at
    ``begin``)."""
    buf = np.frombuffer(data, np.uint8, count=end)
    sample = data[begin:min(end, begin + (1 << 20))]
    guess = max(_MIN_GUESS,
                int((end - begin) / max(1, len(sample)) * (sample.count(b"\n") + 1) * 1.1))
    jobs, steps, columns = max(_MIN_GUESS, guess // 3), guess, int(want.max()) + 1
    out = {"job_row": np.empty(jobs, np.int64), "job_start": np.empty(jobs, np.int64)}
    for name in _OUTPUTS[2:]:
        out[name] = np.empty(steps, np.bool_ if name == "step_after_job" else np.int64)
    # each column's cells in a row of one matrix, the step ids in one buffer (grown when
    # full); int32 offsets, as Arrow strings have
    cell_room, id_room = _cell_capacity(sample, end - begin, width, id_pos, want)
    cells = np.empty((columns, cell_room), np.uint8)
    offsets = np.empty((columns, jobs + 1), np.int32)
    offsets[:, 0] = 0
    ids = np.empty(id_room, np.uint8)
    id_offsets = np.empty(steps + 1, np.int32)
    id_offsets[0] = 0
    state = np.array([begin, 0, 0, 0, *_previous_job_id(data, begin, width, id_pos), -1, 0, 0,
                      0], np.int64)
    while True:
        native().scan(buf, width, id_pos, want, out["job_row"], out["job_start"], offsets,
                      cells, out["step_row"], out["step_line"], id_offsets, ids,
                      out["step_after_job"].view(np.uint8), state)
        if state[_DONE]:
            break
        if state[_FULL]:
            state[_FULL] = 0
            if cells.shape[1] >= _MAX_CELL_BYTES:
                raise ValueError("a column of sacct cells past 2 GiB in one part")
            bigger = np.empty((columns, min(_MAX_CELL_BYTES, 2 * cells.shape[1])), np.uint8)
            bigger[:, :cells.shape[1]] = cells
            cells = bigger
        if state[_STEP_FULL]:
            state[_STEP_FULL] = 0
            if len(ids) >= _MAX_CELL_BYTES:
                raise ValueError("sacct step ids past 2 GiB in one part")
            bigger = np.empty(min(_MAX_CELL_BYTES, 2 * len(ids)), np.uint8)
            bigger[:len(ids)] = ids
            ids = bigger
        if state[_JOBS] >= len(out["job_row"]):
            for name in _OUTPUTS[:2]:
                out[name] = _grown(out[name])
            grown = np.empty((columns, len(out["job_row"]) + 1), np.int32)
            grown[:, :offsets.shape[1]] = offsets
            offsets = grown
        if state[_STEPS] >= len(out["step_row"]):
            for name in _OUTPUTS[2:]:
                out[name] = _grown(out[name])
            grown_ids = np.empty(len(out["step_row"]) + 1, np.int32)
            grown_ids[:len(id_offsets)] = id_offsets
            id_offsets = grown_ids
    jobs, steps = int(state[_JOBS]), int(state[_STEPS])
    found: dict = {"bad_row": int(state[_BAD]), "rows": int(state[_ROW])}
    for name in _OUTPUTS:
        found[name] = out[name][:jobs if name in _OUTPUTS[:2] else steps]
    data_buffer = pa.py_buffer(cells)
    found["cells"] = [
        pa.Array.from_buffers(pa.string(), jobs, [
            None, pa.py_buffer(offsets[k, :jobs + 1]),
            data_buffer.slice(k * cells.shape[1], int(offsets[k, jobs]))])
        for k in range(columns)]
    found["step_ids"] = pa.Array.from_buffers(pa.string(), steps, [
        None, pa.py_buffer(id_offsets[:steps + 1]),
        pa.py_buffer(ids).slice(0, int(id_offsets[steps]))])
    return found


def _cell_capacity(sample: bytes, size: int, width: int, id_pos: int,
                   want: np.ndarray) -> tuple[int, int]:
    """Room for each column's job cells and for the step ids in a part of ``size`` bytes: 1.5
    times the largest column's (the step ids') share of the ``sample``'s bytes (untouched room
    is never mapped into memory)."""
    wanted = [(position, int(want[position])) for position in np.flatnonzero(want >= 0).tolist()]
    totals = [0] * (int(want.max()) + 1)
    step_ids = 0
    for line in sample.split(b"\n")[:-1]:
        cells = line.rstrip(b"\r").split(b"|")
        if len(cells) == width and b"." not in cells[id_pos]:
            for position, column in wanted:
                totals[column] += len(cells[position])
        elif len(cells) == width:
            step_ids += len(cells[id_pos])

    def room(part: int) -> int:
        share = float(part) / max(1, len(sample))
        return int(min(_MAX_CELL_BYTES, max(1 << 16, 1.5 * share * size + (1 << 16))))

    return room(max(totals)), room(step_ids)


def _previous_job_id(data: bytes, begin: int, width: int, id_pos: int) -> tuple[int, int]:
    """(start, length) of the JobID of the last job line before ``begin`` (a line start), when
    one of the few lines before it is one; else (-1, 0). Only a shortcut for the step check."""
    end = begin - 1
    for _ in range(64):
        if end <= 0:
            break
        start = data.rfind(b"\n", 0, end) + 1
        line = data[start:end - 1] if data[end - 1:end] == b"\r" else data[start:end]
        cells = line.split(b"|")
        if start == 0 or b"\r" in line or len(cells) != width:  # another \r ends another line
            break
        if b"." not in cells[id_pos]:
            return start + sum(len(c) + 1 for c in cells[:id_pos]), len(cells[id_pos])
        end = start - 1
    return -1, 0


def _grown(array: np.ndarray) -> np.ndarray:
    bigger = np.empty((2 * len(array),) + array.shape[1:], array.dtype)
    bigger[:len(array)] = array
    return bigger


def scan(data: bytes, begin: int, width: int, id_pos: int, want: np.ndarray) -> Scan:
    """Split the lines of ``data[begin:]``, which ends with ``\\n`` (see :class:`Scan`)."""
    if not data.endswith(b"\n"):
        raise ValueError("scan: the text must end with a line break")
    return Scan(data, begin, width, id_pos, want)


def gather(data: bytes, starts: np.ndarray, want: np.ndarray) -> list[pa.Array]:
    """The wanted cells (``want[field]``: output column or -1) of the lines at ``starts`` as one
    contiguous string array per output column (for the lines the scan does not copy)."""
    buf = np.frombuffer(data, np.uint8)
    want = np.ascontiguousarray(want, np.int64)
    columns = int(want.max()) + 1
    last_field = int(np.flatnonzero(want >= 0).max())
    n = len(starts)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    spans = _spans(n)
    lengths = np.zeros((n, columns), np.int64)
    no_data = np.zeros(0, np.uint8)
    kernels = native()
    _run(lambda a, b: kernels.cells(buf, starts, want, last_field, lengths, lengths.T, no_data,
                                    a, b, False), spans)
    offsets = np.empty((columns, n + 1), np.int64)
    kernels.running_offsets(lengths, offsets)
    bases = np.append(offsets[:, 0], offsets[-1, -1])
    totals = np.diff(bases)
    out = np.empty(int(bases[-1]), np.uint8)
    _run(lambda a, b: kernels.cells(buf, starts, want, last_field, lengths, offsets, out, a, b,
                                    True), spans)
    return [_strings(out, offsets[k], int(bases[k]), int(totals[k]), n) for k in range(columns)]


def _strings(data: np.ndarray, offsets: np.ndarray, base: int, size: int, n: int) -> pa.Array:
    if size < 2 ** 31 - 1:
        kind, local = pa.string(), (offsets - base).astype(np.int32)
    else:
        kind, local = pa.large_string(), offsets - base
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(local),
                                           pa.py_buffer(data).slice(base, size)])


def _spans(n: int) -> list[tuple[int, int]]:
    parts = max(1, min(workers(), n // _MIN_ROWS_PER_THREAD))
    bounds = [n * k // parts for k in range(parts + 1)]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _run(job, spans: list[tuple[int, int]]) -> None:
    if len(spans) <= 1:
        for a, b in spans:
            job(a, b)
        return
    with ThreadPoolExecutor(len(spans)) as pool:
        list(pool.map(lambda s: job(*s), spans))
