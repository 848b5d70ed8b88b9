"""The Alibaba openb pod and node lists as ``schemas/formats/alibaba-openb.schema.json`` gives
them: column names, the phase table (pod_phase <-> termcode and SWF status), the default epoch."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from swftools.resources import load_json

SCHEMA_FILE = "formats/alibaba-openb.schema.json"


@lru_cache(maxsize=1)
def spec() -> dict[str, Any]:
    """The format description (read-only)."""
    return load_json(SCHEMA_FILE)


def pod_columns() -> tuple[str, ...]:
    """The pod list's columns, in the published order."""
    return tuple(f["name"] for f in spec()["pods"]["fields"])


def pod_forms() -> tuple[tuple[str, ...], ...]:
    """The pod list forms a header may have: all columns, or the five-column multi-GPU lists'
    resources only (no model, QoS, phase or times)."""
    return pod_columns(), tuple(spec()["pods"]["short_form"])


def node_columns() -> tuple[str, ...]:
    """The node list's columns, in the published order."""
    return tuple(f["name"] for f in spec()["nodes"]["fields"])


def phases() -> tuple[str, ...]:
    """The pod phases the trace uses."""
    return tuple(p["pod_phase"] for p in spec()["phases"])


def phase_codes() -> dict[str, tuple[int | None, int | None]]:
    """pod_phase -> (termcode, SWF status)."""
    return {p["pod_phase"]: (p["termcode"], p["swf_status"]) for p in spec()["phases"]}


def phase_of(termcode: int | None, started: bool) -> str:
    """The pod_phase written for a job: the inverse of the phase table on what the reader makes.

    0 Succeeded; 1 (fail), 2 (walltime exceeded) and 4 (killed by system) Failed; 3 (cancelled)
    Pending; unknown Running (no exit recorded). ``started`` does not change the phase: the
    reader takes an empty scheduled_time as an unknown start in every phase.
    """
    del started
    if termcode == 0:
        return "Succeeded"
    if termcode in (1, 2, 4):
        return "Failed"
    if termcode == 3:
        return "Pending"
    return "Running"


@lru_cache(maxsize=1)
def default_origin() -> int:
    """The epoch second that relative time 0 stands for unless ``origin=`` says otherwise."""
    return int(datetime.fromisoformat(spec()["default_time_origin"]).timestamp())
