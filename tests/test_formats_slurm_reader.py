"""The sacct reader's located errors and metadata: lines with the wrong field count, invalid
UTF-8, empty files (and what --allow-empty gives)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swftools.errors import InputError
from swftools.formats import slurm
from swftools.formats.sacct_command import RECOMMENDED_COMMAND
from swftools.metadata import TableMetadata

pytestmark = pytest.mark.filterwarnings("ignore::swftools.formats.localtime.AssumedTimeZoneWarning")

HEADER = "JobID|Submit|Start|End|State"
ROW = "5|2023-01-01T00:00:00|2023-01-01T00:01:00|2023-01-01T00:02:00|COMPLETED"


def _error(path: Path, data: bytes, **opts) -> InputError:
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        slurm.read(path, **opts)
    return err.value


def test_a_line_with_an_extra_field_is_located_past_blank_lines(tmp_path):
    path = tmp_path / "jobs.sacct"
    bad = ROW.replace("5|", "6|").encode() + b"|\xff"
    e = _error(path, f"{HEADER}\n{ROW}\n\n".encode() + bad + b"\n")
    assert (e.path, e.line, e.field) == (str(path), 4, "line")
    assert e.message == "6 fields, the header names 5"
    assert e.value == ROW.replace("5|", "6|") + "|\ufffd"  # the bad byte shown replaced
    assert e.expected == "5 '|'-separated fields, as the header has"


def test_a_short_line_of_a_parsable_file_names_the_final_bar(tmp_path):
    path = tmp_path / "jobs.sacct"
    e = _error(path, f"{HEADER}|\n{ROW}|\n{ROW}\n".encode())
    assert (e.line, e.field, e.value) == (3, "line", ROW)
    assert e.message == "5 fields, the header names 5 and a final '|'"
    assert e.expected == "6 '|'-separated fields, as the header has"


def test_a_line_against_columns_names_the_columns(tmp_path):
    path = tmp_path / "jobs.sacct"
    e = _error(path, f"{ROW}\n{ROW}|x\n".encode(), columns=HEADER.replace("|", ","))
    assert (e.line, e.message) == (2, "6 fields, --columns names 5")
    assert e.expected == "5 '|'-separated fields, as --columns has"


@pytest.mark.parametrize("column", [0, 4])
def test_invalid_utf8_names_the_column_even_the_first(tmp_path, column):
    names = ["User", "JobID", "Submit", "Start", "End", "State"]
    cells = ["u", *ROW.split("|")]
    row = "|".join(cells).encode().split(b"|")
    row[column] = b"\xff" + row[column]
    path = tmp_path / "jobs.sacct"
    e = _error(path, "|".join(names).encode() + b"\n" + b"|".join(row) + b"\n")
    assert e.path == str(path)
    assert e.message == ("cannot read as sacct --parsable2 output: invalid UTF-8 in column "
                         f"#{column} ({names[column]!r})")
    assert e.expected == "UTF-8 text with '|'-separated fields"


def test_an_empty_file_says_how_to_make_one_or_to_allow_it(tmp_path):
    path = tmp_path / "empty.sacct"
    e = _error(path, b"\n")
    assert (e.path, e.line, e.message) == (str(path), None, "the file is empty")
    assert e.expected == f"sacct output, such as that of {RECOMMENDED_COMMAND} (or --allow-empty)"


def test_an_allowed_empty_file_has_the_metadata_of_a_read(tmp_path):
    path = tmp_path / "empty.sacct"
    path.write_text("")
    table = slurm.read(path, allow_empty=True, site="aaic")
    meta = TableMetadata.from_table(table)
    assert table.num_rows == 0
    assert (meta.source_file, meta.source_format, meta.site, meta.time_zone,
            meta.processor_unit, meta.unfinished_jobs) == (
        "empty.sacct", "slurm", "aaic", "Asia/Tokyo", "processor", 0)
    assert meta.extra == {"slurm": {"header": []}}
    utc = TableMetadata.from_table(slurm.read(path, allow_empty=True, tz="UTC"))
    assert (utc.site, utc.time_zone) == (None, "UTC")
