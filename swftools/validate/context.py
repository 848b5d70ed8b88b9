"""What every rule sees: the table as numpy columns, row -> line mapping, site, options, the report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.metadata import UNIT_WORDS, ProcessorUnit, TableMetadata
from swftools.site import Site
from swftools.formats.swf.header import header_int, header_value, header_values
from swftools.validate.registry import NotApplicable
from swftools.validate.report import Finding, Report

# SWF-only columns (everything an AAIC NQSII log does not record).
SWF_ONLY = ("avg_cpu_time_s", "used_memory_kb", "requested_procs", "requested_memory_kb",
            "swf_status", "executable", "partition", "preceding_job_id", "think_time_s")

Values = np.ndarray | Callable[[int], Any] | Any


@dataclass(frozen=True)
class Options:
    """Thresholds of the rules that need one (CLI: ``--flurry-jobs`` etc.)."""

    flurry_window_s: int = 86_400
    flurry_min_jobs: int = 1_000
    flurry_min_share: float = 0.5
    late_start_s: int = 86_400
    walltime_grace_s: int | None = None  # None: the site's setting, else 300 s
    max_intervals: int = 20  # capacity / flurry intervals reported in full per rule
    max_listed_jobs: int = 10  # job ids listed in one aggregated finding


class Context:
    """The table under validation and helpers to report findings on whole columns."""

    def __init__(self, table: pa.Table, report: Report, *, path: str, lines: np.ndarray,
                 source_format: str, site: Site | None, options: Options,
                 table_schema: dict[str, Any] | None = None, line_word: str = "line"):
        self.table = table
        self.report = report
        self.path = path
        self.lines = lines
        self.source_format = source_format
        self.site = site
        self.options = options
        self.meta = jt.get_metadata(table)
        self.n = table.num_rows
        self.table_schema = table_schema or jt.table_schema()
        self.line_word = line_word  # what Finding.line counts: file "line" or table "row"
        self.rule_id = ""
        self.rule_severity = "error"
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.memo: dict[str, Any] = {}  # results shared between rules (e.g. duplicate rows)
        self.package: Any = None  # PackageInput when validating a data package
        self.selected: set[str] = set()  # ids of the rules selected for this run

    # -- input facts ---------------------------------------------------------------------------

    @cached_property
    def is_swf(self) -> bool:
        return self.source_format == "swf" or "swf_header" in self.meta

    @cached_property
    def metadata(self) -> TableMetadata:
        """The table's metadata, typed (``self.meta`` is the same as a plain dict)."""
        return TableMetadata.from_dict(self.meta, source=self.path)

    @cached_property
    def unit(self) -> ProcessorUnit:
        """What the ``gpus`` column counts: ``gpu`` or ``processor``.

        The metadata's explicit ``processor_unit`` if any; else GPUs when validating against a
        site (site settings model GPUs per node: the site says the processors are GPUs); else
        the unit the metadata derives from the source (an SWF trace counts processors unless
        its header says they are GPUs; NQSII logs and synthetic tables count GPUs).
        """
        if self.metadata.processor_unit is None and self.site is not None:
            return "gpu"
        return self.metadata.unit

    @property
    def unit_word(self) -> str:
        """:attr:`unit` in plural words for messages: ``GPUs`` or ``processors``."""
        return UNIT_WORDS[self.unit]

    @property
    def header(self) -> list[list[str]]:
        return self.meta.get("swf_header") or []

    def header_value(self, key: str) -> str | None:
        return header_value(self.header, key)

    def header_values(self, key: str) -> list[str]:
        return header_values(self.header, key)

    def header_int(self, key: str) -> int | None:
        return header_int(self.header, key)

    @cached_property
    def grace_s(self) -> int:
        if self.options.walltime_grace_s is not None:
            return self.options.walltime_grace_s
        return self.site.walltime_grace_s if self.site else 300

    def has(self, name: str) -> bool:
        """Whether column ``name`` holds at least one known value."""
        return self.n > 0 and self.table.column(name).null_count < self.n

    def require(self, *names: str) -> None:
        """Not applicable unless every named column holds some known value."""
        missing = [n for n in names if not self.has(n)]
        if missing:
            raise NotApplicable(f"no known values in {', '.join(missing)}")

    def require_jobs(self, minimum: int = 1) -> None:
        """Not applicable with fewer than ``minimum`` jobs (the guard of whole-table rules)."""
        if self.n < minimum:
            raise NotApplicable("no jobs" if minimum == 1 else "fewer than two jobs" if minimum == 2
                                else f"fewer than {minimum} jobs")

    def require_site(self) -> Site:
        if self.site is None:
            raise NotApplicable("no site settings (pass --site aaic or a site file)", actionable=True)
        return self.site

    # -- columns -------------------------------------------------------------------------------
    def values(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(values, known) of a numeric column; unknown entries hold 0 in ``values``.

        Shared by every rule, so kept lean: a contiguous column without nulls is a view of its
        Arrow buffer, an all-null column is lazily zeroed memory, and every column without nulls
        shares one read-only ``known`` array.
        """
        if name not in self._cache:
            col = self.column(name)
            if col.null_count == 0:
                known = self._all_known
            elif col.null_count == self.n and _numeric(col.type):
                zeros = np.zeros(self.n, col.type.to_pandas_dtype())  # untouched pages
                self._cache[name] = (zeros, np.zeros(self.n, bool))
                return self._cache[name]
            else:
                known = np.asarray(pc.is_valid(col), dtype=bool)
            self._cache[name] = (jt.filled(col, 0), known)
        return self._cache[name]

    @cached_property
    def _all_known(self) -> np.ndarray:
        known = np.ones(self.n, bool)
        known.setflags(write=False)
        return known

    def column(self, name: str) -> pa.Array:
        """Column ``name`` as one Array (no copy when the table holds it in one chunk)."""
        col = self.table.column(name)
        if isinstance(col, pa.ChunkedArray):
            return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
        return col

    def strings(self, name: str) -> pa.Array:
        return self.column(name)

    @cached_property
    def job_ids(self) -> np.ndarray:
        return self.values("job_id")[0]

    @cached_property
    def swf_status(self) -> tuple[np.ndarray, np.ndarray]:
        return self.values("swf_status")

    # -- reporting -----------------------------------------------------------------------------
    def flag(self, rows: np.ndarray, field: str | None, message: Values, *,
             value: Values = None, expected: Values = None, severity: str | None = None,
             rule: str | None = None) -> int:
        """Report each row of ``rows`` (indices, or a boolean mask); returns how many.

        ``message``, ``value`` and ``expected`` are constants, per-row arrays (indexed like the
        table) or functions of the row index; they are only evaluated for findings that are kept.
        """
        rows = np.flatnonzero(rows) if rows.dtype == bool else np.asarray(rows)
        if not len(rows):
            return 0
        rule = rule or self.rule_id
        severity = severity or self.rule_severity

        def at(spec: Values, i: int) -> Any:
            if callable(spec):
                return spec(i)
            if isinstance(spec, np.ndarray):
                return spec[i].item()
            return spec

        def build():
            for i in rows:
                i = int(i)
                yield Finding(self.path, int(self.lines[i]), int(self.job_ids[i]), field, rule,
                              severity, str(at(message, i)), _scalar(at(value, i)),
                              _text(at(expected, i)))

        self.report.extend(rule, severity, len(rows), build())
        return len(rows)

    def note(self, message: str, *, row: int | None = None, field: str | None = None,
             value: Any = None, expected: Any = None, severity: str | None = None,
             line: int | None = None, path: str | None = None, rule: str | None = None) -> None:
        """Report one finding, attached to a row (job) or to the whole input."""
        job_id = None
        if row is not None:
            line = int(self.lines[row])
            job_id = int(self.job_ids[row])
        self.report.add(Finding(path or self.path, line, job_id, field, rule or self.rule_id,
                                severity or self.rule_severity, message, _scalar(value),
                                _text(expected)))

    def list_jobs(self, rows: Sequence[int] | np.ndarray) -> str:
        """``1041, 1042, ... (+37 more)`` for the job ids of ``rows``."""
        rows = np.asarray(rows)
        k = self.options.max_listed_jobs
        ids = ", ".join(str(int(j)) for j in self.job_ids[rows[:k]])
        return ids + (f", ... (+{len(rows) - k} more)" if len(rows) > k else "")


def _numeric(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind)


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based: numpy's hash-based ``unique`` is slow on int64 ids)."""
    if not len(values):
        return values
    s = np.sort(values)
    return s[np.r_[True, s[1:] != s[:-1]]]


def _scalar(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
