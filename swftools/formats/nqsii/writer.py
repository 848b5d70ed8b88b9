"""Write the job table as an NQSII log (published or raw form), whole columns at a time.

The text layout comes from the table's ``nqsii`` metadata when it was read from the same form
(so the file is reproduced byte for byte), else from the form's schema defaults: published =
``", "``-separated integers; raw = comma-separated, local date-times ``YYYY-MM-DD HH:MM:SS`` in
the site's zone and ``HH:MM:SS`` durations.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from swftools import table as jt
from swftools.atomic import atomic_file
from swftools.errors import InputError, UsageError, count
from swftools.fileio import gzip_writer
from swftools.formats.nqsii.schema import DEFAULT_SITE, FormSchema, form_defaults, form_schema, resolve_site
from swftools.formats.nqsii.timefmt import (ISO_SEPARATORS, TIMESTAMP_FORMATS, format_durations,
                                            format_instants, format_integers, parse_offset)
from swftools.metadata import TableMetadata
from swftools.site import Site



# the values the reader records (and reads back)
_CHOICES = {"line_ending": ("\n", "\r\n"), "gpus_column": ("per_node", "total")}


def _recorded_problem(recorded: dict[str, Any], layout: dict[str, Any],
                      schema: FormSchema) -> str | None:
    """What in a recorded layout the writer cannot use (a hand-edited or foreign table's
    metadata), else None."""
    for key, default in layout.items():
        value = recorded.get(key, default)
        if key in _CHOICES and value not in _CHOICES[key]:
            return f"{key} {value!r}, expected one of {', '.join(map(repr, _CHOICES[key]))}"
        if type(value) is not type(default) or (key == "separator" and not value):
            return f"{key} {value!r}, expected {type(default).__name__}" + (
                " (not empty)" if key == "separator" else "")
    texts = [*recorded.get("header", []), *recorded.get("fields", []),
             *recorded.get("queue_spelling", {}).values()]
    if not all(isinstance(t, str) for t in texts):
        return "a header, field or queue spelling that is not text"
    for f in schema.fields:
        fmt = recorded.get("formats", {}).get(f.name)
        if fmt is None:
            continue
        kind = fmt.get("format") if isinstance(fmt, dict) else None
        offset = fmt.get("offset") if kind == "iso" else None
        if kind not in (f.text_formats or ()):
            return f"{f.name}'s format {fmt!r}, expected one of {list(f.text_formats or ())}"
        if offset is not None and (not isinstance(offset, str) or parse_offset(offset) is None):
            return f"{f.name}'s UTC offset {offset!r}, expected Z, +HH:MM or +HHMM"
        if kind == "iso" and fmt.get("separator", "T") not in ISO_SEPARATORS:
            return f"{f.name}'s date-time separator {fmt['separator']!r}, expected 'T' or ' '"
        width = fmt.get("hour_width", 2) if kind == "hms" else 2
        if type(width) is not int or width not in (1, 2):
            return f"{f.name}'s hour width {width!r}, expected 1 or 2"
    return None


def _layout(table: pa.Table, schema: FormSchema, where: str) -> dict[str, Any]:
    """The recorded text layout when the table was read from this form, else the defaults."""
    layout = form_defaults(schema)
    recorded = dict(TableMetadata.from_table(table).nqsii or {})
    if recorded.get("form") != schema.form:
        return layout
    problem = _recorded_problem(recorded, layout, schema)
    if problem is not None:
        raise InputError(where, f"cannot write an NQSII log: the table's nqsii metadata "
                                f"records {problem}", field="nqsii metadata")
    fields, header = recorded.get("fields"), recorded.get("header")
    if (fields is None or header is None or len(fields) != len(header)
            or sorted(fields) != sorted(schema.names)):
        recorded.pop("fields", None)
        recorded.pop("header", None)
    layout.update({k: v for k, v in recorded.items() if k in layout and k != "formats"})
    layout["formats"].update({k: v for k, v in recorded.get("formats", {}).items()
                              if k in layout["formats"]})
    return layout


class _Job:
    """Column access with the checks a writer needs; ``where`` names the table in errors."""

    def __init__(self, table: pa.Table, where: str) -> None:
        self.table, self.where = table, where
        self.titles = {f["name"]: f["title"] for f in jt.table_schema()["fields"]}

    def fail(self, column: str, message: str) -> InputError:
        return InputError(self.where, f"cannot write an NQSII log: {message}",
                          field=f"column {column!r} ({self.titles[column]})")

    def integers(self, column: str, values: pa.Array | None = None) -> np.ndarray:
        """Non-null, non-negative integers of ``column``."""
        arr = _plain(self.table.column(column) if values is None else values)
        if arr.null_count:
            row = int(np.argmax(np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False))))
            raise self.fail(column, f"unknown for {count(arr.null_count, 'job')} (first: job "
                                    f"{self.table.column('job_id')[row].as_py()}); NQSII logs "
                                    "have no marker for unknown values")
        values_np = np.asarray(arr.to_numpy(), dtype=np.int64)
        if len(values_np) and values_np.min() < 0:
            row = int(np.argmin(values_np))
            raise self.fail(column, f"negative value {values_np[row]} (job "
                                    f"{self.table.column('job_id')[row].as_py()})")
        return values_np

    def strings(self, column: str) -> pa.Array:
        arr = self.table.column(column).combine_chunks()
        self.integers(column, pc.binary_length(arr))  # null check, with the job named
        if len(arr) and pc.min(pc.binary_length(arr)).as_py() == 0:
            row = pc.index(pc.binary_length(arr), 0).as_py()
            raise self.fail(column, f"empty value (job {self.table.column('job_id')[row].as_py()})")
        return arr


def _quote(values: pa.Array) -> pa.Array:
    """CSV-quote values that hold a comma, a quote, a line break or a leading space."""
    needs = pc.match_substring_regex(values, r'[,"\r\n]|^ ')
    if not pc.any(needs).as_py():
        return values
    quoted = pc.binary_join_element_wise(
        pa.scalar('"'), pc.replace_substring(values, '"', '""'), pa.scalar('"'), "")
    return pc.if_else(needs, quoted, values)


def _dense_ids(values: pa.Array, known: dict[str, int] | None = None) -> pa.Array:
    """Numbers 1..N by first appearance; ``known`` (value -> number) carries the numbering
    over from earlier chunks and is extended."""
    distinct = pc.unique(values)
    if known is None:
        position = np.asarray(pc.index_in(values, distinct).to_numpy(), dtype=np.int64)
        return format_integers(position + 1)
    for value in distinct.to_pylist():
        known.setdefault(value, len(known) + 1)
    numbers = np.array([known[v] for v in distinct.to_pylist()], dtype=np.int64)
    position = np.asarray(pc.index_in(values, distinct).to_numpy(), dtype=np.int64)
    return format_integers(numbers[position])


def _queue_text(job: _Job, schema: FormSchema, site: Site, layout: dict[str, Any]) -> pa.Array:
    queues = job.strings("queue")
    distinct = pc.unique(queues).to_pylist()
    text = []
    for value in distinct:
        queue = site.queue(value) or (site.queue_by_number(int(value)) if value.isdigit() else None)
        if queue is None:
            known = ", ".join(f"{q.number} {q.name}" for q in site.queues)
            raise job.fail("queue", f"{value!r} is not a queue of site {site.name} ({known}); "
                                    "pass a site whose settings define it")
        if schema.form == "published":
            text.append(str(queue.number))
        else:
            text.append(layout["queue_spelling"].get(queue.name, queue.name))
    return pa.array(text, pa.string()).take(pc.index_in(queues, pa.array(distinct, pa.string())))


def _plain(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _fill_resources(table: pa.Table, site: Site, total: bool, losses: list[str]) -> pa.Table:
    """Fill unknown nodes / GPUs per node / total GPUs where the other two imply them (as SWF
    tables, which hold only the total, need), reporting what was derived or cannot be carried."""
    nodes, per_node, gpus = (_plain(table.column(c)) for c in ("nodes", "gpus_per_node", "gpus"))

    def derived(column: str, before: pa.Array, after: pa.Array, how: str) -> None:
        if after.null_count < before.null_count:
            lost = before.null_count - after.null_count
            losses.append(f"{column}: unknown for {count(lost, 'job')}, derived as {how}")

    if nodes.null_count:
        implied = pc.cast(pc.ceil(pc.divide(pc.cast(gpus, pa.float64()), site.gpus_per_node)),
                          pa.int64())
        filled = pc.coalesce(nodes, implied)
        derived("nodes", nodes, filled, f"ceil(gpus / {site.gpus_per_node})")
        nodes = filled
    if gpus.null_count and total:
        filled = pc.coalesce(gpus, pc.multiply(nodes, per_node))
        derived("gpus", gpus, filled, "nodes x GPUs per node")
        gpus = filled
    nodes_np = np.asarray(nodes.to_numpy(zero_copy_only=False), dtype=float)
    gpus_np = np.asarray(gpus.to_numpy(zero_copy_only=False), dtype=float)
    if per_node.null_count and not total:
        usable = ~np.isnan(nodes_np) & ~np.isnan(gpus_np) & (np.nan_to_num(nodes_np) > 0)
        safe_nodes = np.where(usable, nodes_np, 1)
        usable &= np.nan_to_num(gpus_np) % safe_nodes == 0
        implied = pa.array((np.nan_to_num(gpus_np) // safe_nodes).astype(np.int64), mask=~usable)
        filled = pc.coalesce(per_node, implied)
        derived("gpus_per_node", per_node, filled, "gpus / nodes")
        per_node = filled
    if not total:
        per_node_np = np.asarray(per_node.to_numpy(zero_copy_only=False), dtype=float)
        mismatch = int(np.count_nonzero(~np.isnan(gpus_np) & (gpus_np != nodes_np * per_node_np)))
        if mismatch:
            losses.append(f"gpus: {count(mismatch, 'job')} with a total other than nodes x "
                          "GPUs per node; the GPU column carries GPUs per node, so those "
                          "totals are lost")
    for column, values in (("nodes", nodes), ("gpus_per_node", per_node), ("gpus", gpus)):
        table = table.set_column(table.schema.get_field_index(column), column, values)
    return table


def _losses_elsewhere(table: pa.Table, job: _Job, schema: FormSchema,
                      known_counts: dict[str, int], rows: int) -> list[str]:
    """Sentences for what no NQSII column carries: SWF-only columns, the SWF header
    (``known_counts``: known values per column, over ``rows`` rows in all)."""
    carried = {f.column for f in schema.fields} | {"gpus", "gpus_per_node"}
    losses = []
    for column in jt.column_names():
        if column in carried:
            continue
        known = known_counts.get(column, 0)
        if known:
            losses.append(f"{column} ({job.titles[column]}): "
                          f"{count(known, 'known value')} dropped; NQSII logs have no such column")
    header = TableMetadata.from_table(table).swf_header
    if header:
        losses.append(f"SWF header ({len(header)} entries) dropped; NQSII logs have no header comments")
    if not rows:
        losses.append("the table has no jobs: the file holds only a header, which read() "
                      "rejects as a log without job rows")
    return losses


def _column_text(column: str, job: _Job, schema: FormSchema, site: Site, zone: str,
                 layout: dict[str, Any], losses: list[str],
                 ids: dict[str, dict[str, int] | None] | None = None) -> pa.Array:
    f = schema.by_column(column)
    if column in ("user", "group"):
        values = job.strings(column)
        if schema.form == "raw":
            return _quote(values)
        digits = pc.all(pc.match_substring_regex(values, r"^[0-9]+$")).as_py() is not False
        known = None
        if ids is not None and len(values):  # chunks: the first non-empty one decides
            if column not in ids:
                ids[column] = None if digits else {}
            elif ids[column] is None and not digits:
                raise job.fail(column, "earlier chunks held integer ids and were written as "
                                       "they are, this one holds names; write the whole table")
            if ids[column] is None:
                return values
            known = ids[column]
        elif digits:
            return values
        text = _dense_ids(values, known)
        count = len(pc.unique(values)) if known is None else len(known)
        losses.append(f"{column}: the published form holds integer ids; the {count} "
                      f"{column} names are numbered 1..{count} by first appearance")
        return text
    if column == "queue":
        return _quote(_queue_text(job, schema, site, layout))
    if column == "gpus_per_node":
        return format_integers(job.integers("gpus" if layout["gpus_column"] == "total"
                                            else "gpus_per_node"))
    values = job.integers(column)
    if f.text_formats and f.text_formats[0] in TIMESTAMP_FORMATS:
        fmt = layout["formats"].get(f.name, {"format": f.text_formats[0]})
        try:
            return format_instants(values, fmt, zone)
        except ValueError:
            raise job.fail(column, "an instant after year 9999 cannot be written as a date") from None
    if f.text_formats:
        return format_durations(values, layout["formats"].get(f.name, {"format": f.text_formats[0]}))
    if f.enum is not None:
        outside = ~np.isin(values, f.enum)
        if outside.any():
            raise job.fail(column, f"{values[outside][0]} is not one of {f.description}")
    return format_integers(values)


class _Renderer:
    """The text of one NQSII log, row chunk by row chunk: the layout, zone and site come from
    the first chunk; published-form user and group numbering carries over between chunks."""

    def __init__(self, first: pa.Table, form: str, site: Site | str | Path | None) -> None:
        self.schema = form_schema(form)
        first = jt.conform(first)
        metadata = TableMetadata.from_table(first)
        if metadata.unit == "processor":  # written as GPUs, an 8-GPU site's log would not validate
            origin = f", read from {metadata.source_file}" if metadata.source_file else ""
            raise UsageError(f"cannot write an NQSII log: the table counts processors (a CPU "
                             f"trace{origin}), an NQSII log counts GPUs; "
                             "write it as swf, slurm, pbs or a data package")
        self.site = resolve_site(site)
        self.zone = self.site.time_zone if site is not None else (
            metadata.time_zone or resolve_site(DEFAULT_SITE).time_zone)
        self.where = metadata.source_file or "job table"
        self.layout = _layout(first, self.schema, self.where)
        self.ids: dict[str, dict[str, int] | None] = {}  # column -> numbering (None: as is)
        self.rows = 0
        self.merged: dict[str, tuple[tuple[int, int], str]] = {}  # kind -> (rank, report)
        self.counts: dict[str, int] = {}  # column -> known values dropped, over all chunks

    def header(self) -> bytes:
        """The BOM (if any) and the header line."""
        layout = self.layout
        header = layout["separator"].join(layout["header"]) + layout["line_ending"]
        return (b"\xef\xbb\xbf" if layout["bom"] else b"") + header.encode("utf-8")

    def body(self, table: pa.Table) -> bytes:
        """The job lines of ``table`` (each ending with the line ending)."""
        table = jt.conform(table)
        schema, layout = self.schema, self.layout
        job = _Job(table, self.where)
        self.rows += len(table)
        for column in jt.column_names():
            self.counts[column] = (self.counts.get(column, 0) + len(table)
                                   - table.column(column).null_count)
        losses: list[str] = []
        job.table = _fill_resources(table, self.site, layout["gpus_column"] == "total", losses)
        for text in losses:
            self._tally((0, next(i for i, p in enumerate(_FILL_ORDER) if text.startswith(p))),
                        text)
        texts = []
        for position, name in enumerate(layout["fields"]):
            losses = []
            texts.append(_column_text(schema.field(name).column, job, schema, self.site,
                                      self.zone, layout, losses, self.ids))
            for text in losses:
                self._tally((1, position), text)
        return _join_lines(texts, layout["separator"], layout["line_ending"])

    def _tally(self, rank: tuple[int, int], text: str) -> None:
        """Keep one report per kind (its wording without numbers), the counts of jobs summed
        over chunks; ``rank`` is its place in the report of a whole table."""
        key = re.sub(r"#( \w+?)s?\b", r"#\1s", re.sub(r"[0-9]+", "#", text))  # 1 job ~ 2 jobs
        if key in self.merged:
            text = _add_counts(self.merged[key][1], text)
        self.merged[key] = (rank, text)

    def report(self, table: pa.Table) -> list[str]:
        """The loss report of all chunks (``table``: any chunk, for the metadata)."""
        job = _Job(jt.conform(table), self.where)
        losses = _losses_elsewhere(table, job, self.schema, self.counts, self.rows)
        return losses + [text for _, text in sorted(self.merged.values(), key=lambda r: r[0])]

    def end(self, text: bytes) -> bytes:
        """``text`` (the last bytes of the log) without its final line ending when the layout
        has none."""
        ending = self.layout["line_ending"].encode()
        if not self.layout["final_newline"] and text.endswith(ending):
            return text[:-len(ending)]
        return text


# The reports of _fill_resources, in the order it makes them.
_FILL_ORDER = ("nodes: unknown", "gpus: unknown", "gpus_per_node: unknown", "gpus: ")


def _add_counts(first: str, second: str) -> str:
    """Two reports of one kind from two chunks as one: the published numbering's later report
    (it has the running total), else ``first`` with its job count (its first number) raised by
    ``second``'s."""
    if "numbered 1.." in first:
        return second
    a, b = re.search(r"[0-9]+", first), re.search(r"[0-9]+", second)
    n, total = int(a.group()), int(a.group()) + int(b.group())
    noun = re.match(r" (\w+)", first[a.end():])
    if noun is None:
        return f"{first[:a.start()]}{total}{first[a.end():]}"
    word = noun.group(1)
    singular = word[:-1] if n != 1 and word.endswith("s") else word
    return f"{first[:a.start()]}{count(total, singular)}{first[a.end() + noun.end():]}"


