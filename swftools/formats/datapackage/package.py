"""Frictionless Data Package (v2) writer and reader for the job table and tables joined to it.

A package written by :func:`write` (paths relative to the package directory)::

    datapackage.json            descriptor: v2 profile, licence, sources, the ``swftools`` extension
    data/jobs.csv.gz            resource ``jobs``          (gzip CSV, UTF-8, LF, nulls empty)
    data/jobs.parquet           resource ``jobs-parquet``  (the same rows)
    schemas/jobs.json           Table Schema of ``jobs`` (shared file, not embedded)
    schemas/jobs-parquet.json   the same, plus ``nan`` as a missing value (see _parquet_schema)

:func:`add_resource` attaches another table the same way (``job_telemetry`` with a foreign key
to ``jobs``). The ``swftools`` property (``schemas/datapackage.profile.json``) holds the site's
time zone (stated once), each table's metadata so that :func:`read` restores the table exactly,
and the size and SHA-256 of every file (frictionless cannot check Parquet checksums).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema
import pyarrow as pa
import pyarrow.compute as pc

from swftools import progress as progress_mod
from swftools import table as jt
from swftools.atomic import atomic_dir
from swftools.fileio import file_digest, write_parquet
from swftools.formats.datapackage.files import (empty_string_counts, read_csv_gz, read_parquet,
                                                write_csv_gz)
from swftools.errors import (NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError, UsageError, count,
                             json_line, plural)
from swftools.metadata import TableMetadata
from swftools.resources import load_json
from swftools.site import Site, resolve_site

DESCRIPTOR = "datapackage.json"
JOBS = "jobs"
PARQUET_SUFFIX = "-parquet"
PARQUET_MEDIATYPE = "application/vnd.apache.parquet"
TABLE_SCHEMA_PROFILE = "https://datapackage.org/profiles/2.0/tableschema.json"
EXTENSION = "swftools"
EXTENSION_VERSION = 1
# Caller-given top-level properties are placed in this order, before ``resources``.
_PROPERTY_ORDER = ("name", "id", "title", "description", "version", "created", "homepage",
                   "keywords", "contributors", "licenses", "sources")
_OURS = ("$schema", "resources", EXTENSION)
_RESOURCE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_FORMAT_LABELS = {"swf": "Standard Workload Format", "nqsii": "NEC NQSII job log",
                  "package": "Frictionless data package"}


class ParquetChecksumWarning(UserWarning):
    """A package's Parquet file does not match its recorded checksum; the CSV was read instead."""


def _profile() -> dict[str, Any]:
    return load_json("datapackage.profile.json")


def _default(*keys: str) -> Any:
    node = _profile()
    for key in keys:
        node = node[key]
    return copy.deepcopy(node["default"])


def package_dir(path: str | os.PathLike) -> Path:
    """The package directory for ``path`` (a directory or a path ending in ``datapackage.json``)."""
    p = Path(path)
    return p.parent if p.name == DESCRIPTOR else p


# ---------------------------------------------------------------------------------------- write

def write(table: pa.Table, path: str | os.PathLike, *, site: Site | str | None = None,
          force: bool = False, properties: dict[str, Any] | None = None) -> list[str]:
    """Write the job table as a data package; returns the loss report (normally empty).

    ``site`` (a Site, preset name or site file; default: the table's ``site`` metadata when it
    names a preset) gives the queue enum and a time zone the table lacks. ``properties`` adds
    descriptor properties (``name``, ``title``, ``version``, ``created``, ``licenses``, ...).
    The package is built beside the target and renamed into place. An existing empty directory
    is used; any other existing target is replaced only with ``force``, and only if swftools
    wrote it (``swftools.atomic``: its marker, or an earlier version's swftools descriptor).
    """
    table = jt.conform(table)
    metadata = _normalised(jt.get_metadata(table))
    site_obj = resolve_site(site, metadata)
    time_zone = metadata.pop("time_zone", None) or (site_obj.time_zone if site_obj else None)
    props = _check_properties(properties)
    target = package_dir(path)
    with atomic_dir(target, force, use_empty=True) as tmp:
        resources, files = _write_table(tmp, JOBS, table, _jobs_schema(table, site_obj),
                                        title="Jobs", description=_jobs_description(time_zone))
        extension: dict[str, Any] = {"extension_version": EXTENSION_VERSION}
        if time_zone:
            extension["time_zone"] = time_zone
        extension["metadata"] = {JOBS: metadata}
        extension["files"] = files
        _write_json(tmp / DESCRIPTOR, _package_descriptor(metadata, props, resources, extension))
    return _losses(table, f"data/{JOBS}.csv.gz")


