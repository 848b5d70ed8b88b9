"""The job trace CSV of the Tiresias GPU-cluster simulator, written and read back.

Matched to the loader of SymbioticLab/Tiresias ``simulator/`` at commit
b0ef8449aaa1ad1a61b922de3ab65fd87a3dcf2e: ``run_sim.py`` ``parse_job_file`` reads the file with
``csv.DictReader`` (',' for ``*.csv``), and ``jobs.py`` ``_TFJobs.add_job`` turns every all-digit
value into an int, ``duration`` into ``int(float(duration))``, sorts the jobs by ``submit_time``
and takes ``model_name`` through ``models.get_model`` (an unknown name becomes inception3). The
columns, their order and meaning are in ``schemas/formats/tiresias-jobs.schema.json``.

Jobs are written in submit order, ties in the table's row order (``swftools.formats.order``).
Mapping: ``job_id`` = job_id, ``num_gpu`` = gpus, ``submit_time`` = submit_time minus the first
submission (the simulator's clock starts at 0, and negative or non-digit values would stay
strings), ``duration`` = walltime_s (the recorded run time), ``model_name`` = the ``model_name``
option, else a model column beside the job table (``MODEL_COLUMNS``), else the placeholder
``unknown`` (the job table itself holds no model), ``iterations`` and
``interval`` empty (unknown; the simulator does not use them).
"""

from __future__ import annotations

import csv
import io
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.atomic import atomic_file
from swftools.errors import NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError, UsageError
from swftools.resources import load_json
from swftools.formats.inputs import read_text
from swftools.formats.order import in_submit_order

SCHEMA_FILE = "formats/tiresias-jobs.schema.json"
PLACEHOLDER_MODEL = "unknown"
# Columns beside the job table that name a job's model, first found wins: the simulator's own
# name, then the application-class column of ``swftools.whatif.sensitivity`` (DEFAULT_CLASS_COLUMN).
MODEL_COLUMNS = ("model_name", "app_class")
CARRIES = frozenset({"job_id", "gpus", "walltime_s"})


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The Table Schema of the simulator's CSV (``schemas/formats/tiresias-jobs.schema.json``)."""
    return load_json(SCHEMA_FILE)


def columns() -> list[str]:
    """The CSV columns in the simulator's order."""
    return [f["name"] for f in schema()["fields"]]


def _jobs(n: int) -> str:
    return f"{n} job" if n == 1 else f"{n} jobs"


def render(table: pa.Table, *, model_name: str | None = None) -> tuple[str, list[str]]:
    """The CSV text of ``table`` and its loss report."""
    model = model_name or PLACEHOLDER_MODEL
    _check_model(model)
    col = table.column
    tests = {"submit": pc.is_null(col("submit_time")), "run": pc.is_null(col("walltime_s")),
             "gpus": pc.or_kleene(pc.is_null(col("gpus")), pc.less_equal(col("gpus"), 0))}
    left = pa.array(np.ones(table.num_rows, dtype=bool))
    skipped = {}
    for reason, test in tests.items():
        hit = pc.and_(left, pc.fill_null(test, False))
        skipped[reason] = pc.sum(pc.cast(hit, pa.int64())).as_py() or 0
        left = pc.and_not(left, hit)
    kept = table.filter(left)
    kept = in_submit_order(kept)
    origin = pc.min(kept.column("submit_time")).as_py() or 0
    why = {"submit": "submit_time unknown",
           "run": "never ran (walltime_s unknown): the simulator needs a duration",
           "gpus": "requesting no GPUs or an unknown number (gpus): the simulator places "
                   "num_gpu >= 1"}
    losses = [f"{_jobs(n)} skipped: {why[k]}" for k, n in skipped.items() if n]
    if kept.num_rows:
        losses.append(f"submit_time: written as seconds after the first submission (epoch "
                      f"{origin}); the absolute instants are not kept")
    held = [c for c in jt.column_names() if c not in CARRIES | {"submit_time"}
            and kept.column(c).null_count < kept.num_rows]
    if held:
        losses.append(f"{', '.join(held)}: no such column in the Tiresias job trace (dropped)")
    out = io.StringIO()
    out.write(",".join(columns()) + "\n")
    if kept.num_rows:
        text = [pc.cast(kept.column(c), pa.string()) for c in ("job_id", "gpus")]
        # the columns in the schema's order (job_id,num_gpu,submit_time,iterations,model_name,
        # duration,interval; tests/golden/dlsim checks the header and rows agree)
        parts = [text[0], ",", text[1], ",",
                 pc.cast(pc.subtract(kept.column("submit_time"), origin), pa.string()),
                 ",,", _models(kept, model, model_name is not None), ",",
                 pc.cast(kept.column("walltime_s"), pa.string()), ",\n"]
        out.write("".join(pc.binary_join_element_wise(*parts, "").to_pylist()))
    return out.getvalue(), losses


