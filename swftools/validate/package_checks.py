"""Data-package checks run on the files before the table is read: descriptor, integrity, CSV cells.

A broken descriptor (bad JSON, unsafe or missing paths, profile violations) is a finding, never a
crash. CSV cells are type-checked as text, whole columns of one record batch at a time (RE2
regexes in pyarrow, one streamed pass over the file, so a 10-million-row CSV is never held
whole), and every bad cell is reported with its line, not just the first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from swftools import table as jt
from swftools.errors import InputError, json_line
from swftools.fileio import file_digest
from swftools.formats.datapackage import cells as cell_grammar
from swftools.formats.datapackage.files import header_row
from swftools.formats.datapackage.package import unsafe_path
from swftools.formats.inputs import detect_gzip, open_binary
from swftools.validate.context import Context
from swftools.validate.registry import NotApplicable, rule

DESCRIPTOR = "datapackage.json"
JOBS = "jobs"
SCAN_BLOCK_BYTES = 1 << 24  # CSV bytes per record batch of the streamed cell scan
# The cell grammar is the package reader's (one grammar: swftools.formats.datapackage.cells).
TYPE_PATTERNS = cell_grammar.PATTERNS
_EXPECTED = cell_grammar.EXPECTED
_CSV_ERRORS = (pa.ArrowException, OSError, EOFError, UnicodeDecodeError, ValueError, InputError)


@dataclass
class PackageInput:
    """A data package on disk as validate sees it (descriptor text, parsed object, CSV cells)."""

    root: Path
    display_root: str
    text: str | None = None
    descriptor: dict[str, Any] | None = None
    load_error: tuple[str, int | None] | None = None
    problems: int = 0  # package-phase errors found (they explain a failing reader)
    csv_error: str | None = None
    _scans: dict[tuple, CellScan] = field(default_factory=dict)  # cell_scan's, by arguments

    @property
    def desc_path(self) -> Path:
        return self.root / DESCRIPTOR

    def shown(self, rel: str) -> str:
        """How a path inside the package is printed in findings."""
        return str(PurePosixPath(self.display_root) / rel)

    def resources(self) -> list[dict[str, Any]]:
        return [res for _, res in self.listed_resources()]

    def listed_resources(self) -> list[tuple[int, dict[str, Any]]]:
        """The resources that are JSON objects, each with its index in ``resources``."""
        res = (self.descriptor or {}).get("resources")
        return [(i, r) for i, r in enumerate(res) if isinstance(r, dict)] \
            if isinstance(res, list) else []

    @cached_property
    def jobs_csv(self) -> dict[str, Any] | None:
        """The ``jobs`` resource if it is a CSV file inside the package."""
        for res in self.resources():
            if res.get("name") == JOBS and isinstance(res.get("path"), str) and \
                    res.get("format", "csv") == "csv" and (self.root / res["path"]).is_file() \
                    and unsafe_path(res["path"]) is None:
                return res
        return None

    def table_schema(self, res: dict[str, Any]) -> dict[str, Any]:
        """The resource's Table Schema (inline or a file in the package), else the canonical one."""
        schema = res.get("schema")
        if isinstance(schema, str) and unsafe_path(schema) is None:  # a URL is unsafe too
            try:
                schema = json.loads((self.root / schema).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                pass
        return schema if _readable_schema(schema) else jt.table_schema()

    def raw_cells(self) -> tuple[pa.Table, list[str]] | None:
        """The jobs CSV as text cells (all columns string) and its header; None if unreadable."""
        res = self.jobs_csv
        if res is None:
            return None
        try:
            header, stream = self._open_csv(res)
            with stream, _cell_reader(stream, len(header)) as reader:
                return reader.read_all(), header
        except _CSV_ERRORS:  # schema-structure has reported why
            return None

    def cell_scan(self, types: dict[str, str], missing: list[str]) -> CellScan | None:
        """One streamed pass over the jobs CSV (record batches, never the whole file in memory):
        its header, whether it parses, and the bad cells of the typed columns ``types`` (field
        name -> Table Schema type) that are not one of ``missing``. None without a jobs CSV."""
        key = (tuple(sorted(types.items())), tuple(missing))
        if key in self._scans:
            return self._scans[key]
        res, scan = self.jobs_csv, None
        if res is not None:
            scan = CellScan()
            try:
                scan.header, stream = self._open_csv(res)
                with stream, _cell_reader(stream, len(scan.header)) as reader:
                    checked = {i: types[label] for i, label in enumerate(scan.header)
                               if label in types and scan.header.index(label) == i}
                    for batch in reader:
                        for i, kind in checked.items():
                            col = batch.column(i)
                            bad = bad_cells(col, kind, missing)
                            if len(bad):
                                rows, values = scan.bad.setdefault(scan.header[i], ([], []))
                                rows.append(bad + scan.rows)
                                values.append(col.take(pa.array(bad)))
                        scan.rows += batch.num_rows
            except _CSV_ERRORS as exc:
                scan.error = str(exc).split("\n")[0]
                self.csv_error = self.csv_error or scan.error
        self._scans[key] = scan
        return scan

    def _open_csv(self, res: dict[str, Any]) -> tuple[list[str], BinaryIO]:
        """The jobs CSV's header row and the file opened for reading its cells (gzip by
        content, decompression bounded)."""
        path = self.root / res["path"]
        compressed = detect_gzip(path, declared=res.get("compression") == "gz")
        return _header(path, compressed), open_binary(path, compressed=compressed)


def _cell_reader(stream: BinaryIO, columns: int) -> pacsv.CSVStreamingReader:
    """A reader of the CSV rows after the header as text cells, one record batch at a time."""
    names = [f"c{i}" for i in range(columns)]
    return pacsv.open_csv(
        stream, read_options=pacsv.ReadOptions(  # the header is a record: it may span lines
            column_names=names, skip_rows_after_names=1, block_size=SCAN_BLOCK_BYTES),
        parse_options=pacsv.ParseOptions(newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}))


