"""NQSII job logs (AAIC): the published form and the raw pre-release form.

Modules by role: ``schema`` (the two forms, header aliases, site resolution), ``logfile`` (bytes
to header and cells), ``timefmt`` (time and duration text forms), ``columns`` (cells to typed
columns), ``reader`` and ``writer``.
"""

from __future__ import annotations

from swftools import lazy
from swftools.formats.formatinfo import FormatInfo

INFO = FormatInfo(
    name="nqsii", title="NQSII job log (AAIC), raw or published form", read=True, write=True,
    extensions=(".csv", ".csv.gz", ".log", ".txt", ".nqsii"),
    carries=frozenset({"job_id", "user", "group", "queue", "nodes", "gpus_per_node", "gpus",
                       "requested_walltime_s", "termcode", "submit_time", "start_time",
                       "finish_time", "wait_s", "walltime_s"}), tables=("gpu",),
    cannot_carry="SWF-only fields (CPU time, memory, executable, partition, preceding job, think "
                 "time), the SWF header; GPU totals other than nodes x GPUs per node")

__all__ = ["FORMS", "INFO", "read", "render", "write", "write_chunks"]
# The reader and writer load on first use: the Slurm and PBS readers import ``timefmt`` from
# this package, and the NQSII reader's imports (pandas) would slow their start.
_LAZY = {"FORMS": "reader", "read": "reader", "render": "writer", "write": "writer",
         "write_chunks": "writer"}


__getattr__ = lazy.attributes(__name__, _LAZY, globals())