def _write_table(root: Path, name: str, table: pa.Table, schema: dict[str, Any], *,
                 title: str, description: str) -> tuple[list[dict], dict[str, dict]]:
    """Write ``name``'s CSV, Parquet and schema files under ``root``; return resources, file records."""
    (root / "data").mkdir(exist_ok=True)
    (root / "schemas").mkdir(exist_ok=True)
    csv_rel, parquet_rel = f"data/{name}.csv.gz", f"data/{name}.parquet"
    schema_rel, parquet_schema_rel = f"schemas/{name}.json", f"schemas/{name}{PARQUET_SUFFIX}.json"
    # The Parquet file is written in a second thread (pyarrow releases the GIL) while the CSV is
    # formatted and compressed: the CSV's deflate, one stream for the same bytes, is the longer.
    with ThreadPoolExecutor(1, thread_name_prefix="swftools-parquet") as pool:
        parquet = pool.submit(write_parquet, table, root / parquet_rel)
        write_csv_gz(table, root / csv_rel)
    parquet.result()
    _write_json(root / schema_rel, schema)
    _write_json(root / parquet_schema_rel, _parquet_schema(schema))
    files = {rel: {"bytes": (root / rel).stat().st_size, "sha256": file_digest(root / rel)}
             for rel in sorted((csv_rel, parquet_rel, schema_rel, parquet_schema_rel))}
    csv_resource = {
        "name": name, "type": "table", "title": title, "description": description,
        "path": csv_rel, "format": "csv", "mediatype": "text/csv", "encoding": "utf-8",
        "compression": "gz", "bytes": files[csv_rel]["bytes"],
        "hash": f"sha256:{files[csv_rel]['sha256']}",
        "dialect": _default("$defs", "csvDialect"), "schema": schema_rel,
    }
    # No ``bytes`` here: frictionless reads no byte stream for Parquet and reports a false
    # byte-count error. Its checksum is in the swftools extension instead.
    parquet_resource = {
        "name": f"{name}{PARQUET_SUFFIX}", "type": "table", "title": f"{title} (Parquet)",
        "description": f"The same rows as {csv_rel}, as Parquet.",
        "path": parquet_rel, "format": "parquet", "mediatype": PARQUET_MEDIATYPE,
        "schema": parquet_schema_rel,
    }
    return [csv_resource, parquet_resource], files


def _parquet_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The Table Schema for a Parquet twin: frictionless reads Parquet through pandas, which turns
    a null integer into NaN; declaring ``nan`` missing lets nulls validate as nulls."""
    twin = copy.deepcopy(schema)
    missing = list(twin.get("missingValues", [""]))
    twin["missingValues"] = missing + ["nan"] if "nan" not in missing else missing
    return twin


def _jobs_schema(table: pa.Table, site: Site | None) -> dict[str, Any]:
    """The job Table Schema with this package's queue enum (site names or observed values)."""
    schema = jt.table_schema()
    schema.pop("$comment", None)
    observed = sorted(v for v in pc.unique(table.column("queue")).to_pylist() if v is not None)
    if site is not None and set(observed) <= {q.name for q in site.queues}:
        queue_enum = [q.name for q in sorted(site.queues, key=lambda q: q.number)]
    else:
        queue_enum = observed
    for field in schema["fields"]:
        if field["name"] == "queue" and queue_enum:
            field["constraints"] = {**field.get("constraints", {}), "enum": queue_enum}
    return {"$schema": TABLE_SCHEMA_PROFILE, **schema}


def _jobs_description(time_zone: str | None) -> str:
    text = ("One row per job (the swftools job table). Times are UTC epoch seconds, durations "
            "seconds; an empty cell means unknown (SWF -1).")
    if time_zone:
        text += " The site's local time zone is stated in swftools.time_zone."
    return text


