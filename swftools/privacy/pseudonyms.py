"""Keyed, stable pseudonyms for user and group names, optional time shift, free-text removal.

Pseudonym construction (reproducible by any implementation)::

    digest    = HMAC-SHA256(key, namespace_utf8 + b"\\x00" + name_utf8)
    pseudonym = prefix + lowercase_hex(digest)[:16]

``namespace`` is ``"user"`` (prefix ``u``), ``"group"`` (``g``) or ``"host"`` (``h``); ``name`` is
the value exactly as recorded (no case folding, no trimming). ``key`` is the secret key's bytes:
a key file's content with leading and trailing ASCII whitespace removed, or the UTF-8 bytes of
``$SWFTOOLS_ANON_KEY`` likewise trimmed, at least 32 bytes from a random source
(``swftools.privacy.keys``). The same key therefore gives the same pseudonym in every release,
while without the key a dictionary of site user names cannot reverse them.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import numbers
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.atomic import atomic_file
from swftools.privacy import rawnames, scrub
from swftools.privacy.match import Term
from swftools.errors import InputError, UsageError
# The key (re-exported: callers import it from here): swftools.privacy.keys.
from swftools.privacy.keys import (DEFAULT_KEY_ENV, EPHEMERAL_WARNING, KEY_HINT,  # noqa: F401
                                   MIN_KEY_BYTES, load_key, new_key)

PSEUDONYM_HEX_DIGITS = 16
NAMESPACE_PREFIXES = {"user": "u", "group": "g", "host": "h"}
IDENTITY_COLUMNS = {"user": "user", "group": "group"}  # column -> namespace
TIME_COLUMNS = ("submit_time", "start_time", "finish_time")
WEEK_S = 7 * 24 * 3600
MAPPING_WARNING = (
    "WARNING: {path} maps raw user and group names to pseudonyms. It is PRIVATE: never publish "
    "it or put it inside an archive; anyone holding it can re-identify every user.")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def pseudonym(name: str, key: bytes, namespace: str) -> str:
    """The keyed pseudonym of ``name`` in ``namespace`` (``user``, ``group`` or ``host``)."""
    if namespace not in NAMESPACE_PREFIXES:
        raise ValueError(f"unknown namespace {namespace!r} (expected one of "
                         f"{', '.join(NAMESPACE_PREFIXES)})")
    message = namespace.encode() + b"\x00" + name.encode("utf-8", "surrogatepass")
    digest = hmac.new(key, message, hashlib.sha256).hexdigest()
    return NAMESPACE_PREFIXES[namespace] + digest[:PSEUDONYM_HEX_DIGITS]


@dataclass(frozen=True)
class MappingEntry:
    """One raw name and what replaced it (``dense_id`` only with dense numbering)."""

    namespace: str
    name: str
    pseudonym: str
    dense_id: int | None = None


@dataclass
class AnonymizeResult:
    """The anonymized table, the private raw -> pseudonym mapping and notes on what was done."""

    table: pa.Table
    mapping: list[MappingEntry]
    notes: list[str] = field(default_factory=list)
    raw_strings: dict[str, list[str]] = field(default_factory=dict)  # dropped hosts, job names

    def raw_names(self) -> dict[str, list[str]]:
        """Observed raw names by namespace (for the leak audit): the pseudonymized users, groups
        and hosts, and the host and job names the metadata held and anonymization dropped."""
        out: dict[str, list[str]] = {}
        for entry in self.mapping:
            out.setdefault(entry.namespace, []).append(entry.name)
        for kind, values in self.raw_strings.items():
            have = set(out.get(kind, []))
            out.setdefault(kind, []).extend(v for v in values if v not in have)
        return out


def _source_name(table: pa.Table) -> str:
    return str(jt.get_metadata(table).get("source_file") or "input table")


def _as_strings(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return column if pa.types.is_string(column.type) else pc.cast(column, pa.string())


def _replace_values(column: pa.ChunkedArray, old: list[str], new: list[str]) -> pa.ChunkedArray:
    """Vectorised lookup: each value of ``column`` (one of ``old``) -> the matching ``new``."""
    indices = pc.index_in(column, value_set=pa.array(old, pa.string()))
    return pc.take(pa.array(new, pa.string()), indices)


def _pseudonymize_column(column: pa.ChunkedArray, key: bytes, namespace: str,
                         source: str) -> tuple[pa.ChunkedArray, list[MappingEntry]]:
    column = _as_strings(column)
    names = sorted(v for v in pc.unique(column).to_pylist() if v is not None)
    pseudonyms = [pseudonym(n, key, namespace) for n in names]
    if len(set(pseudonyms)) != len(pseudonyms):
        seen: dict[str, int] = {}
        for p in pseudonyms:
            seen[p] = seen.get(p, 0) + 1
        clash = sorted(p for p, count in seen.items() if count > 1)
        raise InputError(source, f"pseudonym collision: {clash[0]} is shared by "
                         f"{seen[clash[0]]} different {namespace} names",
                         field=namespace, expected="distinct pseudonyms; use another key")
    entries = [MappingEntry(namespace, n, p) for n, p in zip(names, pseudonyms)]
    return _replace_values(column, names, pseudonyms), entries


def _first_appearance_order(table: pa.Table) -> pa.Array:
    """Row indices in submit order (submit_time, then job_id; unknown submit times last)."""
    keys = [(c, "ascending") for c in ("submit_time", "job_id") if c in table.column_names]
    if not keys:
        return pa.array(range(table.num_rows), pa.int64())
    return pc.sort_indices(table, sort_keys=keys)  # nulls sort last by default


def dense_numbering(table: pa.Table, columns: Iterable[str] = ("user", "group")
                    ) -> tuple[pa.Table, dict[str, dict[str, int]]]:
    """Replace each value of ``columns`` by 1..N in order of first appearance in submit order.

    Computed from the (pseudonymized) values alone, so it is reproducible from a published
    table; returns the new table and, per column, value -> number.
    """
    order = _first_appearance_order(table)
    numbering: dict[str, dict[str, int]] = {}
    for name in columns:
        if name not in table.column_names:
            continue
        column = _as_strings(table.column(name))
        numbers: dict[str, int] = {}
        for value in pc.take(column, order).to_pylist():
            if value is not None and value not in numbers:
                numbers[value] = len(numbers) + 1
        old = list(numbers)
        renumbered = _replace_values(column, old, [str(numbers[v]) for v in old])
        table = table.set_column(table.column_names.index(name), name, renumbered)
        numbering[name] = numbers
    return table, numbering


def _is_textual(dtype: pa.DataType) -> bool:
    if pa.types.is_dictionary(dtype):
        return _is_textual(dtype.value_type)
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_binary(dtype) \
            or pa.types.is_large_binary(dtype) or pa.types.is_string_view(dtype):
        return True
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) \
            or pa.types.is_fixed_size_list(dtype):
        return _is_textual(dtype.value_type)
    if pa.types.is_struct(dtype):
        return any(_is_textual(dtype.field(i).type) for i in range(dtype.num_fields))
    if pa.types.is_map(dtype):
        return _is_textual(dtype.key_type) or _is_textual(dtype.item_type)
    return False


def _shift_times(table: pa.Table, shift_s: int) -> pa.Table:
    for i, f in enumerate(table.schema):
        if f.name in TIME_COLUMNS:
            shifted = pc.add(table.column(i), pa.scalar(shift_s, f.type))
        elif pa.types.is_timestamp(f.type):
            unit_s = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[f.type.unit]
            shifted = pc.add(table.column(i), pa.scalar(shift_s * unit_s, pa.duration(f.type.unit)))
        else:
            continue
        table = table.set_column(i, f.name, shifted)
    return table


def anonymize(table: pa.Table, key: bytes, *, time_shift_weeks: int = 0,
              keep_columns: Iterable[str] = (), dense_ids: bool = False) -> AnonymizeResult:
    """Pseudonymize users and groups, drop free-text columns, optionally shift times by weeks.

    Canonical columns other than ``user``/``group`` are kept identical (times move by exactly
    ``time_shift_weeks`` weeks, which keeps weekday and time of day). Non-canonical columns that
    hold text (job names, paths, host names, ...) are dropped unless listed in ``keep_columns``.
    The metadata keeps only what ``swftools.privacy.scrub`` knows to be safe (no source file
    name, no skipped line's content, no free-text header; node names pseudonymized).
    Metadata records ``anonymization.time_shifted`` but never the amount.
    """
    if not isinstance(key, (bytes, bytearray)) or len(key) < MIN_KEY_BYTES:
        raise ValueError(f"key must be at least {MIN_KEY_BYTES} bytes")
    if not isinstance(time_shift_weeks, numbers.Integral) or isinstance(time_shift_weeks, bool):
        raise UsageError(f"time shift must be a whole number of weeks, not {time_shift_weeks!r}")
    source = _source_name(table)
    if "user" not in table.column_names:
        raise InputError(source, "no user column: cannot anonymize a table without users",
                         field="user", expected="a job table with a 'user' column")
    canonical = set(jt.column_names())
    keep = list(dict.fromkeys(keep_columns))
    droppable = [f.name for f in table.schema if f.name not in canonical and _is_textual(f.type)]
    for name in keep:
        if name in IDENTITY_COLUMNS:
            raise UsageError(f"--keep {name}: the {name} column is always pseudonymized")
        if name not in droppable:
            raise UsageError(f"--keep {name}: not a droppable text column of this table "
                             f"(droppable: {', '.join(droppable) or 'none'})")
    notes: list[str] = []
    dropped = [name for name in droppable if name not in keep]
    if dropped:
        table = table.drop_columns(dropped)
        notes.append(f"dropped free-text columns: {', '.join(dropped)}")
    for name in keep:
        notes.append(f"kept free-text column {name!r} as requested: audit it before publishing")

    mapping: list[MappingEntry] = []
    for column_name, namespace in IDENTITY_COLUMNS.items():
        if column_name not in table.column_names:
            continue
        new, entries = _pseudonymize_column(table.column(column_name), key, namespace, source)
        table = table.set_column(table.column_names.index(column_name), column_name, new)
        mapping.extend(entries)
    if dense_ids:
        table, numbering = dense_numbering(table)
        mapping = [MappingEntry(e.namespace, e.name, e.pseudonym,
                                numbering.get(e.namespace, {}).get(e.pseudonym)) for e in mapping]
    shift_s = int(time_shift_weeks) * WEEK_S
    if shift_s:
        table = _shift_times(table, shift_s)

    raw_meta = jt.get_metadata(table)
    found = rawnames.Collector()
    rawnames.from_metadata(raw_meta, found)  # hosts and jobs named by skipped lines, node lists
    raw_strings = {kind: values for kind, values in found.result().items()
                   if kind in ("host", "job")}
    terms = [Term(e.name, e.namespace) for e in mapping]
    terms += [Term(h, "host") for h in raw_strings.get("host", [])]
    meta, hosts = scrub.clean_metadata(raw_meta, shift_s, terms,
                                       lambda h: pseudonym(h, bytes(key), "host"), notes)
    mapping.extend(MappingEntry("host", h, pseudonym(h, bytes(key), "host"))
                   for h in sorted(set(hosts)))
    meta["anonymization"] = {
        "method": f"HMAC-SHA256, {PSEUDONYM_HEX_DIGITS} hex digits",
        "pseudonymized_columns": [c for c in IDENTITY_COLUMNS if c in table.column_names],
        "dense_ids": bool(dense_ids),
        "time_shifted": bool(shift_s),
        "dropped_columns": dropped,
        "kept_columns": keep,
    }
    return AnonymizeResult(jt.with_metadata(table, meta), mapping, notes, raw_strings)


def mapping_csv(mapping: Iterable[MappingEntry]) -> bytes:
    """The mapping as CSV bytes: ``namespace,name,pseudonym,dense_id`` sorted by namespace, name."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["namespace", "name", "pseudonym", "dense_id"])
    for e in sorted(mapping, key=lambda e: (e.namespace, e.name)):
        writer.writerow([e.namespace, e.name, e.pseudonym, "" if e.dense_id is None else e.dense_id])
    return buffer.getvalue().encode("utf-8")


def write_mapping(mapping: Iterable[MappingEntry], path: str | os.PathLike, *, force: bool = False,
                  warn: Callable[[str], None] = _stderr) -> Path:
    """Write the private mapping file atomically with mode 0600, and warn it must stay private."""
    target = Path(path)
    with atomic_file(target, force, mode=0o600) as tmp:
        tmp.write_bytes(mapping_csv(mapping))
    warn(MAPPING_WARNING.format(path=target))
    return target
