"""PBS accounting records grouped by job: which record of each job the reader uses.

A job is its number and array index (``1234``, ``1234[5]``); the server part of the id is not
part of it. Array parents (``1234[]``) are left out: their subjobs are the jobs. Of several
``Q`` records (routing queues) the earliest counts; of several ``S`` or ``E`` records (a job
requeued and run again, or an ``E`` record written twice) the latest, by record time then line:
one row per job, its last run. Only ``Q``, ``S``, ``E``, ``D``, ``A`` and ``R`` records are
read; of those only ``E`` messages are parsed strictly (the others' free text is not needed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from swftools.errors import InputError
from swftools.formats.pbs import fields as fx
from swftools.formats.skipping import reject
from swftools.resources import load_json

SCHEMA_FILE = "formats/pbs-accounting.schema.json"
READ_KINDS = frozenset("QSEDAR")


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The PBS accounting schema file (cached; read-only)."""
    return load_json(SCHEMA_FILE)


@lru_cache(maxsize=1)
def record_pattern() -> re.Pattern[str]:
    """The grammar of one accounting record (the schema's ``recordPattern``): groups prefix,
    stamp, type, job id, message."""
    return re.compile(schema()["recordPattern"])


@dataclass
class Job:
    """What the records of one job say (times are naive local seconds of the record stamps)."""

    key: str
    id_text: str = ""  # the id as the record the row comes from writes it
    queued_at: int | None = None
    started: dict[str, str] | None = None
    started_at: tuple[int, int] = (-1, 0)  # (record time, line)
    ended: dict[str, str] | None = None
    ended_at: int | None = None
    ended_line: int = 0
    requeued: bool = False  # an R record, or a second E record
    deleted: tuple[int, str, int] | None = None  # (time, requestor, line)
    aborted: tuple[int, int] | None = None  # (time, line)

    @property
    def line(self) -> int:
        """The line the job's row comes from: its E record, else its D or A record."""
        return self.ended_line or (self.deleted or self.aborted or (0, 0))[-1]

    @property
    def is_row(self) -> bool:
        """Whether the job is a row: it ended, or was deleted or aborted."""
        return self.ended is not None or self.deleted is not None or self.aborted is not None


@dataclass
class Records:
    """The jobs of a log, and what was left out."""

    jobs: dict[str, Job] = field(default_factory=dict)
    array_parents: set[str] = field(default_factory=set)
    prefixed_lines: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # records of each type, read or not


class Located:
    """Error construction for one file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def error(self, line: int, key: str, value: str, message: str, expected: str) -> InputError:
        return InputError(self.path, f"{value!r} {message}", line=line, field=f"key {key!r}",
                          value=value, expected=expected)

    def parse(self, line: int, key: str, value: str, parse: Any) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise self.error(line, key, value, "is not valid here", str(exc)) from None


def scan(text: str, where: Located) -> Records:
    """Group the records of ``text`` by job (blank lines skipped; located errors; while
    ``--skip-bad-lines`` collects, a bad record is noted and read as if it were not there)."""
    pattern = record_pattern()
    out = Records()
    lines = text.split("\n")
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if line.strip():
            try:
                _record(out, pattern, line, number, where)
            except InputError as exc:
                reject(exc)
    return out


def _record(out: Records, pattern: re.Pattern[str], line: str, number: int,
            where: Located) -> None:
    m = pattern.match(line)
    if not m:
        raise InputError(where.path, "not a PBS accounting record", line=number,
                         field="record", value=line,
                         expected="MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value ...")
    prefix, stamp, kind, job_text, message = m.groups()
    out.kinds[kind] = out.kinds.get(kind, 0) + 1
    if kind not in READ_KINDS:
        return
    naive = where.parse(number, "record time", stamp, fx.parse_record_time)
    jid = where.parse(number, "job id", job_text, fx.parse_job_id)
    out.prefixed_lines += prefix is not None
    if jid.parent:
        out.array_parents.add(str(jid.number))
        return
    if kind == "E":
        attributes = where.parse(number, "message", message, fx.parse_attributes)
    else:
        attributes = fx.parse_attributes(message, strict=False)
    job = out.jobs.get(jid.key)
    if job is None:
        job = out.jobs[jid.key] = Job(jid.key, id_text=job_text)
    _add(job, kind, naive, number, job_text, attributes)


def _add(job: Job, kind: str, naive: int, number: int, job_text: str,
         attributes: dict[str, str]) -> None:
    if kind == "Q":
        job.queued_at = naive if job.queued_at is None else min(job.queued_at, naive)
    elif kind == "S":
        if (naive, number) > job.started_at:
            job.started, job.started_at = attributes, (naive, number)
    elif kind == "E":
        if job.ended is not None:
            job.requeued = True
        if job.ended is None or (naive, number) > (job.ended_at, job.ended_line):
            job.ended, job.ended_at, job.ended_line = attributes, naive, number
            job.id_text = job_text
    elif kind == "D":
        if job.deleted is None or naive >= job.deleted[0]:
            job.deleted = (naive, attributes.get("requestor", ""), number)
    elif kind == "A":
        if job.aborted is None or naive >= job.aborted[0]:
            job.aborted = (naive, number)
    else:  # R: rerun (requeued)
        job.requeued = True