def _package_descriptor(metadata: dict[str, Any], props: dict[str, Any],
                        resources: list[dict], extension: dict[str, Any]) -> dict[str, Any]:
    source_file = metadata.get("source_file")
    defaults: dict[str, Any] = {
        "name": _slug(source_file) if source_file else JOBS,
        "title": f"Job trace converted from {source_file}" if source_file else "Job trace",
        "licenses": _default("properties", "licenses"),
    }
    if source_file:
        label = _FORMAT_LABELS.get(metadata.get("source_format", ""), "")
        defaults["sources"] = [{"title": f"{source_file} ({label})" if label else source_file}]
    merged = {**defaults, **props}
    descriptor: dict[str, Any] = {"$schema": _default("properties", "$schema")}
    for key in _PROPERTY_ORDER:
        if key in merged:
            descriptor[key] = merged[key]
    for key in sorted(set(merged) - set(_PROPERTY_ORDER)):
        descriptor[key] = merged[key]
    descriptor["resources"] = resources
    descriptor[EXTENSION] = extension
    return descriptor


def _slug(source_file: str) -> str:
    stem = source_file.lower()
    for suffix in (".gz", ".swf", ".csv", ".log", ".txt", ".nqsii"):
        stem = stem.removesuffix(suffix)
    return re.sub(r"[^a-z0-9._-]+", "-", stem).strip("-._") or JOBS


def _check_properties(properties: dict[str, Any] | None) -> dict[str, Any]:
    props = _normalised(properties or {})
    clash = sorted(set(props) & set(_OURS))
    if clash:
        raise UsageError(f"descriptor property {clash[0]!r} is written by swftools; "
                         "it cannot be given")
    return props


def _losses(table: pa.Table, csv_rel: str) -> list[str]:
    return [f"{name}: {count(n, 'empty string')} {plural(n, 'is', 'are')} read as missing from "
            f"{csv_rel} by frictionless "
            "and pandas (swftools and the Parquet resource keep them)"
            for name, n in empty_string_counts(table).items()]


def _normalised(value: Any) -> Any:
    """A JSON-clean deep copy with sorted object keys (stable bytes whatever the input order)."""
    return json.loads(json.dumps(value, sort_keys=True, ensure_ascii=False))


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------- add_resource

def add_resource(path: str | os.PathLike, name: str, table: pa.Table, schema: dict[str, Any], *,
                 foreign_keys: list[dict[str, Any]] | None = None, force: bool = False,
                 title: str | None = None, description: str | None = None) -> list[str]:
    """Add ``table`` to an existing package as ``name`` (CSV.gz) and ``name-parquet``.

    ``schema`` is its Table Schema (fields in the table's column order; integer, number, string,
    boolean). ``foreign_keys`` (Table Schema form) are added to it and checked: every key must
    exist in the referenced resource. The table's metadata is kept and restored by
    ``read(path, resource=name)``. An existing resource of that name is replaced only with
    ``force``. The package is rebuilt beside itself and swapped in atomically.
    Returns the loss report.
    """
    root = package_dir(path)
    desc = descriptor(root)
    names = [r["name"] for r in desc["resources"]]
    if not _RESOURCE_NAME.fullmatch(name) or name.endswith(PARQUET_SUFFIX) or name == JOBS:
        raise UsageError(f"resource name {name!r}: use lowercase a-z, 0-9, '.', '_', '-', "
                         f"not 'jobs' and not ending in {PARQUET_SUFFIX!r}")
    replaced = {name, f"{name}{PARQUET_SUFFIX}"} & set(names)
    if replaced and not force:
        raise UsageError(f"{root}: resource {name!r} already exists (use --force to replace it)")
    schema = copy.deepcopy(schema)
    schema.pop("$comment", None)
    for fk in foreign_keys or []:
        if fk not in schema.setdefault("foreignKeys", []):
            schema["foreignKeys"].append(copy.deepcopy(fk))
    arrow_schema = jt.arrow_schema_of(schema)
    if table.column_names != arrow_schema.names:
        raise UsageError(f"resource {name!r}: table columns {table.column_names} differ from "
                         f"the schema fields {arrow_schema.names}")
    try:
        typed = pa.Table.from_arrays([table.column(n).cast(arrow_schema.field(n).type)
                                      for n in arrow_schema.names], schema=arrow_schema)
    except pa.ArrowException as exc:
        raise UsageError(f"resource {name!r}: a column does not fit its schema type: {exc}") from None
    metadata = _normalised(jt.get_metadata(table))
    typed = jt.with_metadata(typed, metadata)
    _check_foreign_keys(root, desc, name, typed, schema.get("foreignKeys", []))

    old = [r for r in desc["resources"] if r["name"] in replaced]
    dropped = {r.get("path") for r in old} | {r.get("schema") for r in old}
    extension = desc.setdefault(EXTENSION, {"extension_version": EXTENSION_VERSION,
                                            "metadata": {}, "files": {}})
    with atomic_dir(root, rewrite=True) as tmp:
        _link_tree(root, tmp, skip={DESCRIPTOR, *(d for d in dropped if isinstance(d, str))})
        resources, files = _write_table(tmp, name, typed, schema,
                                        title=title or name.replace("_", " ").capitalize(),
                                        description=description or f"Table {name}.")
        kept = [r for r in desc["resources"] if r["name"] not in replaced]
        desc["resources"] = kept + resources
        extension["metadata"][name] = metadata
        old_files = {k: v for k, v in extension["files"].items() if k not in dropped}
        extension["files"] = dict(sorted({**old_files, **files}.items()))
        _write_json(tmp / DESCRIPTOR, desc)
    return _losses(typed, f"data/{name}.csv.gz")


