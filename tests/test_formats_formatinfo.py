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


def test_a_skipped_jobs_line_does_not_end_the_search():
    losses = ["2 jobs skipped: gpus unknown", "user names replaced by numbers"]
    assert named_columns(losses, COLUMNS) == {"user"}


def test_unknown_table_kinds_message_lists_the_kinds():
    with pytest.raises(ValueError) as err:
        FormatInfo(name="x", title="X", read=True, write=True, extensions=(), carries=frozenset(),
                   tables=("cpu", "gpu", "tpu"))
    assert str(err.value) == "format x: unknown table kinds ['cpu', 'tpu'] (choose from gpu, swf)"


def test_as_dict_is_every_field_by_name():
    info = FormatInfo(name="x", title="X log", read=True, write=False, extensions=(".x", ".x.gz"),
                      carries=frozenset({"user", "job_id"}), tables=("swf",),
                      cannot_carry="names", reference="https://example.org/x")
    assert info.as_dict() == {"name": "x", "title": "X log", "direction": "read", "read": True,
                              "write": False, "extensions": [".x", ".x.gz"],
                              "carries": ["job_id", "user"], "tables": ["swf"],
                              "cannot_carry": "names", "reference": "https://example.org/x"}


def test_list_formats_text_wraps_under_its_columns():
    """Two blocks, a blank line between; text wraps at 98 characters, indented 11 and 13."""
    # the first line would be 99 characters with "abc": one past the width
    long = FormatInfo(name="long", title=" ".join(["word"] * 17 + ["abc"] + ["word"] * 12),
                      read=True, write=True,
                      extensions=(".l", ".l.gz"), carries=frozenset(COLUMNS),
                      cannot_carry="walltime requests")
    short = FormatInfo(name="s", title="S", read=False, write=True, extensions=(".s",),
                       carries=frozenset({"job_id"}))
    pad = " " * 11
    assert format_table([long, short], COLUMNS) == (
        "long       read/write  .l, .l.gz\n"
        + pad + " ".join(["word"] * 17) + "\n"
        + pad + "  abc " + " ".join(["word"] * 12) + "\n"
        + pad + "cannot carry: walltime requests\n"
        + pad + "columns not carried: none\n"
        "\n"
        "s          write       .s\n"
        + pad + "S\n"
        + pad + "cannot carry: nothing\n"
        + pad + "columns not carried: user, gpus, gpus_per_node, submit_time, start_time\n")
