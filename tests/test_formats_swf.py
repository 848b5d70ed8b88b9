"""SWF reader/writer: byte-exact round trips, parsing properties, golden output, bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.formats import swf
from swftools import table as jt
from swftools.errors import InputError
from swftools.formats.swf.fields import FIELDS, PWA_WIDTHS, SwfField
from swftools.formats.swf.reader import FRACTIONAL_FIELDS
from swftools.formats.swf.writer import to_bytes

from .conftest import SWF_TRACES, trace_path
from .strategies import aaic_jobs, bad_integer_tokens, swf_jobs, swf_with_interleaved_lines

GOLDEN = Path(__file__).parent / "golden" / "swf"
JOB = "    1        0     10    100    4     -1    -1    4    200    -1  1   1   1  -1  1  1 -1 -1"


def _read_text(content: str | bytes):
    """Read SWF content through a temporary file (hypothesis tests cannot use tmp_path)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.swf"
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return swf.read(path, allow_empty=True)  # the table strategies include empty tables


def _write(tmp_path: Path, text: str | bytes, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- real traces ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", SWF_TRACES or ["NASA-iPSC-1993-3-excerpt228.swf.gz"])
def test_real_trace_round_trips_byte_for_byte(name, tmp_path):
    path = trace_path(name)
    table = swf.read(path)
    out = tmp_path / "out.swf"
    swf.write(table, out)
    assert out.read_bytes() == swf.read_bytes(path)
    assert jt.get_metadata(table)["swf_layout"]["exact"] is True


def test_excerpt_header_and_values():
    table = swf.read(trace_path("NASA-iPSC-1993-3-excerpt228.swf.gz"))
    meta = jt.get_metadata(table)
    assert table.num_rows == 228
    assert ["MaxJobs", "42264"] in meta["swf_header"]
    assert meta["swf_layout"]["widths"] == list(PWA_WIDTHS)
    first = table.slice(0, 1).to_pylist()[0]
    assert first["job_id"] == 1 and first["walltime_s"] == 1451 and first["gpus"] == 128
    assert first["wait_s"] is None and first["swf_status"] is None  # -1 is unknown
    assert swf.row_line_numbers(table)[0] == len(meta["swf_header_lines"]) + 1


# --- properties ----------------------------------------------------------------------------

@given(swf_jobs())
def test_table_swf_table_round_trip(table):
    data = to_bytes(table)
    back = _read_text(data)
    for name in jt.column_names():
        assert back.column(name).to_pylist() == table.column(name).to_pylist(), name
    assert to_bytes(back) == data  # and writing the re-read table gives the same bytes


@given(st.data())
def test_comment_and_blank_lines_between_jobs_change_no_job(data):
    table = data.draw(swf_jobs())
    text = to_bytes(table)
    back = _read_text(data.draw(swf_with_interleaved_lines(text)))
    for name in jt.column_names():
        assert back.column(name).to_pylist() == table.column(name).to_pylist(), name


@given(aaic_jobs(min_size=1))
def test_aaic_table_to_swf_keeps_what_swf_can_carry(table):
    data = to_bytes(table, site="aaic")
    lines = [line for line in data.decode().splitlines() if not line.startswith(";")]
    assert len(lines) == table.num_rows
    fields = np.array([line.split() for line in lines], dtype=np.int64)
    assert list(fields[:, 0]) == table.column("job_id").to_pylist()
    assert list(fields[:, 4]) == table.column("gpus").to_pylist()
    assert list(fields[:, 3]) == table.column("walltime_s").to_pylist()
    assert list(fields[:, 8]) == table.column("requested_walltime_s").to_pylist()
    status = {0: 1, 1: 0, 2: 0, 3: 5, 4: 5}
    assert list(fields[:, 10]) == [status[t] for t in table.column("termcode").to_pylist()]
    queues = {"Normal": 1, "Short": 2, "Middle": 3, "Long": 4}
    assert list(fields[:, 14]) == [queues[q] for q in table.column("queue").to_pylist()]


_value = st.one_of(st.just(-1), st.integers(0, 10**9))


@given(st.lists(st.tuples(st.integers(0, 10**9), st.lists(_value, min_size=17, max_size=17))
                .map(lambda t: [t[0], *t[1]]), min_size=1, max_size=20),
       st.lists(st.sampled_from([" ", "  ", "\t", " \t "]), min_size=1, max_size=5),
       st.data())
def test_parser_accepts_any_whitespace(rows, separators, data):
    lines = []
    for row in rows:
        lead = data.draw(st.sampled_from(["", " ", "   "]))
        seps = [data.draw(st.sampled_from(separators)) for _ in row[1:]]
        text = lead + str(row[0]) + "".join(s + str(v) for s, v in zip(seps, row[1:]))
        lines.append(text + data.draw(st.sampled_from(["", " "])))
    table = _read_text("; Version: 2.2\n" + "\n".join(lines) + "\n")
    # every field parsed, -1 -> null (SWF submit offsets have no UnixStartTime here)
    for k, field in enumerate(FIELDS):
        if field.column in ("user", "group", "queue"):
            expected = [None if r[k] == -1 else str(r[k]) for r in rows]
        elif field.column == "avg_cpu_time_s":
            expected = [None if r[k] == -1 else float(r[k]) for r in rows]
        else:
            expected = [None if r[k] == -1 else r[k] for r in rows]
        assert table.column(field.column).to_pylist() == expected


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 99), st.booleans()),
                min_size=1, max_size=30))