def _check_foreign_keys(root: Path, desc: dict[str, Any], name: str, table: pa.Table,
                        foreign_keys: list[dict[str, Any]]) -> None:
    for fk in foreign_keys:
        fields = [fk["fields"]] if isinstance(fk["fields"], str) else list(fk["fields"])
        ref = fk.get("reference", {})
        ref_name = ref.get("resource") or name
        ref_fields = [ref["fields"]] if isinstance(ref.get("fields"), str) else list(ref.get("fields", []))
        if len(fields) != 1 or len(ref_fields) != 1:
            raise UsageError(f"resource {name!r}: only single-field foreign keys are supported")
        if ref_name != name and ref_name not in [r["name"] for r in desc["resources"]]:
            raise UsageError(f"resource {name!r}: foreign key refers to missing resource "
                             f"{ref_name!r}")
        target = table if ref_name == name else read(root, resource=ref_name)
        if ref_fields[0] not in target.column_names:
            raise UsageError(f"resource {name!r}: resource {ref_name!r} has no field "
                             f"{ref_fields[0]!r}")
        values = table.column(fields[0])
        orphan = pc.invert(pc.is_in(values, value_set=target.column(ref_fields[0]).combine_chunks()))
        orphan = pc.and_(orphan, pc.is_valid(values))
        count = pc.sum(orphan).as_py() or 0
        if count:
            first = values.filter(orphan)[0].as_py()
            raise InputError(str(root), f"resource {name!r}: {count} {plural(count, 'row')} whose "
                             f"{fields[0]} is "
                             f"not in resource {ref_name!r} (first: {first!r})",
                             field=fields[0], value=str(first),
                             expected=f"a {ref_fields[0]} of resource {ref_name!r}")


def _link_tree(src: Path, dst: Path, skip: set[str]) -> None:
    """Hard-link (or copy) every file of ``src`` into ``dst`` except the relative paths in ``skip``."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src).as_posix()
        if rel in skip or not path.is_file():
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, dst / rel)
        except OSError:
            shutil.copy2(path, dst / rel)


# ----------------------------------------------------------------------------------------- read

def descriptor(path: str | os.PathLike) -> dict[str, Any]:
    """Load and check a package descriptor (directory or ``datapackage.json``).

    Raises InputError for a missing file, bad JSON (with its line), a descriptor that breaks
    ``schemas/datapackage.profile.json``, and resource paths that are absolute, climb out with
    ``..`` or are URLs.
    """
    root = package_dir(path)
    desc_path = root / DESCRIPTOR
    try:
        text = desc_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(desc_path), "no such file",
                         expected="a data package directory holding datapackage.json") from None
    except UnicodeDecodeError:
        raise InputError(str(desc_path), "not UTF-8 text") from None
    try:
        desc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(desc_path), f"not valid JSON: {exc.msg} (column {exc.colno})",
                         line=exc.lineno) from None
    if not isinstance(desc, dict):
        raise InputError(str(desc_path), "not a data package descriptor",
                         expected="a JSON object with 'resources'")
    errors = sorted(jsonschema.Draft202012Validator(_profile()).iter_errors(desc),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        raise InputError(str(desc_path), f"{where}: {errors[0].message}",
                         expected="a descriptor following schemas/datapackage.profile.json")
    for r, resource in enumerate(desc["resources"]):
        for key in ("path", "schema", "dialect"):
            if isinstance(resource.get(key), str):
                _check_relative(desc_path, text, resource["name"], key, resource[key],
                                ["resources", r, key])
        if isinstance(resource.get("path"), list):
            for i, part in enumerate(resource["path"]):
                _check_relative(desc_path, text, resource["name"], "path", str(part),
                                ["resources", r, "path", i])
    return desc


def _check_relative(desc_path: Path, text: str, name: str, key: str, value: str,
                    where: list[str | int]) -> None:
    if key != "path" and _URL.match(value):
        return  # a remote schema or dialect is legal; read() refuses it only when it needs it
    problem = unsafe_path(value)
    if problem:
        raise InputError(str(desc_path), f"resource {name!r}: {key} {value!r} {problem}",
                         line=json_line(text, where), expected="a relative path inside the package")


def unsafe_path(value: str) -> str | None:
    """Why a path in a descriptor is unsafe (a URL, absolute, climbing out), or None; the one
    rule of ``read`` and of validate's ``package-descriptor``."""
    if _URL.match(value):
        return "is a URL (remote data is not supported)"
    if PurePosixPath(value).is_absolute() or re.match(r"[A-Za-z]:[\\/]|\\", value):
        return "is an absolute path"
    if ".." in re.split(r"[\\/]", value):
        return "climbs out of the package with '..'"
    return None


