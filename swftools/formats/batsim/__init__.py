"""Batsim JSON workloads (export, and read back what they carry) with their SimGrid platform.

Modules by role: ``workload`` (the job table <-> Batsim JSON, the loss report) and ``platform``
(the platform XML written beside the workload).
"""

from swftools.formats.batsim.workload import CARRIES, read, render, write
from swftools.formats.formatinfo import FormatInfo

INFO = FormatInfo(
    name="batsim", title="Batsim JSON workload + SimGrid platform", read=True, write=True,
    extensions=(".json",), carries=CARRIES,
    cannot_carry="the recorded schedule (start, finish, wait), outcome (termcode, SWF status), "
                 "users, groups, queues and job shape; skips jobs that never ran, ran 0 s, "
                 "request no resources or more than nb_res",
    reference="oar-team/batsim src/jobs.cpp, src/profiles.cpp, src/workload.cpp (Batsim v4.x)")

__all__ = ["CARRIES", "INFO", "read", "render", "write"]