def render(table: pa.Table, *, form: str = "raw", site: Site | str | Path | None = None) -> tuple[bytes, list[str]]:
    """The NQSII log text (uncompressed bytes) of ``table`` and the loss report."""
    renderer = _Renderer(table, form, site)
    text = renderer.end(renderer.header() + renderer.body(table))
    return text, renderer.report(table)


def _join_lines(texts: list[pa.Array], separator: str, line_ending: str) -> bytes:
    """One line per row: the column texts joined by ``separator``, each ending ``line_ending``."""
    if not texts or not len(texts[0]):
        return b""
    quoted = any(pc.any(pc.match_substring(t, '"')).as_py() for t in texts)
    if quoted:  # pyarrow's CSV writer refuses quotes without its own quoting; join instead
        lines = pc.binary_join_element_wise(*texts, separator)
        lines = pc.binary_join_element_wise(lines, pa.scalar(""), line_ending)
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)
        start, stop = offsets[lines.offset], offsets[lines.offset + len(lines)]
        return lines.buffers()[2].to_pybytes()[start:stop]
    # No value holds a quote, hence (see _quote) no comma either: pyarrow's writer is exact.
    # It joins with its default comma, which is then replaced by the separator (any text: a
    # delimiter of its own would be one character, and one a value holds is refused).
    sink = io.BytesIO()
    pacsv.write_csv(pa.table({f"c{i}": t for i, t in enumerate(texts)}), sink,
                    pacsv.WriteOptions(include_header=False, quoting_style="none",
                                       eol=line_ending))
    body = sink.getvalue()
    return body.replace(b",", separator.encode()) if separator != "," else body