def read(path: str | os.PathLike, *, site: Site | str | None = None, progress: bool = False,
         resource: str = JOBS, allow_empty: bool = False) -> pa.Table:
    """Read a table from a data package (directory or ``datapackage.json``).

    The Parquet twin (``<resource>-parquet``) is read when its recorded SHA-256 matches,
    else the CSV (its declared hash and size checked). ``resource="jobs"`` gives the canonical
    job table with the metadata it was written with. ``site`` is accepted for the common reader
    signature; a package states its own site and time zone. A ``jobs`` resource without rows
    is an error unless ``allow_empty``.
    """
    del site
    root = package_dir(path)
    desc = descriptor(root)
    desc_path = root / DESCRIPTOR
    by_name = {r["name"]: r for r in desc["resources"]}
    if resource not in by_name:
        raise InputError(str(desc_path), f"no resource named {resource!r}",
                         expected=f"one of: {', '.join(by_name)}")
    res = by_name[resource]
    base = resource.removesuffix(PARQUET_SUFFIX) if res.get("format") == "parquet" else resource
    extension = desc.get(EXTENSION, {})
    recorded = extension.get("files", {})
    twin = by_name.get(f"{resource}{PARQUET_SUFFIX}")
    with progress_mod.bar(f"reading {resource}", None, progress, unit="bytes") as advance:
        if res.get("format") == "parquet":
            table = _read_parquet_resource(root, desc_path, res, recorded, base, advance,
                                           strict=True)
        else:
            table = None
            if twin is not None and twin.get("format") == "parquet":
                table = _read_parquet_resource(root, desc_path, twin, recorded, base, advance,
                                               strict=False)
            if table is None:
                table = _read_csv_resource(root, desc_path, res, recorded, base, advance)
    if base == JOBS and table.num_rows == 0 and not allow_empty:
        shown = res.get("path") if isinstance(res.get("path"), str) else DESCRIPTOR
        if res.get("format") == "parquet":  # no header line: the file has no rows
            raise InputError(str(root / shown), "no job rows: the Parquet table has none",
                             expected="one job per row, or --allow-empty for an empty trace")
        raise InputError(str(root / shown), NO_JOB_ROWS, line=1, expected=NO_JOB_ROWS_EXPECTED)
    metadata = dict(extension.get("metadata", {}).get(base, {}))
    if base == JOBS:
        if extension.get("time_zone"):
            metadata["time_zone"] = extension["time_zone"]
        typed = TableMetadata.from_dict(metadata, source=str(desc_path))  # checked on read
        return jt.from_columns({n: table.column(n) for n in table.column_names}, typed)
    return jt.with_metadata(table, metadata)


def _expected_schema(root: Path, desc_path: Path, res: dict[str, Any], base: str) -> dict[str, Any]:
    """The Table Schema to read with: canonical for ``jobs`` (without the optional columns
    added since the package was written: they read as unknown), else the resource's own."""
    if base == JOBS:
        return _declared_jobs_schema(root, res)
    schema = res.get("schema")
    if schema is None:
        raise InputError(str(desc_path), f"resource {res['name']!r} has no Table Schema")
    if isinstance(schema, dict):
        return schema
    if _URL.match(schema):
        raise InputError(str(desc_path), f"resource {res['name']!r}: remote schema {schema!r} "
                         "is not supported", expected="a schema inside the package")
    schema_path = root / schema
    try:
        return json.loads(schema_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(schema_path), f"resource {res['name']!r}: schema file not found") from None
    except json.JSONDecodeError as exc:
        raise InputError(str(schema_path), f"not valid JSON: {exc.msg} (column {exc.colno})",
                         line=exc.lineno) from None


