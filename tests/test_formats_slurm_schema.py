"""The sacct schema: column aliases read as their column, and the located error of a header
that lacks required columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from swftools.errors import InputError
from swftools.formats import slurm
from swftools.formats.slurm.schema import map_header

pytestmark = pytest.mark.filterwarnings("ignore::swftools.formats.localtime.AssumedTimeZoneWarning")

LINE = "5|2023-01-01T00:00:00|2023-01-01T00:01:00|2023-01-01T00:02:00|COMPLETED|3|12|gres/gpu=6"


@pytest.mark.parametrize("nodes,cpus", [("NNodes", "NCPUS"), ("AllocNodes", "AllocCPUS"),
                                        ("allocnodes", "ALLOCCPUS")])
def test_aliases_read_as_their_column(tmp_path, nodes, cpus):
    path = tmp_path / "jobs.sacct"
    path.write_text(f"JobID|Submit|Start|End|State|{nodes}|{cpus}|AllocTRES\n{LINE}\n")
    table = slurm.read(path)
    assert table.select(["nodes", "cpus", "gpus"]).to_pylist() == [
        {"nodes": 3, "cpus": 12, "gpus": 6}]


def test_one_missing_column_is_named_in_the_singular():
    with pytest.raises(InputError) as err:
        map_header(["JobID", "Submit", "Start", "End"], "x.sacct")
    e = err.value
    assert (e.line, e.field, e.value) == (1, "header", "JobID|Submit|Start|End")
    assert e.message == "missing sacct column State"
    assert str(e) == ("x.sacct:1: header: missing sacct column State (expected sacct columns "
                      "including State (see schemas/formats/slurm-sacct.schema.json))")


def test_several_missing_columns_are_listed_in_schema_order():
    with pytest.raises(InputError) as err:
        map_header(["End", "jobid", "Other"], "x.sacct", 7, "--columns")
    e = err.value
    assert (e.line, e.field) == (7, "--columns")
    assert e.message == "missing sacct columns Submit, Start, State"
    assert e.expected == ("sacct columns including Submit, Start, State "
                          "(see schemas/formats/slurm-sacct.schema.json)")


def test_a_complete_header_maps_first_positions_and_repeats():
    header = map_header(["x", "JobID", "Submit", "start", "END", "State", "jobid", "AllocNodes",
                         "NNodes"], "x.sacct")
    assert header.positions == {"JobID": 1, "Submit": 2, "Start": 3, "End": 4, "State": 5,
                                "NNodes": 7}
    assert header.repeats == [("JobID", 6), ("NNodes", 8)]


def test_missing_column_in_a_file_is_located(tmp_path):
    path = Path(tmp_path) / "jobs.sacct"
    path.write_text("JobID|Submit|Start|End|Status\n" + LINE + "\n")
    with pytest.raises(InputError) as err:
        slurm.read(path)
    assert (err.value.line, err.value.field, err.value.message) == (
        1, "header", "missing sacct column State")
