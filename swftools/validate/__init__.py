"""``swftools.validate``: schema and semantic checks of any trace, as a report of findings.

``validate(path_or_table, site=..., rules=...) -> Report`` reads an NQSII log, an SWF file or a data
package through the readers (or takes a job table), runs every selected rule on whole columns and
returns the findings with complete per-rule counts. Rules are listed by ``describe_rules()`` and
``swftools validate --list-rules``.
"""

from __future__ import annotations

import os
import sys
import types
import warnings
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import formats
from swftools import table as jt
from swftools.errors import NO_SUCH_FILE, InputError, UsageError
from swftools.site import Site, resolve_site
from swftools.validate import (  # noqa: F401  (registration order = report order)
    package_checks, rules_anomaly, rules_capacity, rules_queue, rules_swf, rules_time,
    schema_checks)
from swftools.validate.context import Context, Options
from swftools.validate.registry import (ENGINE_RULES, RULES, NotApplicable, Rule, describe_rules,
                                        select_rules)
from swftools.validate.report import SEVERITIES, Finding, Report

__all__ = ["ENGINE_RULES", "Finding", "Options", "RULES", "Report", "SEVERITIES",
           "describe_rules", "validate"]


ZONED_FORMATS = ("slurm", "pbs")
"""Formats whose times are local times of a zone (``tz``)."""


def _lines_for(table: pa.Table, fmt: str) -> np.ndarray:
    """File line (or row number) of every row: SWF lines, CSV lines (header = line 1), rows."""
    if fmt == "swf":
        from swftools.formats.swf.reader import row_line_numbers
        return row_line_numbers(table)
    offset = 2 if fmt in ("nqsii", "package") else 1
    return np.arange(table.num_rows, dtype=np.int64) + offset


def validate(source: str | os.PathLike | pa.Table, site: Site | str | None = None,
             rules: Iterable[str] | str | None = None,
             skip_rules: Iterable[str] | str | None = None,
             max_findings: int | None = None, *, fmt: str | None = None,
             options: Options | None = None, strict: bool = False, allow_empty: bool = False,
             tz: str | None = None, **option_values: Any) -> Report:
    """Validate a trace file, data package or job table; returns the :class:`Report`.

    ``site`` (a Site, preset name or settings file) enables the queue, termcode-mapping and
    packing rules; without it a table whose metadata names a preset uses that preset, and SWF
    capacity comes from the header's MaxProcs. ``rules``/``skip_rules`` pick rules by id
    (unknown ids raise ``UsageError``); ``max_findings`` caps the findings kept (counts stay
    complete and the report says it is partial). With ``strict`` a warning makes the report
    invalid too (a release gate). A trace file without jobs is an ``unreadable-input`` error
    unless ``allow_empty``. ``tz`` is the zone of a Slurm or PBS file's local times (as given
    to ``convert --tz``; default the site's, else UTC). Extra keywords set :class:`Options`
    fields.
    """
    selected = select_rules(rules, skip_rules)
    site = resolve_site(site)
    if max_findings is not None and max_findings < 0:
        raise UsageError("max_findings must be >= 0")
    opts = replace(options or Options(), **option_values) if option_values else (options or Options())
    if isinstance(source, pa.Table):
        meta = jt.get_metadata(source)
        fmt = fmt or meta.get("source_format") or "table"
        report = Report(path=meta.get("source_file") or "<table>", source_format=fmt,
                        max_findings=max_findings, strict=strict)
        try:
            table = jt.conform(source)
        except (KeyError, ValueError, pa.ArrowException) as exc:
            raise UsageError(f"not a job table: {exc}") from None
        report.rows = table.num_rows
        from_swf = "swf_first_line" in meta  # a table read from an SWF file keeps its lines
        lines = _lines_for(source, "swf" if from_swf else "table")
        _run(selected, "table", table, lines, report, fmt, site, opts, report.path,
             line_word="line" if from_swf else "row")
        return report
    display = os.fspath(source)
    path = Path(display)
    fmt = fmt or formats.detect_format(path)
    formats.module_for(fmt)  # usage error for an unknown format
    if tz and fmt not in ZONED_FORMATS:
        raise UsageError(f"--tz applies to {' and '.join(ZONED_FORMATS)} input only, not {fmt}")
    report = Report(path=display, source_format=fmt, max_findings=max_findings, strict=strict)
    package = None
    if fmt == "package":
        package = package_checks.load_package(path, display)
        _run(selected, "package", jt.empty(), np.zeros(0, np.int64), report, fmt, site, opts,
             display, package=package)
    table, lines, row_path = _read(path, display, fmt, site, report, package, allow_empty, tz)
    if table is not None:
        word = "row" if package is not None and package.jobs_csv is None else "line"
        _run(selected, "table", table, lines, report, fmt, site, opts, row_path, package=package,
             line_word=word)
    return report