def test_decimals_keep_their_written_precision(values):
    lines = []
    for i, (whole, cents, decimal) in enumerate(values, start=1):
        cpu = f"{whole}.{cents:02d}" if decimal else str(whole)
        lines.append(f"{i} 0 0 10 1 {cpu} -1 1 10 -1 1 1 1 -1 1 1 -1 -1")
    text = "\n".join(lines) + "\n"
    table = _read_text(text)
    assert to_bytes(table).decode() == text
    assert table.column("avg_cpu_time_s").to_pylist() == [
        w + c / 100 if d else float(w) for w, c, d in values]


# --- layout, header, metadata ----------------------------------------------------------------

def test_header_continuations_repeats_and_tabs(tmp_path):
    header = [
        "; Version: 2.2",
        "; Information: http://example.org/a",
        ";              http://example.org/b",
        "; Queue:  1  [fque:1]    ",
        "; Queue:  2  [other]",
        ";",
        "; Note: THIS IS A CLEANED VERSION",
        ";\tuser=2 (5 jobs removed)",
        ";\tsee: http://example.org/c",
        "; ",
    ]
    path = _write(tmp_path, "\n".join(header) + "\n" + JOB + "\n")
    table = swf.read(path)
    meta = jt.get_metadata(table)
    assert meta["swf_header"] == [
        ["Version", "2.2"],
        ["Information", "http://example.org/a\nhttp://example.org/b"],
        ["Queue", "1  [fque:1]"],
        ["Queue", "2  [other]"],
        ["Note", "THIS IS A CLEANED VERSION\nuser=2 (5 jobs removed)\nsee: http://example.org/c"],
    ]
    assert to_bytes(table) == path.read_bytes()


def test_comment_and_blank_lines_between_jobs_are_kept(tmp_path):
    text = "; Version: 2.2\n" + JOB + "\n; a comment among jobs\n\n" + JOB.replace("    1 ", "    2 ", 1) + "\n"
    path = _write(tmp_path, text)
    table = swf.read(path)
    assert table.num_rows == 2
    assert list(swf.row_line_numbers(table)) == [2, 5]
    assert to_bytes(table) == text.encode()