def _check_model(model: str) -> None:
    if not model or any(c in model for c in ',"\r\n'):
        raise UsageError(f"model name {model!r}: give a plain name (no comma, quote or newline)")


def _models(kept: pa.Table, default: str, given: bool) -> pa.Array | str:
    """Each written job's model: a model column beside the job table (``MODEL_COLUMNS``, unless
    ``model_name`` was given), its empty cells filled with ``default``; else ``default``."""
    name = next((c for c in MODEL_COLUMNS if c in kept.column_names), None)
    if given or name is None:
        return default
    col = pc.cast(kept.column(name), pa.string())
    for value in pc.unique(col).to_pylist():
        if value:
            _check_model(value)
    return pc.if_else(pc.fill_null(pc.not_equal(col, ""), False), col, default)


def write(table: pa.Table, path: str | Path, *, force: bool = False, model_name: str | None = None,
          **_options: Any) -> list[str]:
    """Write ``table`` as a Tiresias job trace CSV (atomically); returns the loss report."""
    text, losses = render(table, model_name=model_name)
    with atomic_file(path, force) as tmp:
        tmp.write_bytes(text.encode("utf-8"))
    return losses


def _integer(text: str, name: str, line: int, field: str, minimum: int) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < minimum:
        raise InputError(name, f"{text!r} is not a whole number of at least {minimum}", line=line,
                         field=field, value=text, expected=f"digits only, >= {minimum}")
    return int(text)


def _duration(text: str, name: str, line: int) -> int:
    try:
        value = float(text) if text.isascii() else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InputError(name, f"{text!r} is not a duration in seconds", line=line,
                         field="duration", value=text, expected="a number of seconds >= 0")
    return int(value)  # as the simulator does: int(float(duration))


def read(path: str | Path, *, allow_empty: bool = False, **_options: Any) -> pa.Table:
    """Read a Tiresias job trace CSV into the job table (job_id, gpus, walltime_s, and
    submit_time as the file's seconds from 0)."""
    name = str(path)
    rows = list(csv.reader(io.StringIO(read_text(path, newline=""))))
    if not rows:
        raise InputError(name, "empty file", line=1,
                         expected="a header row: " + ",".join(columns()))
    header = rows[0]
    required = [f["name"] for f in schema()["fields"] if f.get("constraints", {}).get("required")]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(name, f"header lacks {', '.join(missing)}", line=1, field="header",
                         value=",".join(header), expected="the columns " + ",".join(columns()))
    at = {c: header.index(c) for c in required}
    out: dict[str, list] = {"job_id": [], "gpus": [], "submit_time": [], "walltime_s": []}
    for n, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise InputError(name, f"{len(row)} fields, the header has {len(header)}", line=n,
                             value=",".join(row), expected=f"{len(header)} comma-separated fields")
        out["job_id"].append(_integer(row[at["job_id"]], name, n, "job_id", 0))
        out["gpus"].append(_integer(row[at["num_gpu"]], name, n, "num_gpu", 1))
        out["submit_time"].append(_integer(row[at["submit_time"]], name, n, "submit_time", 0))
        out["walltime_s"].append(_duration(row[at["duration"]], name, n))
    if not out["job_id"] and not allow_empty:
        raise InputError(name, NO_JOB_ROWS, line=1, expected=NO_JOB_ROWS_EXPECTED)
    table = jt.from_columns(out, {"source_format": "tiresias", "source_file": Path(path).name,
                                  "processor_unit": "gpu"})
    order = pc.sort_indices(table, sort_keys=[("submit_time", "ascending"),
                                              ("job_id", "ascending")])
    return table.take(order)
