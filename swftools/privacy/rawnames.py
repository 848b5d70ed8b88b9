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

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from swftools.errors import InputError
from swftools.formats.pbs.records import record_pattern

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
            yield line.decode("utf-8", "replace").strip()


def slurm_line(names: list[str], line: str, into: Collector) -> None:
    """The identifying cells of one sacct line under the header ``names``."""
    cells = line.split("|")
    for name, cell in zip(names, cells):
        kind = _SLURM_COLUMNS.get(name.strip().lower())
        if kind:
            into.add(kind, cell)


def pbs_line(line: str, into: Collector) -> None:
    """The identifying attributes of one PBS accounting record (also a malformed one)."""
    m = record_pattern().match(line)  # the PBS reader's record grammar
    if m:
        job_id, message = m.group(4), m.group(5)
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


# --- telemetry exports (``release --telemetry``) -------------------------------------------------

# Labels that name the scraped machine in Prometheus-style exports (compared in lower case); the
# metric maps' own ``node_label`` names are added to these.
HOST_LABELS = frozenset({"instance", "hostname", "host", "node", "nodename", "exported_instance",
                         "exported_host", "exported_hostname", "exported_node",
                         "kubernetes_node"})
MAX_TELEMETRY_NAMES = 100_000  # distinct node names read from one long or allocation table
_CHUNK = 1 << 20
_OVERLAP = 1024  # bytes kept between chunks: a label split by a chunk boundary is still seen
# ``name="value"`` (exposition) and ``"name": "value"`` (Prometheus JSON) alike.
_LABEL = re.compile(rb'(?<![A-Za-z0-9_])"?([A-Za-z_][A-Za-z0-9_]{0,63})"?[ \t]*[=:][ \t]*'
                    rb'"((?:[^"\\\r\n]|\\.){1,512})"')
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_SAMPLE_SUFFIXES = (".gz", ".json", ".prom", ".txt", ".om", ".metrics", ".csv", ".parquet")


def host_of_label(value: str) -> str:
    """The machine a label value names: ``http://host:9100/metrics``, ``host:9100``, ``[::1]:9100``
    -> ``host``, ``::1``."""
    value = value.strip()
    if "://" in value:
        value = value.split("://", 1)[1]
    value = value.split("/", 1)[0].rsplit("@", 1)[-1]
    host, sep, port = value.rpartition(":")
    if sep and port.isdigit() and host:
        value = host
    return value[1:-1] if value.startswith("[") and value.endswith("]") else value


def _add_telemetry_host(value: str, into: Collector) -> None:
    host = host_of_label(value)
    if _IPV4.fullmatch(host):
        into.found["host"][host] = None  # an address names the machine too (no letters in it)
        return
    into.add("host", host)
    short = host.split(".", 1)[0]
    if short != host and len(short) >= MIN_PREFIX_CHARS:
        into.add("host", short)  # node07.lab.example.org is published as node07 as well


def file_stem_names(name: str, exclude: Iterable[str] = ()) -> list[str]:
    """The names a sample file's base name may be a host by: ``gpu-host-12.example.org.json.gz``
    -> ``gpu-host-12.example.org``, ``gpu-host-12``. A plain word (letters only: ``export``,
    ``metrics``, also ``zeus``) cannot be told apart from the archive's own text and is left
    out, as are words every archive holds (schema and metric-map vocabulary) and the names in
    ``exclude`` (metric names: a file named after its metric names no machine). The file names
    themselves are never published, whatever this returns."""
    from swftools.privacy.match import archive_words, vocabulary

    stem = name
    while stem.lower().endswith(_SAMPLE_SUFFIXES):
        stem = stem[:stem.rfind(".")]
    skip = archive_words() | vocabulary() | {e.lower() for e in exclude}
    out: list[str] = []
    for candidate in (stem, stem.split(".", 1)[0]):
        low = candidate.lower()
        if (len(candidate) >= MIN_PREFIX_CHARS and any(c.isalpha() for c in candidate)
                and not candidate.isalpha() and low not in skip and candidate not in out):
            out.append(candidate)
    return out


def _unescape(text: str) -> str:
    """A label value as written (``\\"``, ``\\\\``, JSON ``\\u0041`` escapes undone)."""
    if "\\" not in text:
        return text
    try:
        return json.loads(f'"{text}"')
    except ValueError:
        return text.replace('\\"', '"').replace("\\\\", "\\")


def _labels_in_file(path: os.PathLike, labels: frozenset[str], into: Collector) -> None:
    """Host-naming label values anywhere in a text or JSON export (read in chunks)."""
    from swftools.formats.inputs import open_binary

    tail = b""
    with open_binary(path) as fh:
        while True:
            chunk = fh.read(_CHUNK)
            data = tail + chunk
            for m in _LABEL.finditer(data):
                if m.group(1).decode("ascii").lower() in labels:
                    _add_telemetry_host(_unescape(m.group(2).decode("utf-8", "replace")), into)
            if not chunk:
                return
            tail = data[-_OVERLAP:]


def node_column(path: os.PathLike, column: str = "node") -> list[str]:
    """The distinct values of ``column`` of a CSV (plain or gzip) or Parquet table (DuckDB,
    streamed; at most ``MAX_TELEMETRY_NAMES``). A file without that column gives []."""
    import duckdb

    from swftools.telemetry.readers_long import _sql_str, csv_compression

    p = _sql_str(os.fspath(path))
    if os.fspath(path).lower().endswith(".parquet"):
        rel = f"read_parquet({p})"
    else:
        rel = (f"read_csv({p}, header = true, all_varchar = true, parallel = false, "
               f"{csv_compression(Path(path))})")
    con = duckdb.connect()
    try:
        cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()]
        if column not in cols:
            return []
        rows = con.execute(f'SELECT DISTINCT CAST("{column}" AS VARCHAR) AS v FROM {rel} '
                           f"WHERE v IS NOT NULL ORDER BY v LIMIT {MAX_TELEMETRY_NAMES}").fetchall()
    except duckdb.Error as exc:
        raise InputError(os.fspath(path), f"cannot read: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    return [r[0] for r in rows]


def telemetry_names(samples: Iterable[str | os.PathLike], allocations: Any = None,
                    metric_map: Any = None) -> dict[str, list[str]]:
    """Host names of telemetry exports, for the audit of a release with telemetry: each sample
    file's base name (``node07.prom`` -> ``node07``), the values of host-naming labels
    (``instance="node07:9100"``, ``Hostname=``, the maps' ``node_label``; ports and schemes cut),
    the ``node`` column of long tables and of the allocation table (a file or an Arrow table).
    ``metric_map``: the ``MetricMap`` the release used (its node labels and metric names)."""
    from swftools.telemetry.samples import expand_paths, input_format

    entries = list(getattr(metric_map, "entries", []) or [])
    labels = HOST_LABELS | {str(e.node_label).lower() for e in entries if e.node_label}
    metric_names = {str(e.source) for e in entries}
    into = Collector()
    samples = list(samples)
    for path in expand_paths(samples) if samples else []:
        for name in file_stem_names(path.name, metric_names):
            into.add("host", name)
        if input_format(path) == "long":
            for value in node_column(path):
                _add_telemetry_host(value, into)
        else:
            _labels_in_file(path, frozenset(labels), into)
    if isinstance(allocations, pa.Table):
        if "node" in allocations.column_names:
            for value in pc.unique(pc.cast(allocations.column("node"), pa.string())).to_pylist():
                if value:
                    _add_telemetry_host(value, into)
    elif allocations is not None:
        for value in node_column(allocations):
            _add_telemetry_host(value, into)
    return into.result()
