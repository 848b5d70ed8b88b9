"""The 18 fields of the Standard Workload Format, named once (like batsim's ``SwfField``)."""

from __future__ import annotations

from enum import IntEnum


class SwfField(IntEnum):
    """SWF field numbers (1-based, as the PWA definition numbers them)."""

    JOB_ID = 1
    SUBMIT_TIME = 2
    WAIT_TIME = 3
    RUN_TIME = 4
    ALLOCATED_PROCESSOR_COUNT = 5
    AVERAGE_CPU_TIME_USED = 6
    USED_MEMORY = 7
    REQUESTED_NUMBER_OF_PROCESSORS = 8
    REQUESTED_TIME = 9
    REQUESTED_MEMORY = 10
    STATUS = 11
    USER_ID = 12
    GROUP_ID = 13
    EXECUTABLE_ID = 14
    QUEUE_ID = 15
    PARTITION_ID = 16
    PRECEDING_JOB_ID = 17
    THINK_TIME_FROM_PRECEDING_JOB = 18

    @property
    def label(self) -> str:
        """Human label used in error messages: ``field 5 (allocated processors)``."""
        return f"field {self.value} ({_LABELS[self]})"

    @property
    def column(self) -> str:
        """The job-table column this field maps to."""
        return _COLUMNS[self]


_LABELS = {
    SwfField.JOB_ID: "job number",
    SwfField.SUBMIT_TIME: "submit time",
    SwfField.WAIT_TIME: "wait time",
    SwfField.RUN_TIME: "run time",
    SwfField.ALLOCATED_PROCESSOR_COUNT: "allocated processors",
    SwfField.AVERAGE_CPU_TIME_USED: "average CPU time",
    SwfField.USED_MEMORY: "used memory",
    SwfField.REQUESTED_NUMBER_OF_PROCESSORS: "requested processors",
    SwfField.REQUESTED_TIME: "requested time",
    SwfField.REQUESTED_MEMORY: "requested memory",
    SwfField.STATUS: "status",
    SwfField.USER_ID: "user",
    SwfField.GROUP_ID: "group",
    SwfField.EXECUTABLE_ID: "executable",
    SwfField.QUEUE_ID: "queue",
    SwfField.PARTITION_ID: "partition",
    SwfField.PRECEDING_JOB_ID: "preceding job",
    SwfField.THINK_TIME_FROM_PRECEDING_JOB: "think time",
}

# submit_time is stored as an absolute UTC epoch; the SWF field is an offset from UnixStartTime.
_COLUMNS = {
    SwfField.JOB_ID: "job_id",
    SwfField.SUBMIT_TIME: "submit_time",
    SwfField.WAIT_TIME: "wait_s",
    SwfField.RUN_TIME: "walltime_s",
    SwfField.ALLOCATED_PROCESSOR_COUNT: "gpus",
    SwfField.AVERAGE_CPU_TIME_USED: "avg_cpu_time_s",
    SwfField.USED_MEMORY: "used_memory_kb",
    SwfField.REQUESTED_NUMBER_OF_PROCESSORS: "requested_procs",
    SwfField.REQUESTED_TIME: "requested_walltime_s",
    SwfField.REQUESTED_MEMORY: "requested_memory_kb",
    SwfField.STATUS: "swf_status",
    SwfField.USER_ID: "user",
    SwfField.GROUP_ID: "group",
    SwfField.EXECUTABLE_ID: "executable",
    SwfField.QUEUE_ID: "queue",
    SwfField.PARTITION_ID: "partition",
    SwfField.PRECEDING_JOB_ID: "preceding_job_id",
    SwfField.THINK_TIME_FROM_PRECEDING_JOB: "think_time_s",
}

FIELDS: tuple[SwfField, ...] = tuple(SwfField)
# Column widths of Parallel Workloads Archive files: each field right-aligned to this minimum
# width, fields joined by one space.
PWA_WIDTHS: tuple[int, ...] = (5, 8, 6, 6, 4, 6, 5, 4, 6, 5, 2, 3, 3, 3, 2, 2, 2, 2)