def write(table: pa.Table, path: str | Path, *, form: str = "raw",
          site: Site | str | Path | None = None, force: bool = False) -> list[str]:
    """Write ``table`` as an NQSII log in ``form`` ("raw" or "published"); gzip when ``path``
    ends in ``.gz`` (deterministic: mtime 0, no file name). Returns the loss report."""
    return write_chunks([table], path, form=form, site=site, force=force)


def write_chunks(chunks: Iterable[pa.Table], path: str | Path, *, form: str = "raw",
                 site: Site | str | Path | None = None, force: bool = False) -> list[str]:
    """Write the row chunks of one job table (same metadata, in row order; at least one) as
    one NQSII log, one chunk in memory at a time; the bytes and the loss report are those of
    ``write`` on the concatenated table."""
    iterator = iter(chunks)
    first = next(iterator, None)
    if first is None:
        raise ValueError("write_chunks needs at least one table (an empty one for no jobs)")
    renderer = _Renderer(first, form, site)
    last = first
    with atomic_file(path, force) as tmp, open(tmp, "wb") as raw:
        gz = gzip_writer(raw) if str(path).endswith(".gz") else None
        sink = gz or raw
        pending = renderer.header() + renderer.body(first)
        for chunk in iterator:
            text = renderer.body(chunk)
            if text:  # hold back the latest text: the last line ending may have to go
                sink.write(pending)
                pending = text
            last = chunk
        sink.write(renderer.end(pending))
        if gz is not None:
            gz.close()
    return renderer.report(last)
