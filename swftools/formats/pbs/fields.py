"""The grammars of PBS accounting records, one parse/format pair each (scalar, on one text).

Property-tested as ``parse(format(x)) == x``; every parser raises ``ValueError`` with what it
expected.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

RECORD_TIME_EXPECTED = "MM/DD/YYYY HH:MM:SS"
DURATION_EXPECTED = "HH:MM:SS, MM:SS or seconds"
SELECT_EXPECTED = "chunks N:res=value[:res=value...] joined by '+', such as 2:ncpus=8:ngpus=4"
NODES_EXPECTED = "N[:ppn=P][:gpus=G] or HOST[:ppn=P] joined by '+', such as 2:ppn=8:gpus=4"
EPOCH_EXPECTED = "UNIX seconds"
EXIT_EXPECTED = "an integer exit status"
JOBID_EXPECTED = "NUMBER[.SERVER] such as 1234.pbs01 (array subjobs 1234[5] are not supported)"

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


def parse_job_id(text: str) -> int:
    """``1234.server`` or ``1234`` -> 1234."""
    m = re.fullmatch(r"([0-9]{1,18})(\.[A-Za-z0-9_.\-]+)?", text)
    if not m:
        raise ValueError(JOBID_EXPECTED)
    return int(m.group(1))


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
        if not resources and not chunk.isdigit():
            raise ValueError(SELECT_EXPECTED)
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


def count_exec_hosts(text: str) -> int:
    """Distinct hosts of ``exec_host`` (``node01/0*8+node02/0-3``)."""
    hosts = [part.split("/")[0] for part in text.split("+")]
    if not all(re.fullmatch(r"[A-Za-z0-9_.\-]+", h) for h in hosts):
        raise ValueError("HOST/CPU[*N] joined by '+'")
    return len(dict.fromkeys(hosts))


def parse_attributes(text: str) -> dict[str, str]:
    """``user=alice group=users jobname=my job`` -> a dict; a space-separated word without
    ``=`` continues the previous value (values with spaces are not quoted in these logs)."""
    out: dict[str, str] = {}
    last: str | None = None
    for word in text.split(" "):
        if word == "":
            continue
        key, eq, value = word.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", key):
            out[key] = value
            last = key
        elif last is not None:
            out[last] += " " + word
        else:
            raise ValueError("key=value pairs separated by spaces")
    return out


def format_attributes(attributes: dict[str, str]) -> str:
    """The inverse of :func:`parse_attributes` for values without leading/trailing or double
    spaces."""
    return " ".join(f"{k}={v}" for k, v in attributes.items())
