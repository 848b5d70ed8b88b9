"""The identifying strings of a raw input, for the leak audit: user, group, host and job names.

The job table keeps only users and groups, but a raw log names much more: Slurm's ``NodeList``,
``BatchHost``, ``Cluster`` and ``JobName``, PBS's ``exec_host``, ``exec_vnode``, ``jobname``,
``requestor=user@host`` and the server in ``123.server``. These are read here from the raw text
itself, line by line and tolerant of lines a reader refuses (a line ``--skip-bad-lines`` left out
still names its host), so that the audit can prove that none of them reached a published archive.
For a table that went through a reader already (a data package, an SWF trace) the same names come
from what its metadata kept: the skipped lines' values, the Alibaba node list.

A host list is expanded (``gpu[01-02]`` -> ``gpu01``, ``gpu02``, up to ``MAX_EXPANDED`` names a
cell) and its prefixes are kept too (``gpu``), so that a compressed list copied verbatim is found;
a list that does not parse (``secrethost[07-``) gives the names left once the brackets are cut.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from swftools.errors import InputError

KINDS = ("user", "group", "host", "job")
MAX_EXPANDED = 4096  # names one host-list cell may expand to; beyond it only the prefixes count
MAX_LINE_BYTES = 1 << 20  # a longer line is read in part (its first MiB)
MIN_PREFIX_CHARS = 3

# sacct --parsable2 columns (lower case) -> kind, and which hold host lists.
_SLURM_COLUMNS = {"user": "user", "group": "group", "account": "group", "jobname": "job",
                  "nodelist": "host", "batchhost": "host", "reqnodelist": "host",
                  "excnodelist": "host", "exclude": "host", "cluster": "host"}
# PBS accounting attributes (lower case) -> kind.
_PBS_ATTRS = {"user": "user", "euser": "user", "group": "group", "egroup": "group",
              "account": "group", "jobname": "job", "job_name": "job", "exec_host": "host",
              "exec_vnode": "host", "exec_host2": "host", "resource_list.nodes": "host",
              "requestor": "user@host", "owner": "user@host"}
_PBS_RECORD = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;([A-Z]);([^;]*);(.*)$")
_HOST_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_BRACKETS = re.compile(r"\[[^\]]*(\]|$)")


class Collector:
    """Distinct raw strings by kind (insertion order kept; ``result()`` sorts them)."""

    def __init__(self) -> None:
        self.found: dict[str, dict[str, None]] = {kind: {} for kind in KINDS}

    def add(self, kind: str, value: str | None) -> None:
        if value is None:
            return
        value = value.strip()
        if not value or value.lower() in ("none", "none assigned", "(null)", "unknown"):
            return
        if kind == "host":
            for name in host_names(value):
                self.found["host"][name] = None
        elif kind == "user@host":
            user, at, host = value.partition("@")
            self.add("user", user)
            if at:
                self.add("host", host)
        else:
            self.found[kind][value] = None

    def update(self, other: dict[str, Iterable[str]]) -> None:
        for kind, values in other.items():
            for value in values:
                self.found.setdefault(kind, {})[value] = None

    def result(self) -> dict[str, list[str]]:
        return {kind: sorted(values) for kind, values in self.found.items() if values}


def _expansion_size(text: str) -> int:
    """An upper bound on the names a host list expands to (without expanding it)."""
    total = 1
    for body in re.findall(r"\[([^\]]*)\]", text):
        size = 0
        for item in body.split(","):
            low, dash, high = item.partition("-")
            if dash and low.isdigit() and high.isdigit():
                size += max(int(high) - int(low) + 1, 1)
            else:
                size += 1
        total *= max(size, 1)
        if total > MAX_EXPANDED:
            break
    return total


def host_names(text: str) -> list[str]:
    """The host names a node-list cell mentions: expanded names and the prefixes before ``[``
    and, for a list that does not parse, the names left once the bracketed parts are cut
    (``secrethost[07-`` -> ``secrethost``); such partial names count from ``MIN_PREFIX_CHARS``
    characters on (a one-letter prefix would match everywhere)."""
    from swftools.formats.slurm.fields import expand_hostlist

    out: dict[str, None] = {}
    parsed = False
    if _expansion_size(text) <= MAX_EXPANDED:
        try:
            out.update(dict.fromkeys(expand_hostlist(text)))
            parsed = True
        except ValueError:
            pass
    if not parsed or "[" in text:
        for piece in re.split(r"[,+\s()/:=*]+", _BRACKETS.sub(" ", text)):
            for token in _HOST_TOKEN.findall(piece):
                token = token.strip("-._")
                if len(token) >= MIN_PREFIX_CHARS:
                    out[token] = None
    return [name for name in out if any(c.isalpha() for c in name)]


def _lines(path: str | os.PathLike) -> Iterator[str]:
    from swftools.formats.inputs import open_binary

    with open_binary(path) as fh:
        while True:
            line = fh.readline(MAX_LINE_BYTES)
            if not line:
                return
            if len(line) == MAX_LINE_BYTES and not line.endswith(b"\n"):
                while True:  # skip the rest of an over-long line
                    rest = fh.readline(MAX_LINE_BYTES)
                    if not rest or rest.endswith(b"\n"):
                        break
            yield line.decode("utf-8", "replace").rstrip("\r\n")


def slurm_line(names: list[str], line: str, into: Collector) -> None:
    """The identifying cells of one sacct line under the header ``names``."""
    cells = line.split("|")
    for name, cell in zip(names, cells):
        kind = _SLURM_COLUMNS.get(name.strip().lower())
        if kind:
            into.add(kind, cell)


def pbs_line(line: str, into: Collector) -> None:
    """The identifying attributes of one PBS accounting record (also a malformed one)."""
    m = _PBS_RECORD.match(line)
    if m:
        job_id, message = m.group(2), m.group(3)
        _, dot, server = job_id.partition(".")
        if dot:
            into.add("host", server)
    else:
        message = line
    last: str | None = None
    for word in message.split(" "):
        key, eq, value = word.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", key):
            last = key.lower()
            kind = _PBS_ATTRS.get(last)
            if kind == "host":  # node01/0*8+node02/0-3, (node01:ncpus=4)+(...), 2:ppn=8+node03
                for chunk in value.split("+"):
                    into.add("host", re.split(r"[/:]", chunk.strip("()"))[0])
            elif kind:
                into.add(kind, value)
        elif last is not None and _PBS_ATTRS.get(last) == "job":
            into.add("job", word)  # a job name with spaces: each word counts


def from_slurm(path: str | os.PathLike, into: Collector) -> None:
    lines = _lines(path)
    header = next(lines, "").lstrip("\ufeff").split("|")
    for line in lines:
        if line:
            slurm_line(header, line, into)


def from_pbs(path: str | os.PathLike, into: Collector) -> None:
    for line in _lines(path):
        if line:
            pbs_line(line, into)


def from_table(table: pa.Table, into: Collector) -> None:
    """User and group names of a job table, and the raw names its metadata still holds."""
    from swftools import table as jt

    for column in ("user", "group"):
        if column in table.column_names:
            values = pc.unique(pc.cast(table.column(column), pa.string())).to_pylist()
            for value in values:
                into.add(column, value)
    from_metadata(jt.get_metadata(table), into)


def from_metadata(meta: dict[str, Any], into: Collector) -> None:
    """Names kept in table metadata: the skipped lines' values (by field), Alibaba node names."""
    header = ((meta.get("slurm") or {}).get("header") if isinstance(meta.get("slurm"), dict)
              else None)
    for entry in meta.get("skipped_lines") or []:
        if not isinstance(entry, dict):
            continue
        field = str(entry.get("field") or "").lower()
        for text in (entry.get("value"), entry.get("message")):
            if not isinstance(text, str) or not text:
                continue
            if isinstance(header, list) and "|" in text:
                slurm_line([str(h) for h in header], text, into)
            elif ";" in text and "=" in text:
                pbs_line(text, into)
            if text is entry.get("value"):
                kind = _field_kind(field)
                if kind:
                    into.add(kind, text)
    alibaba = meta.get("alibaba")
    nodes = alibaba.get("nodes") if isinstance(alibaba, dict) else None
    if meta.get("anonymization"):
        nodes = None  # node names are pseudonyms already
    for run in (nodes or {}).get("runs", []) if isinstance(nodes, dict) else []:
        for name in expand_node_run(run):
            into.add("host", name)


def _field_kind(field: str) -> str | None:
    for words, kind in ((("nodelist", "node list", "host", "exec_vnode", "cluster"), "host"),
                        (("jobname", "job name", "job_name"), "job"),
                        (("requestor", "owner"), "user@host"),
                        (("user",), "user"), (("group", "account"), "group")):
        if any(w in field for w in words):
            return kind
    return None


def expand_node_run(run: Any) -> list[str]:
    """The node names of one Alibaba inventory run (``swftools.formats.alibaba.nodes``): its
    ``names`` as a list, or ``{prefix, width, first}`` for ``nodes`` numbered names."""
    names = run.get("names") if isinstance(run, dict) else None
    if isinstance(names, list):
        return [str(n) for n in names]
    if isinstance(names, dict) and "prefix" in names:
        try:
            count = int(run.get("nodes") or 1)
            first, width = int(names.get("first", 0)), int(names.get("width", 0))
        except (TypeError, ValueError):
            return [str(names["prefix"])]
        return [f"{names['prefix']}{first + k:0{width}d}" for k in range(min(count, MAX_EXPANDED))]
    return []


def raw_names(path: str | os.PathLike, fmt: str | None = None, *, table: pa.Table | None = None,
              site: Any = None) -> dict[str, list[str]]:
    """User, group, host and job names of the raw input ``path`` (format ``fmt`` or detected).

    Slurm and PBS logs are read line by line, bad lines included; other formats through their
    reader (``table`` if already read), taking the names the table and its metadata keep.
    """
    from swftools import formats

    fmt = fmt or formats.detect_format(path)
    into = Collector()
    if fmt == "slurm":
        from_slurm(path, into)
    elif fmt == "pbs":
        from_pbs(path, into)
    if table is None:
        options: dict[str, Any] = {"site": site} if site is not None else {}
        if fmt in ("slurm", "pbs"):
            options["skip_bad_lines"] = True
        try:
            table = formats.read(path, fmt, **options)
        except InputError:
            if fmt not in ("slurm", "pbs"):
                raise
            table = None  # the lines themselves were read above
    if table is not None:
        from_table(table, into)
    return into.result()
