"""Shared by the sacct reader's tests: small --parsable2 files whose expected tables are
worked out by hand (``BASE``'s cells, updated per row)."""

from __future__ import annotations

from pathlib import Path

from swftools.metadata import TableMetadata

T0 = "2023-01-01T00:00:00"
T1 = "2023-01-01T00:01:00"
T2 = "2023-01-01T00:02:00"
BASE = {"JobID": "5", "Submit": T0, "Start": T1, "End": T2, "State": "COMPLETED"}


def sacct(tmp_path: Path, names: list[str], *rows: dict, name: str = "jobs.sacct",
           eol: str = "\n") -> Path:
    """A --parsable2 file with header ``names``; each row: BASE's cells updated by the dict
    (a step line: give its JobID; cells not named are empty)."""
    lines = ["|".join(names)]
    for row in rows:
        cells = {**BASE, **row} if "." not in row.get("JobID", "") else dict(row)
        lines.append("|".join(str(cells.get(n, "")) for n in names))
    path = tmp_path / name
    path.write_bytes((eol.join(lines) + eol).encode("utf-8", "surrogateescape"))
    return path


def col(table, name: str) -> list:
    return table.column(name).to_pylist()


def slurm_meta(table) -> dict:
    return TableMetadata.from_table(table).extra["slurm"]


NAMES = ["JobID", "Submit", "Start", "End", "State"]
