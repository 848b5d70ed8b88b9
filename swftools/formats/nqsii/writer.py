"""Write the job table as an NQSII log (published or raw form), whole columns at a time.

The text layout comes from the table's ``nqsii`` metadata when it was read from the same form
(so the file is reproduced byte for byte), else from the form's schema defaults: published =
``", "``-separated integers; raw = comma-separated, local date-times ``YYYY-MM-DD HH:MM:SS`` in
the site's zone and ``HH:MM:SS`` durations.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from swftools import table as jt
from swftools.atomic import atomic_file
from swftools.errors import InputError
from swftools.fileio import gzip_writer
from swftools.formats.nqsii.schema import DEFAULT_SITE, FormSchema, form_defaults, form_schema, resolve_site
from swftools.formats.nqsii.timefmt import TIMESTAMP_FORMATS, format_durations, format_instants, format_integers
from swftools.metadata import TableMetadata
from swftools.site import Site



def _layout(table: pa.Table, schema: FormSchema) -> dict[str, Any]:
    """The recorded text layout when the table was read from this form, else the defaults."""
    layout = form_defaults(schema)
    recorded = dict(TableMetadata.from_table(table).nqsii or {})
    if recorded.get("form") != schema.form:
        return layout
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
            raise self.fail(column, f"unknown for {arr.null_count} job(s) (first: job "
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
            row = int(np.argmax(np.asarray(pc.equal(pc.binary_length(arr), 0).to_numpy())))
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


def _dense_ids(values: pa.Array) -> pa.Array:
    """Numbers 1..N by first appearance."""
    distinct = pc.unique(values)
    position = np.asarray(pc.index_in(values, distinct).to_numpy(), dtype=np.int64)
    return format_integers(position + 1)


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
            losses.append(f"{column}: unknown for {before.null_count - after.null_count} job(s), "
                          f"derived as {how}")

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
            losses.append(f"gpus: {mismatch} job(s) hold a total other than nodes x GPUs per "
                          "node; the GPU column carries GPUs per node, so those totals are lost")
    for column, values in (("nodes", nodes), ("gpus_per_node", per_node), ("gpus", gpus)):
        table = table.set_column(table.schema.get_field_index(column), column, values)
    return table


def _losses_elsewhere(table: pa.Table, job: _Job, schema: FormSchema) -> list[str]:
    """Sentences for what no NQSII column carries: SWF-only columns, the SWF header."""
    carried = {f.column for f in schema.fields} | {"gpus", "gpus_per_node"}
    losses = []
    for column in jt.column_names():
        if column in carried:
            continue
        known = len(table) - table.column(column).null_count
        if known:
            losses.append(f"{column} ({job.titles[column]}): {known} known value(s) dropped; "
                          "NQSII logs have no such column")
    header = TableMetadata.from_table(table).swf_header
    if header:
        losses.append(f"SWF header ({len(header)} entries) dropped; NQSII logs have no header comments")
    if not len(table):
        losses.append("the table has no jobs: the file holds only a header, which read() "
                      "rejects as a log without job rows")
    return losses


def _column_text(column: str, job: _Job, schema: FormSchema, site: Site, zone: str,
                 layout: dict[str, Any], losses: list[str]) -> pa.Array:
    f = schema.by_column(column)
    if column in ("user", "group"):
        values = job.strings(column)
        if schema.form == "raw":
            return _quote(values)
        if not pc.all(pc.match_substring_regex(values, r"^[0-9]+$")).as_py():
            count = len(pc.unique(values))
            losses.append(f"{column}: the published form holds integer ids; the {count} "
                          f"{column} names are numbered 1..{count} by first appearance")
            return _dense_ids(values)
        return values
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


def render(table: pa.Table, *, form: str = "raw", site: Site | str | Path | None = None) -> tuple[bytes, list[str]]:
    """The NQSII log text (uncompressed bytes) of ``table`` and the loss report."""
    schema = form_schema(form)
    table = jt.conform(table)
    metadata = TableMetadata.from_table(table)
    site_obj = resolve_site(site)
    zone = site_obj.time_zone if site is not None else (
        metadata.time_zone or resolve_site(DEFAULT_SITE).time_zone)
    layout = _layout(table, schema)
    job = _Job(table, metadata.source_file or "job table")
    losses = _losses_elsewhere(table, job, schema)
    job.table = _fill_resources(table, site_obj, layout["gpus_column"] == "total", losses)
    texts = [_column_text(schema.field(name).column, job, schema, site_obj, zone, layout, losses)
             for name in layout["fields"]]
    separator, line_ending = layout["separator"], layout["line_ending"]
    header = separator.join(layout["header"]) + line_ending
    text = (b"\xef\xbb\xbf" if layout["bom"] else b"") + header.encode("utf-8")
    text += _join_lines(texts, separator, line_ending)
    if not layout["final_newline"] and text.endswith(line_ending.encode()):
        text = text[:-len(line_ending)]
    return text, losses


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
    sink = io.BytesIO()
    pacsv.write_csv(pa.table({f"c{i}": t for i, t in enumerate(texts)}), sink,
                    pacsv.WriteOptions(include_header=False, quoting_style="none",
                                       delimiter=separator[0], eol=line_ending))
    body = sink.getvalue()
    return body.replace(b",", separator.encode()) if separator != "," else body


def write(table: pa.Table, path: str | Path, *, form: str = "raw",
          site: Site | str | Path | None = None, force: bool = False) -> list[str]:
    """Write ``table`` as an NQSII log in ``form`` ("raw" or "published"); gzip when ``path``
    ends in ``.gz`` (deterministic: mtime 0, no file name). Returns the loss report."""
    text, losses = render(table, form=form, site=site)
    with atomic_file(path, force) as tmp:
        if str(path).endswith(".gz"):
            with open(tmp, "wb") as raw, gzip_writer(raw) as gz:
                gz.write(text)
        else:
            tmp.write_bytes(text)
    return losses