def _declared_jobs_schema(root: Path, res: dict[str, Any]) -> dict[str, Any]:
    """The canonical job Table Schema, less the columns a package written before they existed
    does not declare (its own schema lists canonical columns only, and the ones it lacks are
    optional); the canonical schema otherwise (the read then names what is wrong)."""
    canonical = jt.table_schema()
    schema = res.get("schema")
    try:
        own = schema if isinstance(schema, dict) else (
            json.loads((root / schema).read_text(encoding="utf-8"))
            if isinstance(schema, str) and not _URL.match(schema) else None)
        declared = [f["name"] for f in own["fields"]] if own else None
    except (OSError, ValueError, KeyError, TypeError):
        declared = None
    names = [f["name"] for f in canonical["fields"]]
    if not declared or declared == names or set(declared) - set(names):
        return canonical
    lacking = [f for f in canonical["fields"] if f["name"] not in declared]
    if any(jt.is_required(f, canonical) for f in lacking):
        return canonical
    return dict(canonical, fields=[f for f in canonical["fields"] if f["name"] in declared])


def _data_path(root: Path, desc_path: Path, res: dict[str, Any]) -> Path:
    rel = res.get("path")
    if not isinstance(rel, str):
        kind = "a list of files" if isinstance(rel, list) else "inline data or no path"
        raise InputError(str(desc_path), f"resource {res['name']!r} has {kind}",
                         expected="one file path")
    file_path = root / rel
    if not file_path.is_file():
        raise InputError(str(file_path), f"resource {res['name']!r}: file not found")
    return file_path


def _read_parquet_resource(root, desc_path, res, recorded, base, advance, *, strict):
    """Read a Parquet resource if present with a known, matching checksum (``strict``: must be)."""
    if not strict and not (isinstance(res.get("path"), str) and (root / res["path"]).is_file()):
        return None
    file_path = _data_path(root, desc_path, res)
    declared = _declared_digests(res, recorded.get(res["path"]))
    if not declared and not strict:
        return None
    for algorithm, expected in declared:
        actual = file_digest(file_path, algorithm, advance)
        if actual != expected:
            if strict:
                raise _hash_error(file_path, algorithm, actual, expected)
            warnings.warn(f"{file_path}: {algorithm} {actual} differs from the recorded "
                          f"{expected}; reading the CSV resource instead", ParquetChecksumWarning,
                          stacklevel=3)
            return None
    schema = _expected_schema(root, desc_path, res, base)
    return read_parquet(file_path, jt.arrow_schema_of(schema))


def _read_csv_resource(root, desc_path, res, recorded, base, advance) -> pa.Table:
    file_path = _data_path(root, desc_path, res)
    if res.get("format", "csv") != "csv":
        raise InputError(str(desc_path), f"resource {res['name']!r}: format "
                         f"{res.get('format')!r} is not supported", expected="csv or parquet")
    if "bytes" in res and res["bytes"] != file_path.stat().st_size:
        raise InputError(str(file_path), f"size {file_path.stat().st_size} bytes differs from "
                         f"the {res['bytes']} bytes declared in {DESCRIPTOR}")
    for algorithm, expected in _declared_digests(res, recorded.get(res["path"])):
        actual = file_digest(file_path, algorithm, advance)
        if actual != expected:
            raise _hash_error(file_path, algorithm, actual, expected)
    compressed = res.get("compression") == "gz" or file_path.name.endswith(".gz")
    return read_csv_gz(file_path, _expected_schema(root, desc_path, res, base), compressed)


def _declared_digests(res: dict[str, Any], record: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(algorithm, lowercase hex) pairs to check: the resource's ``hash``, else our record."""
    digests = []
    declared = res.get("hash")
    if isinstance(declared, str) and declared:
        algorithm, _, hexdigest = declared.rpartition(":")
        algorithm = algorithm.lower() or "md5"
        if algorithm in ("md5", "sha1", "sha256", "sha512"):
            digests.append((algorithm, hexdigest.lower()))
    if not digests and record:
        digests.append(("sha256", record["sha256"]))
    return digests


def _hash_error(file_path: Path, algorithm: str, actual: str, expected: str) -> InputError:
    return InputError(str(file_path), f"{algorithm} checksum mismatch: the file has {actual}, "
                      f"{DESCRIPTOR} declares {expected} (changed or damaged file)")
