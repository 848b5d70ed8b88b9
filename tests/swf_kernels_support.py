"""Shared by the tests of ``swftools.formats.swf.kernels``: the compiled kernels as a
``Kernels``, a context that runs the wrapper in chunks, and a plain-Python statement of one
formatted SWF line."""

from __future__ import annotations

import contextlib

import numpy as np

from swftools.formats.swf import _kernels  # the compiled kernels must be built (``make dev``)
from swftools.formats.swf import kernels

BIG = np.iinfo(np.int64).max


@contextlib.contextmanager
def running(native, chunked: bool):
    saved = (kernels._native, kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS, kernels._workers)
    kernels._native = native
    if chunked:  # several chunks even on small inputs (threads, with the compiled kernels)
        kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS, kernels._workers = 1, 1, lambda: 3
    try:
        yield
    finally:
        (kernels._native, kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS,
         kernels._workers) = saved


def compiled() -> kernels.Kernels:
    return kernels.Kernels(*(getattr(_kernels, name) for name in kernels.EXPORTS), threads=True)


def reference_line(ints, scaled, digits, widths, r) -> str:
    fields = []
    for k in range(len(widths)):
        d = int(digits[k, r])
        if d >= 0:
            v = int(scaled[k, r])
            text = str(abs(v)).rjust(d + 1, "0")
            text = ("-" if v < 0 else "") + text[:len(text) - d] + "." + text[len(text) - d:]
        else:
            text = str(int(ints[k, r]))
        fields.append(text.rjust(int(widths[k])))
    return " ".join(fields) + "\n"
