"""PBS Pro / OpenPBS / Torque accounting logs, read and written.

Modules by role: ``fields`` (record stamps, job ids, durations, select/nodes chunks,
exec_host, attributes), ``records`` (records grouped by job: arrays, requeues), ``reader``
(jobs to the table, with ``schemas/formats/pbs-accounting.schema.json``) and ``writer``.
"""

from swftools.formats.formatinfo import FormatInfo
from swftools.formats.pbs.reader import read
from swftools.formats.pbs.writer import render, write

INFO = FormatInfo(
    name="pbs", title="PBS Pro / OpenPBS / Torque accounting log", read=True, write=True,
    extensions=(".pbs", ".log", "(server_priv/accounting/YYYYMMDD)"),
    carries=frozenset({"job_id", "user", "group", "queue", "nodes", "gpus_per_node", "gpus",
                       "requested_walltime_s", "termcode", "submit_time", "start_time",
                       "finish_time", "wait_s", "walltime_s", "swf_status", "source_job_id",
                       "cpus", "recorded_walltime_s"}),
    tables=("gpu",),
    cannot_carry="SWF-only fields (CPU time, memory, executable, partition number, preceding "
                 "job, think time); requested processors other than the allocation; a wait "
                 "other than start - submit",
    reference="PBS Professional 2022 Reference Guide, ch. 'Accounting Log'; Torque 6 "
              "accounting records")

__all__ = ["INFO", "read", "render", "write"]