def test_irregular_spacing_is_read_and_explained(tmp_path):
    path = _write(tmp_path, "1\t0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1  \n")
    table = swf.read(path)
    layout = jt.get_metadata(table)["swf_layout"]
    assert layout["exact"] is False
    assert "tabs or carriage returns between fields" in layout["reasons"]
    assert "trailing blanks after the last field" in layout["reasons"]
    losses = swf.write(table, tmp_path / "out.swf")
    assert any(loss.startswith("not byte-identical to the SWF input") for loss in losses)


def test_trailing_extra_columns_are_dropped_with_a_note(tmp_path):
    # AleaNG-style SWF-like files append GPU counts and property strings after field 18
    path = _write(tmp_path, JOB + " 7 all:excl:2x4\n" + JOB.replace("    1 ", "    2 ", 1) + "\n")
    table = swf.read(path)
    meta = jt.get_metadata(table)
    assert meta["swf_extra_columns"] == {"count": 2, "lines": 1, "first_line": 1}
    assert table.column("job_id").to_pylist() == [1, 2]
    assert meta["swf_layout"]["exact"] is False


def test_unix_start_time_gives_absolute_times(tmp_path):
    path = _write(tmp_path, "; UnixStartTime: 1500000000\n" + JOB + "\n")
    row = swf.read(path).to_pylist()[0]
    assert row["submit_time"] == 1_500_000_000
    assert row["start_time"] == 1_500_000_010
    assert row["finish_time"] == 1_500_000_110


def test_gzip_output_is_deterministic(tmp_path):
    table = swf.read(_write(tmp_path, JOB + "\n"))
    swf.write(table, tmp_path / "a.swf.gz")
    swf.write(table, tmp_path / "b.swf.gz")
    assert (tmp_path / "a.swf.gz").read_bytes() == (tmp_path / "b.swf.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.swf.gz").read_bytes()) == (JOB + "\n").encode()


def test_existing_output_is_not_overwritten_without_force(tmp_path):
    table = swf.read(_write(tmp_path, JOB + "\n"))
    target = _write(tmp_path, "keep me", "out.swf")
    from swftools.errors import UsageError

    with pytest.raises(UsageError, match="already exists"):
        swf.write(table, target)
    assert target.read_text() == "keep me"
    swf.write(table, target, force=True)
    assert target.read_text() == JOB + "\n"


# --- golden: an AAIC-shaped table as SWF ------------------------------------------------------

def small_aaic_table() -> pa.Table:
    """Three AAIC jobs (the shape of swf.md's example), used by golden files."""
    return jt.from_columns({
        "job_id": [101, 102, 103], "user": ["alice", "bob", "carol"],
        "group": ["vision", "vision", "speech"], "queue": ["Normal", "Short", "Normal"],
        "nodes": [1, 1, 2], "gpus_per_node": [8, 1, 8], "gpus": [8, 1, 16],
        "requested_walltime_s": [7200, 10800, 3600], "termcode": [0, 2, 3],
        "submit_time": [1500000000, 1500000120, 1500000300],
        "start_time": [1500000030, 1500000120, 1500000345],
        "finish_time": [1500003630, 1500010925, 1500001545],
        "wait_s": [30, 0, 45], "walltime_s": [3600, 10805, 1200],
    }, {"site": "aaic", "time_zone": "Asia/Tokyo", "source_format": "nqsii"})


