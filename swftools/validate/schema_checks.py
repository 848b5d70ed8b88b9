"""Schema layer on the typed table: the Table Schema's constraints checked for every row.

The Table Schema is the package resource's own (when validating a data package) or
``schemas/jobs.schema.json``. Types of a typed table are guaranteed by the reader; the raw-cell
type checks of a package's CSV live in :mod:`swftools.validate.package_checks`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools.formats.swf.fields import FIELDS
from swftools.validate.context import Context
from swftools.validate.registry import NotApplicable, rule

# On SWF input these columns are checked in SWF terms (swf-negative-value, swf-status).
_SWF_COLUMNS = {f.column for f in FIELDS}


def _fields(ctx: Context, constraint: str) -> list[dict[str, Any]]:
    out = []
    for f in ctx.table_schema.get("fields", []):
        if f["name"] not in ctx.table.column_names:
            continue
        if ctx.is_swf and f["name"] in _SWF_COLUMNS and constraint != "required":
            continue
        if constraint in f.get("constraints", {}):
            out.append(f)
    return out


def _column(ctx: Context, name: str) -> pa.Array:
    return ctx.column(name)


@rule("schema-required", "error", "schema",
      "Fields the Table Schema marks required (and primary-key fields) have a value in every row.")
def schema_required(ctx: Context) -> None:
    if not ctx.n:
        raise NotApplicable("no jobs")
    names = {f["name"] for f in _fields(ctx, "required") if f["constraints"]["required"]}
    names |= {n for n in ctx.table_schema.get("primaryKey", []) if n in ctx.table.column_names}
    for name in sorted(names, key=ctx.table.column_names.index):
        missing = np.asarray(pc.is_null(_column(ctx, name)), bool)
        ctx.flag(missing, name, f"{name} is required but missing", expected="a value")


@rule("schema-enum", "error", "schema",
      "Values of fields with an enum constraint are among the allowed values (termcode 0-4, "
      "SWF status 0-5, queues when the schema lists them).")
def schema_enum(ctx: Context) -> None:
    fields = _fields(ctx, "enum")
    if not fields:
        raise NotApplicable("no field with an enum constraint")
    for f in fields:
        name, allowed = f["name"], f["constraints"]["enum"]
        col = _column(ctx, name)
        value_set = pa.array(allowed).cast(col.type) if allowed else pa.array([], col.type)
        inside = pc.is_in(col, value_set=value_set)
        bad = np.asarray(pc.and_(pc.is_valid(col), pc.invert(inside)).fill_null(False), bool)
        listed = ", ".join(str(a) for a in allowed)
        ctx.flag(bad, name, lambda i, c=col, n=name: f"{n} {c[i].as_py()!r} is not an allowed value",
                 value=lambda i, c=col: c[i].as_py(), expected=f"one of {listed}")


_BOUNDS = (("minimum", np.less, ">="), ("maximum", np.greater, "<="),
           ("exclusiveMinimum", np.less_equal, ">"), ("exclusiveMaximum", np.greater_equal, "<"))


@rule("schema-range", "error", "schema",
      "Numbers respect the Table Schema's minimum/maximum (and exclusive) bounds: no negative "
      "durations, counts or ids. On SWF input the SWF fields are checked by swf-negative-value.")
def schema_range(ctx: Context) -> None:
    checked = False
    for key, outside, sign in _BOUNDS:
        for f in _fields(ctx, key):
            checked = True
            name, bound = f["name"], f["constraints"][key]
            values, known = ctx.values(name)
            bad = known & outside(values, bound)
            ctx.flag(bad, name, lambda i, n=name, v=values, s=sign, b=bound: f"{n} {v[i]} is not {s} {b}",
                     value=values, expected=f"{sign} {bound}")
    if not checked:
        raise NotApplicable("no field with a bound")


@rule("schema-string", "error", "schema",
      "Strings respect the Table Schema's pattern, minLength and maxLength constraints.")
def schema_string(ctx: Context) -> None:
    checked = False
    for f in ctx.table_schema.get("fields", []):
        cons, name = f.get("constraints", {}), f["name"]
        if name not in ctx.table.column_names or not pa.types.is_string(ctx.table.column(name).type):
            continue
        col = _column(ctx, name)
        tests = []
        if "pattern" in cons:
            tests.append((pc.invert(pc.match_substring_regex(col, f"^(?:{cons['pattern']})$")),
                          f"matching {cons['pattern']}"))
        if "minLength" in cons:
            tests.append((pc.less(pc.utf8_length(col), cons["minLength"]),
                          f"at least {cons['minLength']} characters"))
        if "maxLength" in cons:
            tests.append((pc.greater(pc.utf8_length(col), cons["maxLength"]),
                          f"at most {cons['maxLength']} characters"))
        for bad, expected in tests:
            checked = True
            mask = np.asarray(bad.fill_null(False), bool)
            ctx.flag(mask, name, lambda i, c=col, n=name: f"{n} {c[i].as_py()!r} breaks its constraint",
                     value=lambda i, c=col: c[i].as_py(), expected=expected)
    if not checked:
        raise NotApplicable("no string constraint")


@rule("schema-unique", "error", "schema",
      "Fields with a unique constraint (and the schema's uniqueKeys) hold no repeated value "
      "(the primary key is checked by job-id-unique).")
def schema_unique(ctx: Context) -> None:
    keys = [[f["name"]] for f in ctx.table_schema.get("fields", [])
            if f.get("constraints", {}).get("unique") and f["name"] in ctx.table.column_names]
    keys += [list(k) for k in ctx.table_schema.get("uniqueKeys", [])
             if all(n in ctx.table.column_names for n in k)]
    if not keys:
        raise NotApplicable("no unique constraint")
    for names in keys:
        sub = ctx.table.select(names).append_column("__row", pa.array(np.arange(ctx.n)))
        valid = np.ones(ctx.n, bool)
        for n in names:  # unique keys ignore rows with a null in the key
            valid &= np.asarray(pc.is_valid(_column(ctx, n)), bool)
        grouped = sub.filter(pa.array(valid)).group_by(names, use_threads=False).aggregate(
            [("__row", "min"), ("__row", "count")])
        repeated = grouped.filter(pc.greater(grouped.column("__row_count"), 1))
        if not repeated.num_rows:
            continue
        firsts = set(repeated.column("__row_min").to_pylist())
        dup_keys = repeated.select(names)
        member = np.asarray(pc.is_in(
            pc.binary_join_element_wise(*[pc.cast(_column(ctx, n), pa.string()) for n in names], "\x1f")
            if len(names) > 1 else pc.cast(_column(ctx, names[0]), pa.string()),
            value_set=pc.binary_join_element_wise(
                *[pc.cast(dup_keys.column(n), pa.string()) for n in names], "\x1f")
            if len(names) > 1 else pc.cast(dup_keys.column(names[0]), pa.string())).fill_null(False), bool)
        rows = np.flatnonzero(member & valid)
        rows = np.array([r for r in rows.tolist() if r not in firsts], np.int64)
        label = "+".join(names)
        ctx.flag(rows, label, f"{label} repeats an earlier value", expected="unique values")