def _read(path: Path, display: str, fmt: str, site: Any, report: Report,
          package: Any, allow_empty: bool = False,
          tz: str | None = None) -> tuple[pa.Table | None, np.ndarray, str]:
    """Read the input through its reader; an unreadable input becomes one finding."""
    try:
        with warnings.catch_warnings():  # package-integrity reports a changed Parquet file
            warnings.simplefilter("ignore")
            table = formats.read(path, fmt, site=site, allow_empty=allow_empty,
                                 **({"tz": tz} if tz else {}))
    except (InputError, OSError, UnicodeDecodeError, ValueError, pa.ArrowException) as exc:
        if package is None or not package.problems:  # else package findings say why
            report.add(_unreadable(exc, display))
        fallback = package_checks.table_from_cells(package) if package is not None else None
        if fallback is None:
            return None, np.zeros(0, np.int64), display
        # the package reader refused, but the CSV parses: run the semantic rules on its cells
        report.rows = fallback[0].num_rows
        return fallback[0], fallback[1], package.shown(package.jobs_csv["path"])
    report.rows = table.num_rows
    if package is not None:
        csv_res = package.jobs_csv
        if csv_res is not None:
            return table, _lines_for(table, "package"), package.shown(csv_res["path"])
        return table, _lines_for(table, "table"), display
    return table, _lines_for(table, fmt), display


def _unreadable(exc: BaseException, display: str) -> Finding:
    if isinstance(exc, InputError):
        return Finding(exc.path or display, exc.line, None, exc.field, "unreadable-input", "error",
                       exc.message, exc.value, exc.expected)
    if isinstance(exc, FileNotFoundError):
        return Finding(display, None, None, None, "unreadable-input", "error", NO_SUCH_FILE,
                       None, "an existing trace file or data package")
    if isinstance(exc, IsADirectoryError):
        return Finding(display, None, None, None, "unreadable-input", "error",
                       "is a directory, not a trace file", None, "a file (or --format package)")
    return Finding(display, None, None, None, "unreadable-input", "error",
                   f"cannot be read: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                   None, "a readable trace")


def _run(selected: list[Rule], phase: str, table: pa.Table, lines: np.ndarray, report: Report,
         fmt: str, site: Any, opts: Options, row_path: str, package: Any = None,
         line_word: str = "line") -> None:
    resolved = resolve_site(site, table) if phase == "table" else None
    schema = None
    if package is not None and package.jobs_csv is not None:
        schema = package.table_schema(package.jobs_csv)
    ctx = Context(table, report, path=row_path, lines=lines, source_format=fmt, site=resolved,
                  options=opts, table_schema=schema, line_word=line_word)
    ctx.package = package
    ctx.selected = {r.id for r in selected}
    actionable: dict[str, list[str]] = {}
    for r in selected:
        if r.phase != phase:
            continue
        ctx.rule_id, ctx.rule_severity = r.id, r.severity
        try:
            r.check(ctx)
        except NotApplicable as why:
            report.skipped[r.id] = why.reason
            if why.actionable:
                actionable.setdefault(why.reason, []).append(r.id)
            continue
        report.rules_run.append(r.id)
    for reason, ids in actionable.items():
        report.add(Finding(row_path, None, None, None, "rule-skipped", "info",
                           f"{', '.join(ids)} skipped: {reason}", None, None))


class _CallableModule(types.ModuleType):
    """Lets ``swftools.validate(path)`` call :func:`validate` while ``swftools.validate`` stays
    the package (so ``from swftools.validate import Report`` keeps working)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Report:
        return validate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
