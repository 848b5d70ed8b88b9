"""NQSII job logs (AAIC): the published form and the raw pre-release form, read and written.

Both forms are CSV with a header row and 13 attributes per job; ``schemas/nqsii-published.schema.json``
and ``schemas/nqsii-raw.schema.json`` describe them. Reading records the text layout (header
names, separator, per-column time and duration formats) in the table metadata under ``nqsii``,
so that writing the table back in the same form reproduces the file byte for byte.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import progress as progress_mod
from swftools import table as jt
from swftools.errors import InputError
from swftools.formats.inputs import first_repeat
from swftools.formats.nqsii.columns import (
    FieldRef,
    parse_durations,
    parse_integer_ids,
    parse_integers,
    parse_names,
    parse_queue_names,
    parse_queue_numbers,
    parse_timestamps,
)
from swftools.formats.nqsii.logfile import RawLog, load_log, parse_body
from swftools.formats.nqsii.schema import FORMS, FormSchema, NqsiiField, form_schema, map_header, resolve_site
from swftools.formats.nqsii.timefmt import TIMESTAMP_FORMATS
from swftools.metadata import TableMetadata
from swftools.site import Site

__all__ = ["FORMS", "read"]

# Columns parsed at once (each holds its parse's temporaries).
_PARSE_THREADS = 4


def _looks_published(fields: list[NqsiiField], tokens: list[pa.Array]) -> bool:
    """Published logs hold integers where raw logs hold names: user, group and queue."""
    first = {f.name: t[0].as_py() for f, t in zip(fields, tokens)}
    return all(re.fullmatch(r"[0-9]+", first.get(name, "")) for name in ("user", "group", "queue"))


def _choose_form(log: RawLog, form: str | None, path: str) -> tuple[FormSchema, list[NqsiiField], list[pa.Array]]:
    """The form (given, or detected from the header and the first job line), the field of each
    header column, and the column texts."""
    if form is not None:
        schema = form_schema(form)
        fields = map_header(log.header, schema, path)
        return schema, fields, parse_body(log, path)
    mapped: dict[str, list[NqsiiField]] = {}
    errors: dict[str, InputError] = {}
    for candidate in ("published", "raw"):
        try:
            mapped[candidate] = map_header(log.header, form_schema(candidate), path)
        except InputError as exc:
            errors[candidate] = exc
    if not mapped:
        raise errors["raw"]
    tokens = parse_body(log, path)
    if tokens and len(tokens[0]) == 0:  # no job rows (allow_empty): the separator decides
        published = "published" in mapped and log.separator == ", "
    else:
        published = "published" in mapped and _looks_published(mapped["published"], tokens)
    chosen = "published" if published or "raw" not in mapped else "raw"
    return form_schema(chosen), mapped[chosen], tokens


def _parse_columns(fields: list[NqsiiField], tokens: list[Any], refs: dict[str, FieldRef],
                   site: Site, zone: str, step: Any) -> list[Any]:
    """Each column parsed (:func:`_convert`) in a pool of threads (pyarrow and numpy release
    the GIL), in file order: its values and layout part, or its InputError. A column's text is
    freed once it parsed (``tokens[i]`` None), kept for the messages when it did not."""
    def parse(position: int) -> Any:
        f, text = fields[position], tokens[position]
        tokens[position] = None
        part: dict[str, Any] = {"formats": {}}
        try:
            return _convert(f, text, refs[f.column], site, zone, part), part
        except InputError as exc:
            tokens[position] = text
            return exc

    workers = max(1, min(_PARSE_THREADS, os.cpu_count() or 1, len(fields)))
    with ThreadPoolExecutor(workers, thread_name_prefix="swftools-nqsii") as pool:
        futures = [pool.submit(parse, position) for position in range(len(fields))]
        for f, future in zip(fields, futures):
            future.result()
            step(f.name)
    return [future.result() for future in futures]


def _empty_line_error(row: int, tokens: list[pa.Array | None], path: str) -> InputError | None:
    """An empty line parses as a row of empty fields; name it for what it is (a column already
    freed parsed without error, so it held no empty field: every column rejects one)."""
    if all(t is not None and t[row].as_py() == "" for t in tokens):
        return InputError(path, f"empty line, expected {len(tokens)} (one per header column)",
                          line=row + 2, value="")
    return None


def _convert(f: NqsiiField, tokens: pa.Array, ref: FieldRef, site: Site, zone: str,
             layout: dict[str, Any]) -> Any:
    """Parse one column; records its text format in ``layout``."""
    if f.column in ("user", "group"):
        return parse_integer_ids(tokens, ref) if f.type == "integer" else parse_names(tokens, ref)
    if f.column == "queue":
        if f.type == "integer":
            return parse_queue_numbers(tokens, ref, site)
        names, spelling = parse_queue_names(tokens, ref, site)
        layout["queue_spelling"] = spelling
        return names
    if f.text_formats and f.text_formats[0] in TIMESTAMP_FORMATS:
        values, fmt = parse_timestamps(tokens, ref, f.text_formats, zone)
        layout["formats"][f.name] = fmt
        return values
    if f.text_formats:
        values, fmt = parse_durations(tokens, ref, f.text_formats)
        layout["formats"][f.name] = fmt
        return values
    if f.enum is not None:
        return parse_integers(tokens, ref, f"one of {f.description}", list(f.enum))
    return parse_integers(tokens, ref)


class _Texts:
    """The log's column texts by column, parsed again on first use: only the messages of
    ``_check_jobs`` need them, so a large log does not keep its text while it is converted."""

    def __init__(self, path: str | Path, form: str, allow_empty: bool) -> None:
        self.path, self.form, self.allow_empty = path, form, allow_empty
        self.texts: dict[str, pa.Array] | None = None

    def __getitem__(self, column: str) -> pa.Array:
        if self.texts is None:
            name = str(self.path)
            log = load_log(self.path, self.allow_empty)
            _, fields, tokens = _choose_form(log, self.form, name)
            self.texts = {f.column: t for f, t in zip(fields, tokens)}
        return self.texts[column]


def _check_jobs(columns: dict[str, Any], tokens: Any, refs: dict[str, FieldRef]) -> None:
    """Cross-column checks: finish not before start, job ids unique (``tokens``: the column
    texts by column, for the messages)."""
    late = columns["finish_time"] < columns["start_time"]
    if late.any():
        row = int(np.argmax(late))
        start = tokens["start_time"][row].as_py()
        raise refs["finish_time"].error(row, tokens["finish_time"][row].as_py(),
                                        f"is before the start time {start!r}",
                                        "a finish time at or after the start time")
    repeat = first_repeat(columns["job_id"])
    if repeat is not None:
        row, first_row = repeat
        raise refs["job_id"].error(row, tokens["job_id"][row].as_py(),
                                   f"repeats the job id on line {first_row + 2}",
                                   "job ids unique within the file")


def _gpu_columns(gpu_values: np.ndarray, nodes: np.ndarray, gpus_total: bool) -> dict[str, Any]:
    if not gpus_total:
        return {"gpus_per_node": gpu_values, "gpus": nodes * gpu_values}
    divisible = (nodes > 0) & (gpu_values % np.where(nodes > 0, nodes, 1) == 0)
    per_node = pa.array(gpu_values // np.where(nodes > 0, nodes, 1), mask=~divisible)
    return {"gpus": gpu_values, "gpus_per_node": per_node}


def read(path: str | Path, *, site: Site | str | Path | None = None, form: str | None = None,
         gpus_total: bool = False, progress: bool = False, allow_empty: bool = False) -> pa.Table:
    """Read an NQSII job log (published or raw form, gzip or plain) into the job table.

    ``form`` None detects the form from the first job line; ``gpus_total`` says the GPU column
    holds total GPUs rather than GPUs per node. Bad input raises ``InputError`` naming the line,
    field, value and what was expected. A log without job rows is an error unless
    ``allow_empty``.
    """
    name = str(path)
    site_obj = resolve_site(site)
    zone = site_obj.time_zone
    log = load_log(path, allow_empty)  # a large plain log stays on disk until parsed
    show = progress and progress_mod.large(log.estimated_lines)
    columns: dict[str, Any] = {}
    refs: dict[str, FieldRef] = {}
    problems: list[tuple[int, int, InputError]] = []
    label = f"reading {Path(name).name}"
    with progress_mod.bar(label, len(log.header) + 2, show) as advance:
        def step(description: str) -> None:
            advance(1, f"{label}: {description}")


        schema, fields, tokens = _choose_form(log, form, name)
        log.body = b""  # parsed: free the text
        step("CSV parsed")
        layout: dict[str, Any] = {
            "form": schema.form, "header": log.header, "fields": [f.name for f in fields],
            "separator": log.separator, "line_ending": log.line_ending,
            "final_newline": log.final_newline, "bom": log.bom,
            "gpus_column": "total" if gpus_total else "per_node", "formats": {},
            "queue_spelling": {},
        }
        for f, header in zip(fields, log.header):
            refs[f.column] = FieldRef(name, header, f.title)
        outcomes = _parse_columns(fields, tokens, refs, site_obj, zone, step)
        for position, (f, outcome) in enumerate(zip(fields, outcomes)):
            if isinstance(outcome, InputError):
                problems.append((outcome.line or 0, position, outcome))
                continue
            columns[f.column], part = outcome
            layout["formats"].update(part["formats"])
            layout["queue_spelling"] = part.get("queue_spelling", layout["queue_spelling"])
        if problems:  # report the earliest line; on one line, the leftmost column
            line, _, first = min(problems, key=lambda p: p[:2])
            raise _empty_line_error(line - 2, tokens, name) or first
        gpu_column = columns.pop("gpus_per_node")
        columns.update(_gpu_columns(gpu_column, columns["nodes"], gpus_total))
        _check_jobs(columns, _Texts(path, schema.form, allow_empty), refs)
        step("checks")
    metadata = TableMetadata(source_file=Path(name).name, source_format="nqsii",
                             site=site_obj.name, time_zone=zone, converter_version=_version(),
                             nqsii=layout)
    arrays = {k: (pa.array(v) if isinstance(v, np.ndarray) else v) for k, v in columns.items()}
    return jt.from_columns(arrays, metadata)


def _version() -> str:
    from swftools import __version__

    return __version__
