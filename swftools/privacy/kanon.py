"""Re-identification risk of a published job table: k-anonymity over quasi-identifiers.

Someone who knows a few facts about a job (its queue, shape, requested walltime, the hour it was
submitted) can find it in the table; if only one user ran jobs with those facts, that user's
pseudonym, and so all their jobs, is revealed. This is information for the maintainer, not a
failure: small classes are normal for rare job shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.errors import UsageError, count

# The job size is whichever of nodes, GPUs per node, GPUs (an SWF trace's processors) and CPUs the
# trace records (``recorded_quasi_identifiers``).
DEFAULT_QUASI_IDENTIFIERS = ("queue", "nodes", "gpus_per_node", "gpus", "cpus",
                             "requested_walltime_s", "submit_hour")
SMALLEST_SHOWN = 10
SMALL_CLASS_SIZES = (1, 2, 5)


@dataclass
class ReidentificationReport:
    """k-anonymity figures over ``quasi_identifiers`` for a job table."""

    quasi_identifiers: tuple[str, ...]
    jobs: int
    users: int
    classes: int
    k: int  # size of the smallest equivalence class (0 for an empty table)
    jobs_in_classes_below: dict[int, int]  # size s -> jobs in classes of size <= s
    single_user_classes: int  # classes whose jobs all belong to one user
    identifiable_users: int  # users owning at least one single-user class
    smallest: list[dict[str, Any]] = field(default_factory=list)
    hour_time_zone: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures (keys of ``jobs_in_classes_below`` as strings)."""
        return {"quasi_identifiers": list(self.quasi_identifiers), "jobs": self.jobs,
                "users": self.users, "classes": self.classes, "k": self.k,
                "jobs_in_classes_below": {str(s): n for s, n in self.jobs_in_classes_below.items()},
                "single_user_classes": self.single_user_classes,
                "identifiable_users": self.identifiable_users, "smallest": self.smallest,
                "hour_time_zone": self.hour_time_zone}

    def render(self) -> str:
        """A short human summary."""
        qi = ", ".join(self.quasi_identifiers)
        lines = [f"re-identification report (information, not a failure) over {qi}:",
                 f"  {self.jobs} jobs, {self.users} users, {self.classes} equivalence classes, "
                 f"smallest class k = {self.k}"]
        for size, jobs in self.jobs_in_classes_below.items():
            lines.append(f"  jobs in classes of size <= {size}: {jobs} "
                         f"({_percent(jobs, self.jobs)})")
        lines.append(f"  classes whose jobs all belong to one user: {self.single_user_classes}; "
                     f"users identifiable from such a class: {self.identifiable_users} of "
                     f"{self.users}")
        if self.hour_time_zone:
            lines.append(f"  submit_hour is the hour of day in {self.hour_time_zone}")
        if self.smallest:
            lines.append("  smallest classes:")
            for entry in self.smallest:
                values = ", ".join(f"{k}={entry['values'][k]}" for k in self.quasi_identifiers)
                lines.append(f"    {count(entry['jobs'], 'job')}, {count(entry['users'], 'user')}: "
                             f"{values}")
        return "\n".join(lines)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "0 %"


def _submit_hour(table: pa.Table) -> tuple[pa.Array, str]:
    """Hour of day of ``submit_time`` in the table's time zone (UTC if none is recorded)."""
    zone = jt.get_metadata(table).get("time_zone") or "UTC"
    seconds = pc.cast(table.column("submit_time"), pa.int64())
    stamps = pc.cast(seconds, pa.timestamp("s", tz="UTC"))
    try:
        local = pc.cast(stamps, pa.timestamp("s", tz=zone))
        return pc.hour(local), zone
    except pa.ArrowException:
        return pc.hour(stamps), "UTC"


def recorded_quasi_identifiers(table: pa.Table, quasi_identifiers: tuple[str, ...] | list[str]
                               = DEFAULT_QUASI_IDENTIFIERS) -> tuple[str, ...]:
    """The quasi-identifiers ``table`` records: columns with at least one known value
    (``submit_hour`` from ``submit_time``). A column of unknowns tells nothing about a job."""
    def recorded(name: str) -> bool:
        return name in table.column_names and (
            table.num_rows == 0 or table.column(name).null_count < table.num_rows)

    return tuple(q for q in quasi_identifiers
                 if recorded(q) or (q == "submit_hour" and recorded("submit_time")))


def reidentification_report(table: pa.Table, quasi_identifiers: tuple[str, ...] | list[str]
                            = DEFAULT_QUASI_IDENTIFIERS) -> ReidentificationReport:
    """Equivalence classes of jobs over the quasi-identifiers, smallest first.

    ``submit_hour`` (if asked for and not a column) is derived from ``submit_time`` in the
    table's time zone. A null value is a value of its own. Users are the ``user`` column.
    """
    qis = tuple(quasi_identifiers)
    arrays: dict[str, Any] = {}
    zone = None
    for name in qis:
        if name in table.column_names:
            arrays[name] = table.column(name)
        elif name == "submit_hour" and "submit_time" in table.column_names:
            arrays[name], zone = _submit_hour(table)
        else:
            raise UsageError(f"quasi-identifier {name!r} is not a column of the table "
                             f"(columns: {', '.join(table.column_names)})")
    if not qis:
        raise UsageError("at least one quasi-identifier is needed")
    frame = pd.DataFrame({name: values.to_pandas() for name, values in arrays.items()})
    users = (table.column("user").to_pandas() if "user" in table.column_names
             else pd.Series([None] * table.num_rows, dtype=object))
    frame["_user"] = users.values
    n_jobs = len(frame)
    if n_jobs == 0:
        return ReidentificationReport(qis, 0, 0, 0, 0, {s: 0 for s in SMALL_CLASS_SIZES}, 0, 0,
                                      [], zone)
    frame["_class"] = frame.groupby(list(qis), dropna=False, sort=True).ngroup()
    sizes = frame.groupby("_class").size()
    distinct_users = frame.groupby("_class")["_user"].nunique(dropna=True)
    single_user = distinct_users[(distinct_users == 1)].index
    identifiable = frame.loc[frame["_class"].isin(single_user), "_user"].dropna().nunique()
    job_sizes = frame["_class"].map(sizes)
    below = {s: int((job_sizes <= s).sum()) for s in SMALL_CLASS_SIZES}
    order = sorted(sizes.index, key=lambda c: (sizes[c], c))[:SMALLEST_SHOWN]
    first = frame.drop_duplicates("_class")
    first_row = dict(zip(first["_class"].tolist(), first.index.tolist()))
    smallest = []
    for c in order:
        # values from Arrow: an integer column with nulls is float in pandas (2.0, NaN)
        smallest.append({"jobs": int(sizes[c]), "users": int(distinct_users[c]),
                         "values": {q: arrays[q][first_row[c]].as_py() for q in qis}})
    return ReidentificationReport(
        qis, n_jobs, int(frame["_user"].dropna().nunique()), int(len(sizes)), int(sizes.min()),
        below, int(len(single_user)), int(identifiable), smallest, zone)