@dataclass
class CellScan:
    """What one streamed pass over the jobs CSV found (``PackageInput.cell_scan``)."""

    header: list[str] = field(default_factory=list)
    rows: int = 0
    error: str | None = None  # the CSV does not parse (the first problem)
    bad: dict[str, tuple[list[np.ndarray], list[pa.Array]]] = field(default_factory=dict)


def _readable_schema(schema: Any) -> bool:
    """Whether ``schema`` is a Table Schema the cell rules can follow: a list of fields, each
    named, with a type name if any, and missing values that are text."""
    if not isinstance(schema, dict) or not isinstance(schema.get("fields"), list):
        return False
    fields, missing = schema["fields"], schema.get("missingValues", [])
    named = all(isinstance(f, dict) and isinstance(f.get("name"), str)
                and isinstance(f.get("type", ""), str) for f in fields)
    texts = isinstance(missing, list) and all(
        isinstance(m, str) or isinstance(m, dict) and isinstance(m.get("value", ""), str)
        for m in missing)
    return named and texts


def _header(path: Path, compressed: bool) -> list[str]:
    import csv
    try:
        row = header_row(path, compressed)
    except csv.Error as exc:  # a label past the csv module's field size limit
        raise ValueError(f"cannot read the header: {exc}") from None
    if row is None:
        raise ValueError("empty file (no header row)")
    return row


def load_package(path: str | Path, display: str) -> PackageInput:
    """Read a package's descriptor text and JSON; problems are kept for package-descriptor."""
    p = Path(path)
    root = p if p.is_dir() else p.parent
    shown = display if Path(display).is_dir() else str(PurePosixPath(display).parent)
    pkg = PackageInput(root=root, display_root="" if shown == "." else shown)
    try:
        pkg.text = pkg.desc_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        pkg.load_error = ("no datapackage.json (not a data package)", None)
        return pkg
    except (OSError, UnicodeDecodeError) as exc:
        pkg.load_error = (f"cannot read: {exc}", None)
        return pkg
    try:
        desc = json.loads(pkg.text)
    except json.JSONDecodeError as exc:
        pkg.load_error = (f"not valid JSON: {exc.msg} (column {exc.colno})", exc.lineno)
        return pkg
    if not isinstance(desc, dict):
        pkg.load_error = ("not a data package descriptor (expected a JSON object)", 1)
        return pkg
    pkg.descriptor = desc
    return pkg


def _line_at(pkg: PackageInput, where: list[str | int]) -> int | None:
    """The descriptor line of the value at JSON path ``where``."""
    return None if pkg.text is None else json_line(pkg.text, where)


