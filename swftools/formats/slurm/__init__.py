"""Slurm accounting: ``sacct --parsable2`` output, read and written.

Modules by role: ``fields`` (the grammars of times, durations, time limits, TRES, host lists,
states, exit codes), ``schema`` (``schemas/formats/slurm-sacct.schema.json``: columns and the
state table), ``layout`` (delimiter, header or ``--columns``, ``--parsable``'s trailing ``|``),
``columns`` (whole-column parsing with located errors), ``reader`` and ``writer``.
"""

from swftools.formats.formatinfo import FormatInfo
from swftools.formats.slurm.reader import read
from swftools.formats.slurm.writer import render, write

INFO = FormatInfo(
    name="slurm", title="Slurm sacct --parsable2 output", read=True, write=True,
    extensions=(".sacct", ".sacct.gz", ".txt", ".log"),
    carries=frozenset({"job_id", "user", "group", "queue", "nodes", "gpus_per_node", "gpus",
                       "requested_walltime_s", "termcode", "submit_time", "start_time",
                       "finish_time", "wait_s", "walltime_s", "requested_procs",
                       "requested_memory_kb", "swf_status", "cpus", "recorded_walltime_s",
                       "source_job_id"}),
    tables=("gpu",),
    cannot_carry="SWF-only fields (CPU time, used memory, executable, partition number, "
                 "preceding job, think time); eligible time is written as the submit time; "
                 "a wait other than start - submit; job steps are not written",
    reference="Slurm sacct(1) --parsable2, https://slurm.schedmd.com/sacct.html")

__all__ = ["INFO", "read", "render", "write"]
