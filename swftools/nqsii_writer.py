"""Write the job table as an NQSII log (published or raw form), whole columns at a time.

The text layout comes from the table's ``nqsii`` metadata when it was read from the same form
(so the file is reproduced byte for byte), else from the form's schema defaults: published =
``", "``-separated integers; raw = comma-separated, local date-times ``YYYY-MM-DD HH:MM:SS`` in
the site's zone and ``HH:MM:SS`` durations.
"""

from __future__ import annotations

import gzip
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
from swftools.nqsii_schema import DEFAULT_SITE, FormSchema, form_defaults, form_schema, resolve_site
from swftools.nqsii_timefmt import TIMESTAMP_FORMATS, format_durations, format_instants, format_integers
from swftools.site import Site

NQSII_COLUMNS = ("job_id", "user", "group", "queue", "nodes", "gpus_per_node", "gpus",
                 "requested_walltime_s", "termcode", "submit_time", "start_time", "finish_time",
                 "wait_s", "walltime_s")
GZIP_LEVEL = 6


def _layout(table: pa.Table, schema: FormSchema) -> dict[str, Any]:
    layout = form_defaults(schema)
    recorded = jt.get_metadata(table).get("nqsii") or {}
    if recorded.get("form") == schema.form:
        layout.update({k: v for k, v in recorded.items() if k != "formats"})
        layout["formats"].update(recorded.get("formats", {}))
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


def _quote(values: pa.Array, separator: str) -> pa.Array:
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


def _gpu_values(job: _Job, site: Site, total: bool, losses: list[str]) -> np.ndarray:
    """The GPU column: GPUs per node (or the total), derived where unknown but implied."""
    nodes_arr, per_node_arr, gpus_arr = (_plain(job.table.column(c))
                                         for c in ("nodes", "gpus_per_node", "gpus"))
    if nodes_arr.null_count:
        implied = pc.cast(pc.ceil(pc.divide(pc.cast(gpus_arr, pa.float64()), site.gpus_per_node)),
                          pa.int64())
        filled = pc.coalesce(nodes_arr, implied)
        if filled.null_count < nodes_arr.null_count:
            losses.append(f"nodes: unknown for {nodes_arr.null_count - filled.null_count} job(s), "
                          f"derived as ceil(gpus / {site.gpus_per_node})")
        nodes_arr = filled
    nodes = job.integers("nodes", nodes_arr)
    if total:
        filled = pc.coalesce(gpus_arr, pc.multiply(nodes_arr, per_node_arr))
        if filled.null_count < gpus_arr.null_count:
            losses.append(f"gpus: unknown for {gpus_arr.null_count - filled.null_count} job(s), "
                          "derived as nodes x GPUs per node")
        return job.integers("gpus", filled)
    gpus = np.asarray(gpus_arr.to_numpy(zero_copy_only=False), dtype=float)
    known = ~np.isnan(gpus)
    gpus_int = np.nan_to_num(gpus).astype(np.int64)
    if per_node_arr.null_count:
        safe = np.where(nodes > 0, nodes, 1)
        divisible = known & (nodes > 0) & (gpus_int % safe == 0)
        filled = pc.coalesce(per_node_arr, pa.array(gpus_int // safe, mask=~divisible))
        if filled.null_count < per_node_arr.null_count:
            losses.append(f"gpus_per_node: unknown for "
                          f"{per_node_arr.null_count - filled.null_count} job(s), derived as "
                          "gpus / nodes")
        per_node_arr = filled
    per_node = job.integers("gpus_per_node", per_node_arr)
    mismatch = int(np.count_nonzero(known & (gpus_int != nodes * per_node)))
    if mismatch:
        losses.append(f"gpus: {mismatch} job(s) hold a total other than nodes x GPUs per node; "
                      "the GPU column carries GPUs per node, so those totals are lost")
    return per_node


def _losses_elsewhere(table: pa.Table, job: _Job) -> list[str]:
    losses = []
    for column in jt.column_names():
        if column in NQSII_COLUMNS:
            continue
        known = len(table) - table.column(column).null_count
        if known:
            losses.append(f"{column} ({job.titles[column]}): {known} known value(s) dropped; "
                          "NQSII logs have no such column")
    header = jt.get_metadata(table).get("swf_header")
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
            return _quote(values, layout["separator"])
        if not pc.all(pc.match_substring_regex(values, r"^[0-9]+$")).as_py():
            count = len(pc.unique(values))
            losses.append(f"{column}: the published form holds integer ids; the {count} "
                          f"{column} names are numbered 1..{count} by first appearance")
            return _dense_ids(values)
        return values
    if column == "queue":
        return _quote(_queue_text(job, schema, site, layout), layout["separator"])
    if column == "gpus_per_node":
        return format_integers(_gpu_values(job, site, layout["gpus_column"] == "total", losses))
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
    metadata = jt.get_metadata(table)
    site_obj = resolve_site(site)
    zone = site_obj.time_zone if site is not None else metadata.get(
        "time_zone", resolve_site(DEFAULT_SITE).time_zone)
    layout = _layout(table, schema)
    job = _Job(table, metadata.get("source_file", "job table"))
    losses = _losses_elsewhere(table, job)
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
            with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                       compresslevel=GZIP_LEVEL, mtime=0) as gz:
                gz.write(text)
        else:
            tmp.write_bytes(text)
    return losses