def test_golden_aaic_swf(tmp_path):
    out = tmp_path / "small.swf"
    losses = swf.write(small_aaic_table(), out, site="aaic")
    golden = GOLDEN / "aaic-small.swf"
    assert out.read_text() == golden.read_text()
    assert "user names replaced by numbers 1..3 in order of first appearance" in losses
    assert any(loss.startswith("termcode mapped to SWF status") for loss in losses)
    assert any(loss.startswith("nodes and gpus_per_node have no SWF field") for loss in losses)


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("content, message", [
    (JOB + "\n1 2 3\n", "t.swf:2: expected 18 fields, found 3 (expected 18 whitespace-separated numbers)"),
    (JOB.replace(" 4     -1", " x7     -1", 1) + "\n",
     "t.swf:1: field 5 (allocated processors): 'x7' is not a number (expected a number (-1 if unknown))"),
    (JOB.replace("   10    100", "   10   -100", 1) + "\n",
     "t.swf:1: field 4 (run time): negative value -100 (expected a value >= 0, or -1 for unknown)"),
    ("", "t.swf: empty file (expected SWF header comments and job lines)"),
    ("\n \n", "t.swf: empty file (expected SWF header comments and job lines)"),
    (JOB.replace("    1 ", "   -1 ", 1) + "\n", "t.swf:1: field 1 (job number): job number -1 (expected a job number >= 0)"),
    (JOB + "\n" + JOB.replace("    1 ", "  6.5 ", 1) + "\n",
     "t.swf:2: field 1 (job number): '6.5' is not an integer (expected a whole number, -1 if "
     "unknown; SWF allows decimals only in the time fields and the average CPU time)"),
    ("; Version: 2.2\n; Computer: x\n",
     "t.swf:2: no job rows: the file holds only a header (expected one job per line after the "
     "header, or --allow-empty for an empty trace)"),
])
def test_bad_input_messages(tmp_path, content, message):
    path = _write(tmp_path, content)
    with pytest.raises(InputError) as err:
        swf.read(path)
    assert str(err.value) == str(path.parent / message)


_COUNT_FIELDS = [f for f in FIELDS if f not in FRACTIONAL_FIELDS
                 and f is not SwfField.AVERAGE_CPU_TIME_USED]


@given(st.sampled_from(_COUNT_FIELDS), st.integers(0, 5), st.integers(0, 10**6),
       st.integers(1, 99), st.integers(1, 4))
def test_decimals_in_count_fields_are_refused(field, row, whole, fraction, n_jobs):
    """A decimal in a count field names its line and field; it is never rounded."""
    row = row % n_jobs
    lines = [f"{i + 1} 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1".split() for i in range(n_jobs)]
    token = f"{whole}.{fraction}"
    lines[row][field.value - 1] = token
    text = "; Version: 2.2\n" + "".join(" ".join(line) + "\n" for line in lines)
    with pytest.raises(InputError) as err:
        _read_text(text)
    assert err.value.line == row + 2
    assert err.value.field == field.label
    assert err.value.value == token
    assert "is not an integer" in err.value.message


@given(st.sampled_from(_COUNT_FIELDS), st.integers(0, 3), bad_integer_tokens | st.just(""))
def test_a_bad_token_in_any_count_field_names_line_and_field(field, row, token):
    """Issue 13 sweep: non-integer, empty, overlong and non-ASCII-digit tokens are refused with
    the line and field, and ``convert`` writes nothing."""
    import tempfile

    from swftools import formats

    lines = [f"{i + 1} 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1".split() for i in range(4)]
    lines[row][field.value - 1] = token
    text = "; Version: 2.2\n" + "".join(" ".join(line) + "\n" for line in lines)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "t.swf", Path(tmp) / "out.swf"
        src.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as err:
            formats.convert(src, out)
        assert not out.exists() and sorted(p.name for p in Path(tmp).iterdir()) == ["t.swf"]
    assert err.value.line == row + 2
    if token:
        assert err.value.field == field.label and err.value.value == token
    else:
        assert "expected 18 fields, found 17" in str(err.value)


def test_decimals_in_time_fields_are_still_read(tmp_path):
    path = _write(tmp_path, "1 0.5 0 10.25 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n")
    table = swf.read(path)
    assert table.column("walltime_s").to_pylist() == [10]


def test_allow_empty_reads_a_header_only_file(tmp_path):
    path = _write(tmp_path, "; Version: 2.2\n; MaxProcs: 8\n")
    assert swf.read(path, allow_empty=True).num_rows == 0