def _section(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` when it is a JSON object, else an empty one (a malformed descriptor is the
    reader's finding, not a crash here)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _package(ctx: Context) -> PackageInput:
    pkg = getattr(ctx, "package", None)
    if pkg is None:
        raise NotApplicable("input is not a data package")
    return pkg


def _profile_errors(desc: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, note) of the descriptor's violations of its Data Package profile (frictionless)."""
    from frictionless import Package  # imported lazily: frictionless is slow to import

    return [(e.type, e.note) for e in Package.metadata_validate(desc)]


@rule("package-descriptor", "error", "schema",
      "datapackage.json is valid JSON and follows the Data Package profile it declares (v2 by "
      "$schema; checked with frictionless), every resource path is relative and inside the "
      "package and its file exists, and a 'jobs' resource is present.", phase="package")
def package_descriptor(ctx: Context) -> None:
    pkg = _package(ctx)
    where = pkg.shown(DESCRIPTOR)

    def problem(message: str, line: int | None = None, value: Any = None,
                expected: str | None = None) -> None:
        pkg.problems += 1
        ctx.note(message, path=where, line=line, value=value, expected=expected)

    if pkg.load_error:
        problem(pkg.load_error[0], pkg.load_error[1], expected="a JSON data package descriptor")
        return
    desc = pkg.descriptor or {}
    for kind, note in _profile_errors(desc):
        problem(f"{kind}: {note}", expected="a descriptor valid against the Data Package profile")
    names = []
    for r, res in pkg.listed_resources():
        name = res.get("name")
        names.append(name)
        paths, at = res.get("path"), ["resources", r, "path"]
        steps = ([(at + [i], p) for i, p in enumerate(paths)] if isinstance(paths, list)
                 else [(at, paths)] if isinstance(paths, str) else [])
        for where_json, rel in steps:
            if not isinstance(rel, str):
                continue
            line = _line_at(pkg, where_json)
            why = unsafe_path(rel)
            if why:
                problem(f"resource {name!r}: path {rel!r} {why}", line, rel,
                        "a relative path inside the package")
            elif not (pkg.root / rel).is_file():
                problem(f"resource {name!r}: file {rel!r} does not exist", line, rel,
                        "an existing file")
    if JOBS not in names:
        problem("no 'jobs' resource", expected="a resource named 'jobs' (the job table)")


def _declared(res: dict[str, Any], record: Any) -> list[tuple[str, str, str]]:
    """(algorithm, hex, origin) digests to verify for a resource (``record``: what swftools
    recorded for its file)."""
    out = []
    declared = res.get("hash")
    if isinstance(declared, str) and declared:
        algorithm, _, hexdigest = declared.rpartition(":")
        algorithm = (algorithm or "md5").lower()
        if algorithm in ("md5", "sha1", "sha256", "sha512"):
            out.append((algorithm, hexdigest.lower(), "hash"))
    if isinstance(record, dict) and isinstance(record.get("sha256"), str) and \
            not any(a == "sha256" for a, _, _ in out):
        out.append(("sha256", record["sha256"].lower(), "swftools.files"))
    return out


@rule("package-integrity", "error", "schema",
      "Each resource file has the size ('bytes') and checksum ('hash', or the sha256 swftools "
      "records) the descriptor declares, Parquet included (frictionless skips Parquet hashes).",
      phase="package")
def package_integrity(ctx: Context) -> None:
    pkg = _package(ctx)
    if pkg.descriptor is None:
        raise NotApplicable("no readable descriptor")
    recorded = _section(_section(pkg.descriptor, "swftools"), "files")
    for res in pkg.resources():
        rel = res.get("path")
        if not isinstance(rel, str) or unsafe_path(rel) or not (pkg.root / rel).is_file():
            continue
        path = pkg.root / rel
        size = path.stat().st_size
        if isinstance(res.get("bytes"), int) and res["bytes"] != size:
            pkg.problems += 1
            ctx.note(f"resource {res.get('name')!r}: {size} bytes, the descriptor declares "
                     f"{res['bytes']}", path=pkg.shown(rel), field="bytes", value=size,
                     expected=str(res["bytes"]))
        for algorithm, expected, origin in _declared(res, recorded.get(rel)):
            actual = file_digest(path, algorithm)
            if actual != expected:
                pkg.problems += 1
                ctx.note(f"resource {res.get('name')!r}: {algorithm} checksum differs from the "
                         f"descriptor's {origin} (changed or damaged file)", path=pkg.shown(rel),
                         field="hash", value=actual, expected=expected)


@rule("schema-structure", "error", "schema",
      "The jobs CSV parses, its header row names exactly the Table Schema's fields (no missing, "
      "extra or repeated column) and every row has one cell per header column.", phase="package")
def schema_structure(ctx: Context) -> None:
    pkg = _package(ctx)
    res = pkg.jobs_csv
    if res is None:
        raise NotApplicable("no readable jobs CSV resource")
    where = pkg.shown(res["path"])
    scan = pkg.cell_scan(*_typed_fields(pkg, res))
    if scan is None or scan.error is not None:
        pkg.problems += 1
        ctx.note(f"the CSV cannot be parsed: {pkg.csv_error}", path=where,
                 expected="one cell per header column on every row")
        return
    header = scan.header
    names = [f["name"] for f in pkg.table_schema(res)["fields"]]
    for name in names:
        if name not in header:
            pkg.problems += 1
            ctx.note(f"column {name!r} of the Table Schema is missing from the header", path=where,
                     line=1, field=name, expected="the Table Schema's fields")
    for position, label in enumerate(header, 1):
        if label not in names:
            pkg.problems += 1
            ctx.note(f"column {position} {label!r} is not in the Table Schema", path=where, line=1,
                     field=label, value=label, expected="a field of the Table Schema")
        elif header.index(label) != position - 1:
            pkg.problems += 1
            ctx.note(f"column {label!r} appears twice in the header", path=where, line=1,
                     field=label, expected="distinct column names")


@rule("schema-type", "error", "schema",
      "Every CSV cell of the jobs resource has its field's Table Schema type (integer, number, "
      "boolean), checked as text; cells equal to a missing value are unknown, not wrong.",
      phase="package")
def schema_type(ctx: Context) -> None:
    pkg = _package(ctx)
    res = pkg.jobs_csv
    scan = pkg.cell_scan(*_typed_fields(pkg, res)) if res is not None else None
    if scan is None or scan.error is not None:
        raise NotApplicable("no parseable jobs CSV resource")
    schema = pkg.table_schema(res)
    where = pkg.shown(res["path"])
    for f in schema["fields"]:
        kind = f.get("type", "string")
        if kind not in TYPE_PATTERNS or f["name"] not in scan.bad:
            continue
        row_parts, value_parts = scan.bad[f["name"]]
        bad = np.concatenate(row_parts)
        pkg.problems += len(bad)

        def build(bad=bad, values=value_parts, name=f["name"], kind=kind):
            from swftools.validate.report import Finding
            rows = iter(bad.tolist())
            for part in values:
                for value in part.to_pylist():
                    yield Finding(where, next(rows) + 2, None, name, "schema-type", "error",
                                  f"{value!r} is not {_EXPECTED[kind]}", value, _EXPECTED[kind])

        ctx.report.extend("schema-type", "error", len(bad), build())


def _typed_fields(pkg: PackageInput, res: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The fields ``schema-type`` checks (name -> type) and the schema's missing values."""
    schema = pkg.table_schema(res)
    missing = cell_grammar.missing_values(schema)
    types = {f["name"]: f.get("type", "string") for f in schema["fields"]
             if f.get("type", "string") in TYPE_PATTERNS}
    return types, missing


def bad_cells(col: pa.Array, kind: str, missing: list[str]) -> np.ndarray:
    """Indices of the text cells of ``col`` that break the grammar of ``kind`` and are not one of
    the ``missing`` values (the check of ``schema-type``, whole column at once)."""
    ok = cell_grammar.valid_mask(kind, col)
    if missing:
        ok = pc.or_(ok, pc.is_in(col, value_set=pa.array(missing, pa.string())))
    return np.flatnonzero(~np.asarray(ok, bool))


def table_from_cells(pkg: PackageInput) -> tuple[pa.Table, np.ndarray] | None:
    """The job table built from the CSV text cells, unparseable cells as unknown (null).

    Used only when the package reader refuses the package, so that the semantic rules still run
    on everything that is readable.
    """
    cells = pkg.raw_cells()
    if cells is None:
        return None
    table, header = cells
    schema = jt.arrow_schema()
    columns = {}
    for name in schema.names:
        if name not in header:
            continue
        col = table.column(header.index(name)).combine_chunks()
        target = schema.field(name).type
        if pa.types.is_string(target):
            columns[name] = pc.if_else(pc.equal(col, ""), pa.scalar(None, pa.string()), col)
            continue
        kind = "integer" if pa.types.is_integer(target) else "number"
        ok = cell_grammar.valid_mask(kind, col)
        clean = pc.if_else(ok, col, pa.scalar(None, pa.string()))
        columns[name] = cell_grammar.parse(kind, clean, target)
    if "job_id" not in columns:
        return None
    ext = _section(pkg.descriptor, "swftools")
    metadata = dict(_section(_section(ext, "metadata"), JOBS))
    if ext.get("time_zone"):
        metadata["time_zone"] = ext["time_zone"]
    metadata["source_format"] = "package"
    keep = np.asarray(pc.is_valid(columns["job_id"]), bool)
    if not keep.all():  # the job table requires ids; rows without one are reported by schema-type
        mask = pa.array(keep)
        columns = {k: pc.filter(v, mask) for k, v in columns.items()}
    return jt.from_columns(columns, metadata), np.flatnonzero(keep).astype(np.int64) + 2
