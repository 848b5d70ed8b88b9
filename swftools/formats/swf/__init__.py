"""Standard Workload Format (SWF 2.2) of the Parallel Workloads Archive.

Modules by role: ``fields`` (the 18 columns, named once), ``header`` (``; Key: value`` lines),
``kernels`` (compiled tokenizer and formatter), ``layout`` (the byte-exact layout metadata),
``mapping`` (job table <-> SWF values, header and loss report), ``reader`` and ``writer``.
"""

from swftools.formats.swf.fields import FIELDS, PWA_WIDTHS, SwfField
from swftools.formats.formatinfo import FormatInfo
from swftools import lazy
from swftools.table import column_names

INFO = FormatInfo(
    name="swf", title="Standard Workload Format 2.2 (Parallel Workloads Archive)", read=True,
    write=True, extensions=(".swf", ".swf.gz"),
    carries=frozenset(column_names()) - {"nodes", "gpus_per_node", "termcode", "cpus",
                                         "recorded_walltime_s", "source_job_id"}, tables=("swf",),
    cannot_carry="nodes and GPUs per node (field 5 holds the total), termcode (mapped to SWF "
                 "status), user/group/queue names (numbered); field 5 holds one unit: cpus on "
                 "a GPU site (or GPUs on a processor site) are dropped; the log's own run time "
                 "where it differs from finish - start; source job ids (job numbers only)",
    reference="https://www.cs.huji.ac.il/labs/parallel/workload/swf.html")

__all__ = ["FIELDS", "INFO", "PWA_WIDTHS", "SwfField", "read", "read_bytes", "row_line_numbers",
           "to_bytes", "write"]

# The reader and writer (numpy, pyarrow and the kernels) are loaded on first use, so that the
# modules beside them (``header``, ``fields``, ``mapping``) import without them (issue 15).
_LAZY = {"read": "reader", "read_bytes": "reader", "row_line_numbers": "reader",
         "to_bytes": "writer", "write": "writer"}


__getattr__ = lazy.attributes(__name__, _LAZY, globals())
