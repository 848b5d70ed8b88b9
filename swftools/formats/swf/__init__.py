"""Standard Workload Format (SWF 2.2) of the Parallel Workloads Archive.

Modules by role: ``fields`` (the 18 columns, named once), ``header`` (``; Key: value`` lines),
``kernels`` (compiled tokenizer and formatter), ``layout`` (the byte-exact layout metadata),
``mapping`` (job table <-> SWF values, header and loss report), ``reader`` and ``writer``.
"""

from swftools.formats.swf.fields import FIELDS, PWA_WIDTHS, SwfField
from swftools.formats.swf.reader import read, read_bytes, row_line_numbers
from swftools.formats.swf.writer import to_bytes, write

__all__ = ["FIELDS", "PWA_WIDTHS", "SwfField", "read", "read_bytes", "row_line_numbers", "to_bytes",
           "write"]