def test_binary_garbage(tmp_path):
    path = _write(tmp_path, bytes(range(256)) * 4, "garbage.swf")
    with pytest.raises(InputError, match=r"garbage\.swf:1: binary data"):
        swf.read(path)


def test_truncated_gzip(tmp_path):
    data = gzip.compress((JOB + "\n").encode() * 1000)
    path = _write(tmp_path, data[: len(data) // 2], "cut.swf.gz")
    with pytest.raises(InputError, match=r"cut\.swf\.gz: truncated gzip file: the compressed stream "
                                         r"ends early, after [\d,]+ complete lines"):
        swf.read(path)


# --- the threaded kernels: chunk boundaries must not change anything -------------------------

@pytest.fixture
def tiny_chunks(monkeypatch):
    """Force the multi-threaded path (the compiled kernels, 3 chunks) even on small inputs."""
    from swftools.formats.swf import kernels as swf_kernels

    monkeypatch.setattr(swf_kernels, "_MIN_CHUNK_BYTES", 1)
    monkeypatch.setattr(swf_kernels, "_MIN_CHUNK_ROWS", 1)
    monkeypatch.setattr(swf_kernels, "_workers", lambda: 3)


@given(swf_jobs(min_size=0, max_size=40))
def test_chunked_kernels_match_single_pass(table):
    import swftools.formats.swf.kernels as kernels

    single = to_bytes(table)
    names = ("_MIN_CHUNK_BYTES", "_MIN_CHUNK_ROWS", "_workers")
    saved = [getattr(kernels, name) for name in names]
    for name, value in zip(names, (1, 1, lambda: 3)):
        setattr(kernels, name, value)
    try:
        chunked = to_bytes(table)
        body = b"".join(line + b"\n" for line in single.split(b"\n") if line and not line.startswith(b";"))
        ints_c = kernels.tokenize(body, 18)
    finally:
        for name, value in zip(names, saved):
            setattr(kernels, name, value)
    ints_s = kernels.tokenize(body, 18)
    assert chunked == single
    assert np.array_equal(ints_c[0], ints_s[0]) and np.array_equal(ints_c[2], ints_s[2])
    assert np.array_equal(ints_c[3], ints_s[3]) and np.array_equal(ints_c[4], ints_s[4])
    assert list(ints_c[6]) == list(ints_s[6])


def test_chunked_error_reports_the_first_bad_line(tmp_path, tiny_chunks):
    lines = [JOB.replace("    1 ", f"{i:5d} ", 1) for i in range(1, 40)]
    lines[25] = lines[25].replace(" 200 ", " 2x0 ", 1)
    lines[31] = "1 2 3"
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        swf.read(path)
    assert str(err.value).endswith(":26: field 9 (requested time): '2x0' is not a number "
                                   "(expected a number (-1 if unknown))")


def test_chunked_real_excerpt_round_trips(tiny_chunks, tmp_path):
    path = trace_path("NASA-iPSC-1993-3-excerpt228.swf.gz")
    table = swf.read(path)
    swf.write(table, tmp_path / "out.swf")
    assert (tmp_path / "out.swf").read_bytes() == swf.read_bytes(path)


@given(st.lists(st.lists(st.integers(-1, 10**7), min_size=18, max_size=18), min_size=1, max_size=12),
       st.lists(st.integers(1, 9), min_size=18, max_size=18), st.data())
def test_layout_is_exact_exactly_when_the_bytes_come_back(rows, widths, data):
    """The reader's 'exact' verdict must agree with an actual write-back comparison."""
    lines = []
    for row in rows:
        row[0] = abs(row[0])
        fields = []
        for k, v in enumerate(row):
            text = str(v)
            pad = widths[k] - len(text)
            if data.draw(st.booleans(), label="disturb") and data.draw(st.booleans()):
                pad += data.draw(st.integers(1, 2))  # an irregular extra blank
            fields.append(" " * max(pad, 0) + text)
        lines.append(" ".join(fields))
    text = "\n".join(lines) + "\n"
    table = _read_text(text)
    exact = jt.get_metadata(table)["swf_layout"]["exact"]
    assert exact == (to_bytes(table).decode() == text)


@pytest.mark.parametrize("users, expected", [
    (["7", "3", "7", None], [7, 3, 7, -1]),          # SWF user numbers are kept
    (["alice", "bob", "alice"], [1, 2, 1]),          # names numbered by first appearance
    (["007", "7"], [1, 2]),                          # '007' is a name, not the id 7
    (["+7", "8"], [1, 2]),
    (["-7", "8"], [1, 2]),
])
def test_user_ids_in_swf(users, expected):
    from swftools.formats.swf.mapping import swf_field_values

    table = jt.from_columns({"job_id": list(range(1, len(users) + 1)), "user": users},
                            {"source_format": "swf"})
    assert swf_field_values(table)[11].to_pylist() == expected


# --- issue 30: line numbers after comment and blank lines among the jobs ---------------------

_GOOD = "{} 0 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1"
# (a bad job line, the message it must give): one per error path of the reader
_BAD_LINES = {
    "not a number": ("{} 0 0 x 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1", "'x' is not a number"),
    "too few": ("{} 0 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 -1 -1", "expected 18 fields, found 17"),
    "not an integer": ("{} 0 0 10 1 -1 -1 1.5 -1 -1 1 1 1 1 1 1 -1 -1", "'1.5' is not an integer"),
    "negative": ("{} 0 0 10 1 -1 -1 -5 -1 -1 1 1 1 1 1 1 -1 -1", "negative value -5"),
    "job number -1": ("-1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1", "job number -1"),
}


def _bad_line_file(kinds_before: list[str], bad: str) -> tuple[str, int]:
    """An SWF text: two header lines, then for each entry of ``kinds_before`` a job line
    ("job") or a comment/blank line, then the bad line and one good job. Returns (text, the
    bad line's 1-based number, counted here from the list, not by the reader)."""
    lines = ["; Version: 2.2", "; Computer: test"]
    job = 1
    for kind in kinds_before:
        if kind == "job":
            lines.append(_GOOD.format(job))
            job += 1
        else:
            lines.append({"comment": "; a comment among the jobs", "blank": "",
                          "spaces": "   ", "indented": "  ; indented comment"}[kind])
    lines.append(_BAD_LINES[bad][0].format(job))
    bad_line = len(lines)
    lines.append(_GOOD.format(job + 1))
    return "\n".join(lines) + "\n", bad_line


@pytest.mark.parametrize("bad", sorted(_BAD_LINES))
def test_a_bad_line_after_comment_lines_names_its_own_line(tmp_path, bad):
    # comments and blanks between jobs and right before the bad line: the reader removes them
    # to parse, and must add them back when it numbers the line (file line 9 here)
    text, line = _bad_line_file(["job", "comment", "blank", "job", "comment", "comment"], bad)
    assert line == 9
    with pytest.raises(InputError) as err:
        swf.read(_write(tmp_path, text))
    assert err.value.line == line and _BAD_LINES[bad][1] in err.value.message


@given(st.lists(st.sampled_from(["job", "job", "comment", "blank", "spaces", "indented"]),
                max_size=12), st.sampled_from(sorted(_BAD_LINES)))
def test_bad_line_numbers_count_every_comment_and_blank_line(kinds, bad):
    text, line = _bad_line_file(kinds, bad)
    with pytest.raises(InputError) as err:
        _read_text(text)
    assert err.value.line == line, (text, err.value)


def test_extra_columns_and_validation_lines_count_comment_lines(tmp_path):
    """The first line with extra fields and the lines the validator names (from
    ``row_line_numbers``) count the comment and blank lines above them."""
    text = "\n".join(["; Version: 2.2", _GOOD.format(1), "; c", "", _GOOD.format(2), "; c",
                      _GOOD.format(3) + " 7", _GOOD.format(4)]) + "\n"
    table = swf.read(_write(tmp_path, text))
    from swftools.formats.swf.reader import row_line_numbers
    from swftools.metadata import TableMetadata

    assert TableMetadata.from_table(table).swf_extra_columns["first_line"] == 7
    assert row_line_numbers(table).tolist() == [2, 5, 7, 8]


# The 18 field names of the SWF definition (Feitelson's standard workload format, as
# ../shared/reference/swf.md tabulates them).
SWF_DEFINITION_NAMES = (
    "Job Number", "Submit Time", "Wait Time", "Run Time", "Number of Allocated Processors",
    "Average CPU Time Used", "Used Memory", "Requested Number of Processors", "Requested Time",
    "Requested Memory", "Status", "User ID", "Group ID", "Executable (Application) Number",
    "Queue Number", "Partition Number", "Preceding Job Number",
    "Think Time from Preceding Job")


@pytest.mark.parametrize("field", FIELDS, ids=[f.name for f in FIELDS])
def test_a_bad_token_names_its_field_by_the_definitions_words(field):
    """Every field's error says ``field N (words of the definition's name)``, in lower case
    prose (CPU excepted)."""
    line = "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1".split()
    line[field.value - 1] = "x7"
    with pytest.raises(InputError) as err:
        _read_text("; Version: 2.2\n" + " ".join(line) + "\n")
    assert err.value.field == field.label
    assert err.value.field.startswith(f"field {field.value} (")
    label = err.value.field[len(f"field {field.value} ("):-1]
    definition = SWF_DEFINITION_NAMES[field.value - 1].lower().replace("(", "").replace(")", "")
    assert label.replace("CPU", "cpu") == label.lower()  # no capital but CPU's
    assert set(label.lower().split()) <= set(definition.split()), (label, definition)


# --- issue 30 (mutation testing): file order, comment lines across chunks --------------------

def test_an_swf_file_keeps_its_job_order_and_other_tables_are_sorted(tmp_path):
    """SWF written back from SWF keeps the file's order, even out of submit order (PWA
    cleaned logs are); the same jobs from another format are written in submit order."""
    text = "".join(_GOOD.format(job).replace(" 0 0 10 ", f" {submit} 0 10 ", 1) + "\n"
                   for job, submit in ((1, 50), (2, 10), (3, 30)))
    table = swf.read(_write(tmp_path, text))
    assert to_bytes(table) == text.encode()
    swf.write(table, tmp_path / "out.swf")
    assert (tmp_path / "out.swf").read_bytes() == text.encode()
    other = jt.with_metadata(table, {"source_format": "nqsii"})
    lines = [line.split() for line in to_bytes(other).decode().splitlines()
             if not line.startswith(";")]
    assert [(line[0], line[1]) for line in lines] == [("2", "0"), ("3", "20"), ("1", "40")]


def test_comment_lines_among_jobs_survive_chunked_formatting(tmp_path, tiny_chunks):
    """Comment and blank lines among the jobs go back between the right job lines when the
    job lines are formatted in several chunks (threads)."""
    lines = [_GOOD.format(i) for i in range(1, 8)]
    lines[2:2] = ["; a comment among the jobs", ""]
    lines.insert(8, ";")
    text = "; Version: 2.2\n" + "\n".join(lines) + "\n"
    table = swf.read(_write(tmp_path, text))
    assert to_bytes(table) == text.encode()
    from swftools.formats.swf.writer import format_chunks, format_lines

    widths = jt.get_metadata(table)["swf_layout"]["widths"]
    assert len(format_chunks(table, widths)) == 3
    jobs = "".join(f"{line}\n" for line in lines if line and not line.startswith(";"))
    assert format_lines(table, widths) == jobs.encode()

