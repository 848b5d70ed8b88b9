"""SWF reader (issue 30, mutation testing): which bad value is reported and how, line numbers,
the layout's reasons, the header's metadata."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from swftools import __version__
from swftools import table as jt
from swftools.errors import InputError
from swftools.formats import swf
from swftools.formats.swf.fields import SwfField

_GOOD = "{} 0 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1"


def _write(tmp_path: Path, text: str | bytes, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _job_line(job: int, **fields: str) -> str:
    """A valid job line with the fields named ``f<N>`` replaced (``f6="2.5"``)."""
    line = _GOOD.format(job).split()
    for name, value in fields.items():
        line[int(name[1:]) - 1] = value
    return " ".join(line)


@pytest.mark.parametrize("lines, where, value", [
    # -1 (unknown) in field 6 comes before the negative field 10: field order, not just any -1
    ([_job_line(1, f6="-1", f10="-5")], (1, SwfField.REQUESTED_MEMORY), "-5"),
    ([_job_line(1), _job_line(2, f3="-2")], (2, SwfField.WAIT_TIME), "-2"),
    # decimals: 0, 0.5, -1 and 2.5 are fine; -0.5 (integer part 0) is the negative one
    ([_job_line(i + 1, f6=cpu) for i, cpu in enumerate(["0", "0.5", "-1", "2.5", "-0.5"])],
     (5, SwfField.AVERAGE_CPU_TIME_USED), "-0.5"),
    ([_job_line(1, f4="7.5"), _job_line(2, f4="-7.5")], (2, SwfField.RUN_TIME), "-7.5"),
])
def test_the_first_negative_value_is_reported(tmp_path, lines, where, value):
    """A value below 0 other than -1 is refused, the first by field then by line, with its
    line, field and the value as written (decimals included); -1 and values >= 0 are not."""
    with pytest.raises(InputError) as err:
        swf.read(_write(tmp_path, "".join(f"{line}\n" for line in lines)))
    assert (err.value.line, err.value.field, err.value.value) == (where[0], where[1].label, value)
    assert err.value.message == f"negative value {value}"


def test_row_line_numbers_of_a_table_not_read_from_swf():
    """Rows of a table that did not come from an SWF file are numbered 1..n."""
    table = jt.from_columns({"job_id": [5, 6, 7]}, {"source_format": "nqsii"})
    assert swf.row_line_numbers(table).tolist() == [1, 2, 3]
    layout = jt.from_columns({"job_id": [5, 6]},
                             {"source_format": "swf", "swf_layout": {"n_rows": 2}})
    assert swf.row_line_numbers(layout).tolist() == [1, 2]


@pytest.mark.parametrize("content, line, message, expected", [
    (_job_line(1, f9="1\x01") + "\n", 1, "binary data in a job line; this is not an SWF text file",
     "ASCII text"),
    (_job_line(1, f9="9" * 30) + "\n", 1, f"'{'9' * 30}' is too long for a number",
     "at most 18 digits before and after the decimal point"),
    # a byte that is not UTF-8 is shown as U+FFFD, never a decoding traceback
    (_job_line(1, f9="1\xe9").encode("latin-1"), 1, "'1\ufffd' is not a number",
     "a number (-1 if unknown)"),
    (_job_line(1) + "\n" + _job_line(2, f8="5.") + "\n", 2, "'5.' is not an integer",
     ("a whole number, -1 if unknown; SWF allows decimals only in the time fields and the "
      "average CPU time")),
])
def test_rare_bad_tokens_are_located_and_explained(tmp_path, content, line, message, expected):
    path = _write(tmp_path, content)
    with pytest.raises(InputError) as err:
        swf.read(path)
    assert (err.value.line, err.value.message, err.value.expected) == (line, message, expected)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_a_header_followed_only_by_blank_and_comment_lines_has_no_job_rows(tmp_path):
    path = _write(tmp_path, "; Version: 2.2\n\n; a late comment\n   \n")
    with pytest.raises(InputError, match="no job rows"):
        swf.read(path)
    table = swf.read(path, allow_empty=True)
    assert table.num_rows == 0
    assert jt.get_metadata(table)["swf_layout"]["other_lines"] == [
        [0, ""], [0, "; a late comment"], [0, "   "]]


def test_whole_seconds_written_with_a_point_are_not_an_exact_layout(tmp_path):
    """Bug found by mutation testing: ``10.0`` in a time field was read as 10 with the layout
    called exact, though it is written back as ``10``; the layout now says why it is not, and
    the loss report says so."""
    path = _write(tmp_path, _job_line(1, f2="0.0", f4="10.0", f9="10.00") + "\n")
    table = swf.read(path)
    layout = jt.get_metadata(table)["swf_layout"]
    assert table.column("walltime_s").to_pylist() == [10]
    assert layout["exact"] is False
    assert layout["reasons"] == [
        f"{field.label}: decimal points dropped (whole seconds)"
        for field in (SwfField.SUBMIT_TIME, SwfField.RUN_TIME, SwfField.REQUESTED_TIME)]
    losses = swf.write(table, tmp_path / "out.swf")
    assert (tmp_path / "out.swf").read_bytes() != path.read_bytes()
    assert any(loss.startswith("not byte-identical to the SWF input: field 2 (submit time): "
                               "decimal points dropped") for loss in losses)


def test_no_final_newline_and_extra_fields_are_explained(tmp_path):
    """A last job line without its newline, and job lines with more than 18 fields, are read;
    the layout says why writing back is not byte for byte. A header-only file without its
    final newline is exact, and one with no header and no job line names no line."""
    path = _write(tmp_path, _job_line(1) + " 7\n" + _job_line(2))
    table = swf.read(path)
    assert table.column("job_id").to_pylist() == [1, 2]
    assert jt.get_metadata(table)["swf_layout"]["reasons"] == [
        "no newline at the end of the file",
        "1 job lines have more than 18 fields (extra fields dropped)"]
    header_only = swf.read(_write(tmp_path, "; Version: 2.2", "h.swf"), allow_empty=True)
    assert jt.get_metadata(header_only)["swf_layout"]["exact"] is True
    with pytest.raises(InputError) as err:
        swf.read(_write(tmp_path, "\n; only a comment\n", "c.swf"))
    assert err.value.line is None and "no job rows" in str(err.value)


def test_the_header_time_zone_and_source_are_recorded(tmp_path):
    path = _write(tmp_path, "; Version: 2.2\n; timezonestring: Europe/Paris\n" + _job_line(1)
                  + "\n", "paris.swf")
    meta = jt.get_metadata(swf.read(path))
    assert meta["time_zone"] == "Europe/Paris" and meta["source_file"] == "paris.swf"
    assert meta["swf_first_line"] == 3 and meta["source_format"] == "swf"
    assert meta["converter_version"] == f"swftools {__version__}"
    # no job line with extra fields: no record of them (the schema's swf_extra_columns is an
    # object when present)
    assert "swf_extra_columns" not in meta
    blank_zone = _write(tmp_path, "; TimeZoneString:\n" + _job_line(1) + "\n", "blank.swf")
    assert "time_zone" not in jt.get_metadata(swf.read(blank_zone))


def test_unix_start_time_one_is_added(tmp_path):
    path = _write(tmp_path, "; UnixStartTime: 1\n" + _job_line(1).replace(" 0 0 10 ", " 5 0 10 ")
                  + "\n")
    assert swf.read(path).column("submit_time").to_pylist() == [6]


def test_ids_too_large_for_the_kernel_fall_back_to_the_same_text(tmp_path, monkeypatch):
    """User, group and queue numbers whose text passes int32 offsets (the kernel's ValueError)
    are converted by pyarrow instead: the same text, unknown still null."""
    from swftools.formats.swf import kernels as swf_kernels

    def too_large(values):
        raise ValueError("offsets beyond int32")

    monkeypatch.setattr(swf_kernels, "int_strings", too_large)
    path = _write(tmp_path, _job_line(1, f12="7", f13="-1") + "\n" + _job_line(2, f12="30")
                  + "\n")
    table = swf.read(path)
    assert table.column("user").to_pylist() == ["7", "30"]
    assert table.column("group").to_pylist() == [None, "1"]
    assert table.column("user").type == pa.string()


def test_mixed_decimal_counts_in_one_field_are_explained(tmp_path):
    """One count of decimals per field is an exact layout; two (``1.5`` and ``2.25``) are not,
    and the reason names the field and the counts."""
    same = swf.read(_write(tmp_path, _job_line(1, f6="1.25") + "\n" + _job_line(2, f6="3.50")
                           + "\n", "same.swf"))
    assert jt.get_metadata(same)["swf_layout"]["reasons"] == []
    assert jt.get_metadata(same)["swf_layout"]["exact"] is True
    mixed = swf.read(_write(tmp_path, _job_line(1, f6="1.5") + "\n" + _job_line(2, f6="2.25")
                            + "\n", "mixed.swf"))
    assert jt.get_metadata(mixed)["swf_layout"]["reasons"] == ["field 6 mixes [1, 2] decimals"]


def test_binary_bytes_in_the_header_and_irregular_alignment(tmp_path):
    path = _write(tmp_path, b"; Version: 2.2\n; Comp\x01uter: x\n" + _job_line(1).encode() + b"\n")
    with pytest.raises(InputError) as err:
        swf.read(path)
    assert err.value.line == 2 and err.value.expected == "ASCII text"
    assert str(err.value).startswith(f"{path}:2: binary data")
    assert err.value.message == ("binary data (byte 0x01 at offset 21); this is not an SWF text "
                                 "file")
    ragged = _write(tmp_path, _job_line(1) + "\n" + _job_line(2).replace(" ", "  ", 1) + "\n",
                    "ragged.swf")
    assert jt.get_metadata(swf.read(ragged))["swf_layout"]["reasons"] == [
        "fields are not right-aligned to fixed column widths"]


def test_job_number_minus_one_is_refused_with_its_line(tmp_path):
    with pytest.raises(InputError) as err:
        swf.read(_write(tmp_path, _job_line(1) + "\n" + _job_line(-1) + "\n"))
    assert (err.value.line, err.value.field, err.value.value) == (2, SwfField.JOB_ID.label, "-1")


def test_fractional_times_are_rounded_to_exact_whole_seconds(tmp_path):
    """A fractional time is rounded to the nearest second and the layout says so; the absolute
    times stay exact integer sums even past 2**53, where a float sum would round
    (2**53 + 1 = 9007199254740993 is not a float64)."""
    rounded = swf.read(_write(tmp_path, _job_line(1, f4="10.6") + "\n" + _job_line(2, f4="7.4")
                              + "\n", "r.swf"))
    assert rounded.column("walltime_s").to_pylist() == [11, 7]
    assert jt.get_metadata(rounded)["swf_layout"]["reasons"] == [
        "field 4 (run time): fractional values rounded to whole seconds"]
    big = swf.read(_write(tmp_path, _job_line(1, f2="9007199254740993", f3="0.0", f4="10")
                          + "\n", "big.swf"))
    assert big.column("start_time").cast(pa.int64()).to_pylist() == [9007199254740993]
    assert big.column("finish_time").cast(pa.int64()).to_pylist() == [9007199254741003]


@pytest.mark.parametrize("line, message", [
    ("1 2 3", "expected 18 fields, found 3"),
    (_job_line(1, f8="5.5"), "'5.5' is not an integer"),
])
def test_a_bad_first_job_line_after_a_blank_line(tmp_path, line, message):
    """The blank line is set aside before the job lines are parsed again; the bad job line is
    still named by its own line and quoted whole (its first field included)."""
    with pytest.raises(InputError) as err:
        swf.read(_write(tmp_path, "\n" + line + "\n"))
    assert (err.value.line, err.value.message) == (2, message)
