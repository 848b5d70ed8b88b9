"""The grammars of PBS accounting records, one parse/format pair each (scalar, on one text).

Property-tested as ``parse(format(x)) == x``; every parser raises ``ValueError`` with what it
expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

RECORD_TIME_EXPECTED = "MM/DD/YYYY HH:MM:SS"
DURATION_EXPECTED = "HH:MM:SS, MM:SS or seconds"
SELECT_EXPECTED = "chunks N:res=value[:res=value...] joined by '+', such as 2:ncpus=8:ngpus=4"
NODES_EXPECTED = "N[:ppn=P][:gpus=G] or HOST[:ppn=P] joined by '+', such as 2:ppn=8:gpus=4"
EPOCH_EXPECTED = "UNIX seconds"
EXIT_EXPECTED = "an integer exit status"
JOBID_EXPECTED = ("NUMBER[.SERVER] such as 1234.pbs01, an array subjob NUMBER[INDEX][.SERVER] "
                  "such as 1234[5].pbs01, or an array parent 1234[].pbs01")
EXEC_HOST_EXPECTED = "HOST[/SLOTS] joined by '+', SLOTS as N, N-M, N*COUNT or a comma list of these"

_EPOCH = datetime(1970, 1, 1)
_CHUNK_RESOURCE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=([^:+=]+)")


def parse_record_time(text: str) -> int:
    """``MM/DD/YYYY HH:MM:SS`` -> naive local seconds since 1970."""
    if not re.fullmatch(r"[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}", text):
        raise ValueError(RECORD_TIME_EXPECTED)
    try:
        moment = datetime.strptime(text, "%m/%d/%Y %H:%M:%S")
    except ValueError:
        raise ValueError(RECORD_TIME_EXPECTED) from None
    return int((moment - _EPOCH).total_seconds())


def format_record_time(naive_s: int) -> str:
    """Naive local seconds -> ``MM/DD/YYYY HH:MM:SS``."""
    return (_EPOCH + timedelta(seconds=naive_s)).strftime("%m/%d/%Y %H:%M:%S")


def parse_duration(text: str) -> int:
    """``HH:MM:SS`` (hours unbounded), ``MM:SS`` or plain seconds -> seconds."""
    parts = text.split(":")
    if not 1 <= len(parts) <= 3 or not all(p.isascii() and p.isdigit() for p in parts):
        raise ValueError(DURATION_EXPECTED)
    numbers = [int(p) for p in parts]
    if any(n > 59 for n in numbers[1:]):
        raise ValueError(DURATION_EXPECTED)
    seconds = 0
    for n in numbers:
        seconds = seconds * 60 + n
    return seconds


def format_duration(seconds: int) -> str:
    """Seconds -> ``HH:MM:SS`` (two-digit hours at least)."""
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def parse_epoch(text: str) -> int | None:
    """An epoch-second key; ``0`` (Torque's never-started ``start=0``) -> None."""
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ValueError(EPOCH_EXPECTED)
    return int(text) or None


def parse_exit_status(text: str) -> int:
    """``Exit_status`` -> int (negative: PBS's own codes)."""
    if not re.fullmatch(r"-?[0-9]{1,9}", text):
        raise ValueError(EXIT_EXPECTED)
    return int(text)


@dataclass(frozen=True)
class JobId:
    """A record's job id: ``1234[5].server`` -> number 1234, index "5", server "server"."""

    number: int
    index: str | None  # array index: None for a plain job, "" for an array parent (1234[])
    server: str | None

    @property
    def key(self) -> str:
        """The job's identity in a log: number and array index; the server part is left out
        (Torque writes some records of one job with it and some without)."""
        return str(self.number) if self.index is None else f"{self.number}[{self.index}]"

    @property
    def parent(self) -> bool:
        """Whether this is an array job's parent (``1234[]``), not a job that runs."""
        return self.index == ""


_JOB_ID = re.compile(r"([0-9]{1,18})(?:\[([0-9]{0,9})\])?(?:\.([^\s;]+))?")


def parse_job_id(text: str) -> JobId:
    """``1234.server``, ``1234``, ``1234[5].server``, ``1234[].server`` -> :class:`JobId`; the
    server part may be anything without spaces (anonymised ``1234.[hostname_1]``)."""
    m = _JOB_ID.fullmatch(text)
    if not m:
        raise ValueError(JOBID_EXPECTED)
    return JobId(int(m.group(1)), m.group(2), m.group(3))


Chunk = tuple[int, dict[str, str]]  # (count, resources)


def parse_select(text: str) -> list[Chunk]:
    """PBS Pro ``Resource_List.select``: ``1:ncpus=4+2:ncpus=8:ngpus=2`` -> chunks; a chunk
    without a leading count counts once."""
    chunks: list[Chunk] = []
    for chunk in text.split("+"):
        parts = chunk.split(":")
        count = 1
        if parts[0].isascii() and parts[0].isdigit():
            count = int(parts.pop(0))
        resources: dict[str, str] = {}
        for part in parts:
            m = _CHUNK_RESOURCE.fullmatch(part)
            if not m or m.group(1) in resources:
                raise ValueError(SELECT_EXPECTED)
            resources[m.group(1)] = m.group(2)
        chunks.append((count, resources))
    return chunks


def format_select(chunks: list[Chunk]) -> str:
    """The inverse of :func:`parse_select` (every chunk with its count)."""
    return "+".join(":".join([str(count)] + [f"{k}={v}" for k, v in res.items()])
                    for count, res in chunks)


def parse_nodes(text: str) -> list[Chunk]:
    """Torque ``Resource_List.nodes``: ``2:ppn=8:gpus=4`` or ``node01:ppn=4+node02`` -> chunks
    (a host name counts one node; ``ppn`` is read as ``ncpus``, ``gpus`` as ``ngpus``)."""
    chunks: list[Chunk] = []
    for chunk in text.split("+"):
        parts = chunk.split(":")
        head = parts.pop(0)
        if head.isascii() and head.isdigit():
            count = int(head)
        elif re.fullmatch(r"[A-Za-z][A-Za-z0-9_.\-]*", head):
            count = 1
        else:
            raise ValueError(NODES_EXPECTED)
        resources: dict[str, str] = {}
        for part in parts:
            m = re.fullmatch(r"(ppn|gpus)=([0-9]+)", part)
            if m:
                key = {"ppn": "ncpus", "gpus": "ngpus"}[m.group(1)]
                if key in resources:
                    raise ValueError(NODES_EXPECTED)
                resources[key] = m.group(2)
            elif not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.\-]*", part):  # a node property
                raise ValueError(NODES_EXPECTED)
        chunks.append((count, resources))
    return chunks


