"""The format descriptor and the loss-report convention (``swftools.formats.formatinfo``)."""

from __future__ import annotations

import pytest

from swftools.formats.formatinfo import FormatInfo, format_table, named_columns, skipped_jobs

COLUMNS = ["job_id", "user", "gpus", "gpus_per_node", "submit_time", "start_time"]


def test_named_columns_are_whole_words_and_skip_lines_do_not_count():
    losses = ["gpus_per_node: dropped", "user names replaced by numbers",
              "3 jobs skipped: gpus unknown", "1 job skipped: start_time unknown",
              "the SWF header (users.txt) is dropped", "GPUs per node are dropped"]
    assert named_columns(losses, COLUMNS) == {"gpus_per_node", "user"}
    assert skipped_jobs(losses) == 4
    assert skipped_jobs(["2 job(s) skipped: x"]) == 0  # the convention's spelling only


def test_descriptor_direction_lost_columns_and_json():
    info = FormatInfo(name="x", title="X", read=False, write=True, extensions=(".x",),
                      carries=frozenset({"job_id", "gpus"}), tables=("gpu",))
    assert info.direction == "write"
    assert info.lost_columns(COLUMNS) == ["user", "gpus_per_node", "submit_time", "start_time"]
    assert info.as_dict()["carries"] == ["gpus", "job_id"]
    text = format_table([info], COLUMNS)
    assert text.startswith("x          write       .x\n")
    assert "columns not carried: user, gpus_per_node, submit_time, start_time" in text


def test_unknown_table_kinds_are_refused():
    with pytest.raises(ValueError, match="unknown table kinds"):
        FormatInfo(name="x", title="X", read=True, write=True, extensions=(), carries=frozenset(),
                   tables=("cpu",))
