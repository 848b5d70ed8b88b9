"""Shared by the NQSII logs' tests: small valid raw and published logs that tests change one
field of, the error text of a read, and an oracle that writes a table in any layout row by row
(independently of swftools' writer)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.formats import nqsii
from swftools.formats.nqsii.schema import form_schema
from swftools.site import load_site

TOKYO = ZoneInfo("Asia/Tokyo")

# A small valid raw log; bad-input tests change one thing in it.
RAW_HEADER = ("job_id,user,group,queue,nodes,gpus,walltime_req,termcode,submit,start,finish,"
              "wait,walltime")
RAW_ROWS = [
    "1,alice,lab,Normal,1,1,01:00:00,0,2018-01-05 09:30:00,2018-01-05 09:31:40,"
    "2018-01-05 10:33:45,00:01:40,01:02:05",
    "2,bob,lab,Short,1,1,03:00:00,0,2018-01-05 09:40:00,2018-01-05 09:40:00,"
    "2018-01-05 09:50:00,00:00:00,00:10:00",
    "3,carol,lab,Long,1,8,336:00:00,1,2018-01-05 10:00:00,2018-01-05 11:00:00,"
    "2018-01-06 11:00:00,01:00:00,24:00:00",
]
PUBLISHED_HEADER = ("job_id, user, group, queue, nodes, gpus, walltime_req, termcode, submit, "
                    "start, finish, wait, walltime")
PUBLISHED_ROWS = [
    "1, 17, 3, 1, 1, 1, 3600, 0, 1500001000, 1500001030, 1500002030, 30, 1000",
    "2, 4, 1, 2, 1, 1, 10800, 2, 1500001500, 1500001500, 1500012305, 0, 10805",
]


def _raw(tmp_path: Path, rows: list[str] | None = None, header: str = RAW_HEADER,
         name: str = "log.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *(RAW_ROWS if rows is None else rows)]) + "\n")
    return path


def _with_field(row: int, column: str, value: str, rows: list[str] = RAW_ROWS,
                header: str = RAW_HEADER) -> list[str]:
    """Rows with field ``column`` of row ``row`` (0-based) replaced by ``value``."""
    names = [n.strip() for n in header.split(",")]
    out = list(rows)
    separator = ", " if ", " in rows[row] else ","
    fields = out[row].split(separator)
    fields[names.index(column)] = value
    out[row] = separator.join(fields)
    return out


def _error(path: Path | str, **options) -> str:
    with pytest.raises(InputError) as info:
        nqsii.read(path, **options)
    return str(info.value)


def _as_published(table: pa.Table) -> pa.Table:
    """The table as the published form holds it: user and group ids kept when all are integers,
    else numbered 1..N by first appearance."""
    cols = table.to_pydict()
    for key in ("user", "group"):
        if not all(v.isdigit() for v in cols[key]):
            order: dict[str, str] = {}
            cols[key] = [order.setdefault(v, str(len(order) + 1)) for v in cols[key]]
    return jt.from_columns(cols, jt.get_metadata(table))


def _instant_text(epoch: int, fmt: dict) -> str:
    """Independent formatter (datetime, one value at a time) for the oracle below."""
    if fmt["format"] == "epoch":
        return str(epoch)
    if fmt["format"] == "local":
        return datetime.fromtimestamp(epoch, TOKYO).strftime("%Y-%m-%d %H:%M:%S")
    offset = fmt["offset"]
    sign = -1 if offset.startswith("-") else 1
    digits = offset[1:].replace(":", "")
    delta = timedelta(0) if offset == "Z" else sign * timedelta(hours=int(digits[:2]),
                                                                minutes=int(digits[2:]))
    moment = datetime.fromtimestamp(epoch, timezone(delta))
    return moment.strftime(f"%Y-%m-%d{fmt['separator']}%H:%M:%S") + offset


def _duration_text(seconds: int, fmt: dict) -> str:
    if fmt["format"] == "seconds":
        return str(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours:0{fmt['hour_width']}d}:{rest // 60:02d}:{rest % 60:02d}"


def _render_oracle(table: pa.Table, layout: dict) -> str:
    """An NQSII file built row by row with Python, independently of swftools' writer."""
    rows = table.to_pylist()
    queue_numbers = {q.name: q.number for q in load_site("aaic").queues}
    columns = {f.name: f.column for f in form_schema(layout["form"]).fields}
    lines = [layout["separator"].join(layout["header"])]
    for row in rows:
        values = []
        for name in layout["fields"]:
            column = columns[name]
            value = row[column]
            if name in layout["formats"]:
                fmt = layout["formats"][name]
                text = (_instant_text(value, fmt) if column.endswith("_time")
                        else _duration_text(value, fmt))
            elif column == "queue":
                text = (str(queue_numbers[value]) if layout["form"] == "published"
                        else layout["queue_spelling"].get(value, value))
            else:
                text = str(value)
            values.append(text)
        lines.append(layout["separator"].join(values))
    text = layout["line_ending"].join(lines)
    return ("\ufeff" if layout["bom"] else "") + text + (
        layout["line_ending"] if layout["final_newline"] else "")