def chunk_total(chunks: list[Chunk], resource: str) -> int | None:
    """Sum of ``count x resource`` over the chunks; None when no chunk names the resource."""
    named = [(count, res[resource]) for count, res in chunks if resource in res]
    if not named:
        return None
    total = 0
    for count, value in named:
        if not value.isdigit():
            raise ValueError(f"{resource}: a whole number")
        total += count * int(value)
    return total


def chunk_nodes(chunks: list[Chunk]) -> int:
    """How many nodes (chunks x counts) a select or nodes spec asks for."""
    return sum(count for count, _ in chunks)


_SLOTS = re.compile(r"([0-9]+)(?:-([0-9]+)|\*([0-9]+))?")


def count_exec_hosts(text: str) -> int:
    """Distinct hosts of ``exec_host`` (``node01/0*8+node02/0-3``)."""
    return exec_host_shape(text)[0]


def exec_host_shape(text: str) -> tuple[int, int]:
    """(distinct hosts, execution slots) of ``exec_host``: ``node/0*8`` is 8 slots (PBS Pro),
    ``node/0-79`` 80 and ``node/0,4-5`` 3 (Torque), ``node/5`` or ``node`` one."""
    hosts: set[str] = set()
    slots = 0
    for part in text.split("+"):
        host, slash, spec = part.partition("/")
        if not host or any(c.isspace() for c in host):
            raise ValueError(EXEC_HOST_EXPECTED)
        hosts.add(host)
        if not slash:
            slots += 1
            continue
        for item in spec.split(","):
            m = _SLOTS.fullmatch(item)
            if not m:
                raise ValueError(EXEC_HOST_EXPECTED)
            first, last, count = m.groups()
            if last is not None:
                if int(last) < int(first):
                    raise ValueError(EXEC_HOST_EXPECTED)
                slots += int(last) - int(first) + 1
            else:
                slots += int(count) if count is not None else 1
    return len(hosts), slots


def parse_attributes(text: str, strict: bool = True) -> dict[str, str]:
    """``user=alice group=users jobname=my job`` -> a dict; a space-separated word without
    ``=`` continues the previous value (values with spaces are not quoted in these logs), and a
    value PBS Pro put in double quotes (``select="2:ncpus=12:test=hi there"``) is read whole,
    without its quotes. Free text before the first ``key=`` (``strict=False``, for records
    whose message the reader does not need) is left out; ``strict`` refuses it."""
    out: dict[str, str] = {}
    last: str | None = None
    quoted = False
    for word in text.split(" "):
        if quoted:
            out[last] += " " + word  # type: ignore[index]
            if word.endswith('"'):
                out[last], quoted = out[last][1:-1], False  # type: ignore[index]
            continue
        if word == "":
            continue
        key, eq, value = word.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", key):
            out[key] = value
            last = key
            if value.startswith('"'):
                if len(value) > 1 and value.endswith('"'):
                    out[key] = value[1:-1]
                else:
                    quoted = True
        elif last is not None:
            out[last] += " " + word
        elif strict:
            raise ValueError("key=value pairs separated by spaces")
    return out  # an unclosed quote leaves the value as written, opening quote and all


def format_attributes(attributes: dict[str, str]) -> str:
    """The inverse of :func:`parse_attributes` for values without leading/trailing or double
    spaces."""
    return " ".join(f"{k}={v}" for k, v in attributes.items())
