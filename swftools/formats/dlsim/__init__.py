"""Deep-learning cluster simulator traces (``--to tiresias``): the job trace CSV of the Tiresias
simulator (SymbioticLab/Tiresias ``simulator/``, commit b0ef8449), written and read back.

Modules by role: ``tiresias`` (the CSV, its loss report and reader; columns in
``schemas/formats/tiresias-jobs.schema.json``).
"""

from swftools.formats.dlsim.tiresias import (CARRIES, PLACEHOLDER_MODEL, columns, read, render,
                                             write)
from swftools.formats.formatinfo import FormatInfo

INFO = FormatInfo(
    name="tiresias", title="Tiresias GPU-cluster simulator job trace (CSV)", read=True,
    write=True, extensions=(".csv",), carries=CARRIES,
    cannot_carry="absolute submit instants (written from 0), the schedule, outcome, users, "
                 "queues, requested walltime and job shape; the model name is a placeholder; "
                 "skips jobs that never ran or request no GPUs",
    reference="SymbioticLab/Tiresias simulator/run_sim.py, jobs.py at commit b0ef8449")

__all__ = ["CARRIES", "INFO", "PLACEHOLDER_MODEL", "columns", "read", "render", "write"]
