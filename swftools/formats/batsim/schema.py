"""Checking a workload against ``schemas/formats/batsim-workload.schema.json``, fast.

jsonschema takes about 100 us per job: a minute for a 450k-job workload. The workload schema uses
a small subset of JSON Schema (``type``, ``required``, ``properties``, ``additionalProperties``,
``items``, ``minimum``, ``exclusiveMinimum``, ``const``, ``enum``, ``anyOf``, ``if``/``then``),
so ``compile_schema`` turns it into one Python expression, read from the schema file (nothing is
restated here). A document the predicate accepts is valid; for one it refuses, jsonschema words
the error, on the document without its jobs and then on the first job the predicate refuses (so
locating an error stays fast too). A schema using other keywords is checked by jsonschema alone.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from swftools.resources import load_json

SCHEMA_FILE = "formats/batsim-workload.schema.json"
Predicate = Callable[[Any], bool]


_TYPES = {  # Python tests of the JSON types; V is the value's expression
    "string": "type(V) is str",
    # as jsonschema (and JSON Schema since draft 4): a float with no fraction is an integer
    "integer": "(type(V) is int or (type(V) is float and V.is_integer()))",
    "number": "type(V) in (int, float)",
    "object": "type(V) is dict",
    "array": "type(V) is list",
}
_ANNOTATIONS = {"description", "title", "$comment", "$schema", "then"}


class Unsupported(Exception):
    """The schema uses a keyword ``compile_schema`` does not know."""


def compile_schema(schema: dict[str, Any]) -> Predicate:
    """A predicate equal to validation against ``schema`` (the subset above), or Unsupported.

    The schema becomes one Python expression, compiled once (about 20x faster than nested
    closures); constants travel in a namespace, never as text."""
    consts: list[Any] = []
    source = _expr(schema, "v", 0, consts)
    return eval(f"lambda v: {source}", {"C": consts, "E": _equal})  # noqa: S307 (our own schema file)


def _equal(a: Any, b: Any) -> bool:
    """JSON equality as JSON Schema's ``const`` and ``enum`` mean it: 1 equals 1.0, but a boolean
    equals only a boolean, at any depth of arrays and objects."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


def _const(value: Any, consts: list[Any]) -> str:
    consts.append(value)
    return f"C[{len(consts) - 1}]"


def _expr(schema: dict[str, Any], var: str, depth: int, consts: list[Any]) -> str:
    parts = [_keyword(key, arg, schema, var, depth, consts)
             for key, arg in schema.items() if key not in _ANNOTATIONS]
    return "(" + " and ".join(parts or ["True"]) + ")"


def _keyword(key: str, arg: Any, schema: dict[str, Any], var: str, depth: int,
             consts: list[Any]) -> str:
    number = _TYPES["number"].replace("V", var)
    if key == "type":
        kinds = arg if isinstance(arg, list) else [arg]
        if not set(kinds) <= set(_TYPES):
            raise Unsupported(kinds)
        return "(" + " or ".join(_TYPES[k].replace("V", var) for k in kinds) + ")"
    if key in ("minimum", "exclusiveMinimum"):
        op = ">=" if key == "minimum" else ">"
        return f"(not {number} or {var} {op} {_const(arg, consts)})"
    if key == "const":
        if type(arg) in (int, float, str):  # the common case, inline: no call per value
            return f"({var} == {_const(arg, consts)} and type({var}) is not bool)"
        return f"E({var}, {_const(arg, consts)})"
    if key == "enum":
        item = f"e{depth}"
        return f"any(E({var}, {item}) for {item} in {_const(list(arg), consts)})"
    if key == "anyOf":
        return "(" + " or ".join(_expr(s, var, depth, consts) for s in arg) + ")"
    if key == "if":
        then = _expr(schema.get("then", {}), var, depth, consts)
        return f"(not {_expr(arg, var, depth, consts)} or {then})"
    is_dict = f"type({var}) is dict"
    if key == "required":
        return f"(not {is_dict} or all(k in {var} for k in {_const(list(arg), consts)}))"
    if key == "properties":
        checks = []
        for name, sub in arg.items():
            k = _const(name, consts)
            checks.append(f"({k} not in {var} or {_expr(sub, f'{var}[{k}]', depth, consts)})")
        return f"(not {is_dict} or (" + " and ".join(checks or ["True"]) + "))"
    x = f"x{depth}"
    if key == "additionalProperties":
        named = _const(set(schema.get("properties", {})), consts)
        each = _expr(arg, x, depth + 1, consts)
        return (f"(not {is_dict} or all({each} for k{depth}, {x} in {var}.items() "
                f"if k{depth} not in {named}))")
    if key == "items":
        return (f"(type({var}) is not list or all({_expr(arg, x, depth + 1, consts)} "
                f"for {x} in {var}))")
    raise Unsupported(key)


@lru_cache(maxsize=1)
def _compiled() -> tuple[Any, Predicate | None, Predicate | None]:
    import jsonschema

    schema = load_json(SCHEMA_FILE)
    try:
        whole, item = compile_schema(schema), compile_schema(schema["properties"]["jobs"]["items"])
    except Unsupported:
        whole = item = None
    return jsonschema.Draft202012Validator(schema), whole, item


def _first(errors: Any) -> Any:
    return min(errors, key=lambda e: [str(p) for p in e.path], default=None)


def first_error(doc: Any) -> Any:
    """The first jsonschema error of ``doc``, or None when it is a valid workload: the document's
    own (its members but the jobs) by path, else the first refused job's (in file order) by path."""
    validator, whole, item = _compiled()
    if whole is not None and whole(doc):
        return None
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if item is None or not isinstance(jobs, list):
        return _first(validator.iter_errors(doc))
    err = _first(validator.iter_errors({**doc, "jobs": []}))
    if err is not None:
        return err
    for k, job in enumerate(jobs):
        if not item(job):
            err = _first(validator.iter_errors({**doc, "jobs": [job]}))
            if err is not None:
                path = list(err.path)
                err.path.clear()
                err.path.extend(["jobs", k, *path[2:]])
                return err
    return _first(validator.iter_errors(doc))
