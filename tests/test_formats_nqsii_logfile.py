"""Large plain NQSII logs are parsed from the file (``logfile.load_log``), never held whole in
memory: the same table, metadata and errors as when the text is read whole."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings

from swftools import table as jt
from swftools.errors import InputError
from swftools.formats import nqsii
from swftools.formats.nqsii import logfile

from .strategies import aaic_jobs, nqsii_layouts
from .nqsii_support import RAW_HEADER, RAW_ROWS, _as_published, _render_oracle, _with_field

WHOLE, STREAMED = 1 << 62, 0  # STREAM_MIN_BYTES that never / always streams


def _read(path: Path, threshold: int):
    """The table read with the given streaming threshold, or the error text."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(logfile, "STREAM_MIN_BYTES", threshold)
        try:
            return nqsii.read(path)
        except InputError as exc:
            return f"InputError: {exc}"


def _streams(path: Path) -> bool:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(logfile, "STREAM_MIN_BYTES", STREAMED)
        return logfile.load_log(path).source is not None


@given(aaic_jobs(min_size=1), nqsii_layouts())
@settings(max_examples=60, deadline=None)
def test_a_streamed_log_reads_as_the_whole_text_does(table, layout):
    if layout["form"] == "published":
        table = _as_published(table)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.csv"
        text = _render_oracle(table, layout).encode()
        path.write_bytes(text)
        whole, streamed = _read(path, WHOLE), _read(path, STREAMED)
        # streamed unless ", " (rewritten in memory) or a lone job line without a line end
        assert _streams(path) == (layout["separator"] == "," and b"\n" in text.split(b"\n", 1)[1])
    assert jt.equal(whole, table)
    assert jt.equal(streamed, whole, metadata=True)


def _log(tmp_path: Path, rows: list[str], ending: str = "\n") -> Path:
    path = tmp_path / "log.csv"
    path.write_bytes((ending.join([RAW_HEADER, *rows]) + ending).encode())
    return path


@pytest.mark.parametrize("rows", [
    [RAW_ROWS[0], RAW_ROWS[1].rsplit(",", 1)[0], RAW_ROWS[2]],  # a missing field
    [RAW_ROWS[0], RAW_ROWS[1] + ",9", RAW_ROWS[2]],  # an extra field
    [RAW_ROWS[0], "", RAW_ROWS[1]],  # an empty line
    _with_field(2, "nodes", "x7"),
    _with_field(1, "submit", "2018-02-30 10:00:00"),
    _with_field(0, "walltime", "1:99:00"),
    [RAW_ROWS[0], RAW_ROWS[1].replace("bob", "b\udcffb"), RAW_ROWS[2]],  # not UTF-8
    [RAW_ROWS[0], RAW_ROWS[0], RAW_ROWS[2]],  # a repeated job id
])
def test_a_streamed_log_fails_as_the_whole_text_does(tmp_path, rows):
    path = tmp_path / "log.csv"
    path.write_bytes("\n".join([RAW_HEADER, *rows]).encode("utf-8", "surrogateescape") + b"\n")
    assert _streams(path)
    whole, streamed = _read(path, WHOLE), _read(path, STREAMED)
    assert isinstance(whole, str) and whole.startswith("InputError")
    assert streamed == whole


def test_what_needs_the_whole_text_is_read_whole(tmp_path):
    assert _streams(_log(tmp_path, RAW_ROWS))
    assert _streams(_log(tmp_path, RAW_ROWS, "\r\n"))
    spaced = _log(tmp_path, [RAW_ROWS[0], RAW_ROWS[1].replace(",", ", "), RAW_ROWS[2]])
    assert not _streams(spaced)  # separators followed by spaces are rewritten in memory
    assert jt.equal(_read(spaced, STREAMED), _read(spaced, WHOLE), metadata=True)
    nul = tmp_path / "nul.csv"
    nul.write_bytes((RAW_HEADER + "\n" + RAW_ROWS[0] + "\n\x00\n").encode())
    assert _read(nul, STREAMED) == _read(nul, WHOLE)  # the NUL byte is found by the scan
    assert "NUL byte" in _read(nul, WHOLE)
    packed = tmp_path / "log.csv.gz"
    packed.write_bytes(gzip.compress(_log(tmp_path, RAW_ROWS).read_bytes()))
    assert not _streams(packed)  # gzip content is decompressed whole
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(logfile, "STREAM_MIN_BYTES", 1 << 30)
        assert logfile.load_log(_log(tmp_path, RAW_ROWS)).source is None  # small: in memory


def _streams_with(path: Path, head: int, block: int) -> bool:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(logfile, "STREAM_MIN_BYTES", STREAMED)
        mp.setattr(logfile, "_HEAD_BYTES", head)
        mp.setattr(logfile, "_SCAN_BYTES", block)
        return logfile.load_log(path).source is not None


def test_the_scan_after_the_head_sees_every_block_boundary(tmp_path):
    """Past the bytes split_log looks at, the block scan alone decides: a separator followed
    by a space split over two blocks, or a NUL byte, keeps the log in memory (where it is
    rewritten or refused), whatever the block size; a plain log streams with any block size."""
    head = len(RAW_HEADER) + len(RAW_ROWS[0]) + 2  # the header and the first job line
    plain = _log(tmp_path, RAW_ROWS)
    spaced_path = tmp_path / "spaced.csv"
    spaced_path.write_bytes(plain.read_bytes().replace(b"3,carol", b"3, carol"))
    nul_path = tmp_path / "nul.csv"
    nul_path.write_bytes(plain.read_bytes().replace(b"carol", b"car\x00l"))
    body = len(spaced_path.read_bytes()) - len(RAW_HEADER) - 1  # scanned from the first job line
    for block in range(1, body + 2):
        assert _streams_with(plain, head, block), block
        assert not _streams_with(spaced_path, head, block), block
        with pytest.raises(InputError, match="NUL byte") as info:  # read whole: refused
            _streams_with(nul_path, head, block)
        assert info.value.line == 4


def test_text_errors_name_the_line_of_the_byte():
    for data, line in ((b"\nab\x00c\nd\ne\n", 2), (b"a\nb\nc\x00\nd\ne\nf\n", 3)):
        with pytest.raises(InputError) as info:
            logfile.check_text(data, "log.csv")
        assert info.value.line == line
    with pytest.raises(InputError) as info:
        logfile.check_utf8(b"a\nb\n\xe9\nc\nd\n", "log.csv", line_offset=1)
    assert info.value.line == 4


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("line, what", [(RAW_ROWS[1] + ",9", "14 fields"), ("x", "1 field"),
                                        ("", "empty line"), ("  ", "empty line")])
def test_a_wrong_field_count_is_one_error_and_no_other_output(tmp_path, capfd, line, what):
    """Python prints an exception raised in pyarrow's invalid-row callback on stderr ("Exception
    ignored in ..."; pytest turns it into a warning, here an error)."""
    path = _log(tmp_path, [RAW_ROWS[0], line, RAW_ROWS[2]])
    with pytest.raises(InputError) as info:
        nqsii.read(path)
    assert str(info.value) == f"{path}:3: {what}, expected 13 (one per header column)"
    assert info.value.value == line
    assert capfd.readouterr() == ("", "")


def test_a_job_line_longer_than_pyarrow_default_block_reads_both_ways(tmp_path):
    """pyarrow refuses a line over two blocks, and its default block is 1 MiB: a 3 MiB user
    name still reads, from memory and from the file."""
    name = "b" * (3 << 20)
    path = _log(tmp_path, [RAW_ROWS[0], RAW_ROWS[1].replace("bob", name), RAW_ROWS[2]])
    assert _streams(path)
    for threshold in (WHOLE, STREAMED):
        assert _read(path, threshold)["user"].to_pylist() == ["alice", name, "carol"]


def test_a_valid_body_has_no_invalid_row():
    """The docstring's "or None": no row with a wrong field count; else the first one, on its
    file line (body row r is line r + 2, after the header)."""
    assert logfile._first_invalid_row(b"1,2\n3,4\n", ["c0", "c1"]) is None
    assert logfile._first_invalid_row(b"1,2\n3\n5\n", ["c0", "c1"]) == (3, 1, "3")


def test_a_job_line_over_two_16_mib_blocks_is_refused_from_memory_and_from_the_file(tmp_path):
    """pyarrow refuses a line that straddles two block boundaries; both reads take 16 MiB
    blocks, so a line of just over 32 MiB is refused alike: in memory, the error with no
    field count to name. The file is sparse (its long field reads as NUL bytes, unwritten)."""
    long = (32 << 20) + 1
    path = tmp_path / "log.csv"
    with open(path, "wb") as fh:
        fh.write(b"a,b\n1,")
        fh.seek(long, 1)
        fh.write(b"\n2,3\n")
    log = logfile.RawLog(header=["a", "b"], body=b"1," + bytes(long) + b"\n2,3\n", separator=",",
                         line_ending="\n", final_newline=True, bom=False, estimated_lines=2)
    with pytest.raises(InputError, match=r"^log.csv: not a readable CSV log \(.*straddl"):
        logfile.parse_body(log, "log.csv")
    with pytest.raises(pa.ArrowInvalid, match="straddl"):
        logfile._read_file((str(path), 4), ["c0", "c1"])


def _load(path: Path, threshold: int, allow_empty: bool = False, head: int = 1 << 22):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(logfile, "STREAM_MIN_BYTES", threshold)
        mp.setattr(logfile, "_HEAD_BYTES", head)
        return logfile.load_log(path, allow_empty)


def _layout(log: logfile.RawLog) -> tuple:
    return (log.header, log.separator, log.line_ending, log.final_newline, log.bom,
            log.estimated_lines, log.load_body())


_WIDE = b"x" * 100_000


@pytest.mark.parametrize("data, estimate", [
    # the estimate is the job lines' bytes over the first job line's (its line end counted as
    # one byte), rounded down; a first line of more than 64 KiB counts as 64 KiB
    (b"a,b\n" + b"1,2\n" * 5, 20 // 4),
    (b"a,b\n" + b"1,2\n" * 4 + b"1,2", 19 // 4),
    (b"a,b\n" + b"1,2\n" * 3 + b"10,2\n", 17 // 4),
    (b"a;b\r\n" + b"1;2\r\n" * 3, 15 // 5),
    (b"\xef\xbb\xbfa,b\n" + b"12,2\n" + b"1,2\n" * 3, 17 // 5),
    (b"a,b\n\n1,2\n", 5 // 1),  # an empty first job line
    (b"\na,b\n1,2\n", 8 // 4),  # an empty header line
    (b"a\n1\n", 2 // 2),  # one short job line
    (b"a,b\n" + _WIDE + b",2\n" + _WIDE + b",3\n", 200_006 // 65_537),
])
def test_a_streamed_log_has_the_layout_and_estimate_of_the_whole_text(tmp_path, data, estimate):
    path = tmp_path / "log.csv"
    path.write_bytes(data)
    streamed, whole = _load(path, STREAMED), _load(path, WHOLE)
    assert streamed.source is not None and whole.source is None
    assert streamed.body == b""  # not loaded until asked for
    assert _layout(streamed) == _layout(whole)
    assert whole.estimated_lines == estimate and type(streamed.estimated_lines) is int


def test_a_header_longer_than_the_head_or_a_first_line_cut_by_it_is_read_whole(tmp_path):
    """The head read to split the header must hold the header and the first job line (or
    64 KiB of it): else the log is read whole, with the same layout."""
    path = tmp_path / "log.csv"
    path.write_bytes(b"a," + b"b" * 70_000 + b"\n1,2\n3,4\n")
    log = _load(path, STREAMED, head=1 << 16)  # no line end in the head
    assert log.source is None and log.header == ["a", "b" * 70_000] and log.body == b"1,2\n3,4\n"
    path.write_bytes(b"a,b\n1," + b"2" * 100 + b"\n3,4\n")
    log = _load(path, STREAMED, head=20)  # the head ends inside the first job line
    assert log.source is None and _layout(log) == _layout(_load(path, WHOLE))
    assert log.estimated_lines == 108 // 103


def test_a_first_job_line_of_64_kib_or_more_needs_no_line_end_to_stream(tmp_path):
    """split_log looks at the first job line, or at most 64 KiB of it: 64 KiB without a line
    end are enough to stream; a shorter lone line without its end is read whole."""
    path = tmp_path / "log.csv"
    for length, streams in ((1 << 16, True), ((1 << 16) - 1, False), (100_000, True)):
        path.write_bytes(b"a\n" + b"1" * length)
        log = _load(path, STREAMED)
        assert (log.source is not None) == streams, length
        assert _layout(log) == _layout(_load(path, WHOLE))


def test_a_spaced_separator_at_the_first_job_byte_is_read_whole(tmp_path):
    """The scan for ", " (rewritten in memory) starts at the first job line's first byte."""
    path = tmp_path / "log.csv"
    path.write_bytes(b"a,b\n, 2\n1,3\n")
    log = _load(path, STREAMED)
    assert log.source is None and log.body == b",2\n1,3\n"


@pytest.mark.parametrize("header", [b"a,b\xe9", b"a,\x00b"])
def test_a_bad_header_of_a_streamed_log_is_the_error_of_the_whole_text(tmp_path, header):
    path = tmp_path / "log.csv"
    path.write_bytes(header + b"\n1,2\n3,4\n")
    errors = []
    for threshold in (STREAMED, WHOLE):
        with pytest.raises(InputError) as info:
            _load(path, threshold)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and errors[0].startswith(f"{path}:1: ")


def test_a_log_of_exactly_the_threshold_streams(tmp_path):
    """STREAM_MIN_BYTES: "from this size on" logs are parsed from the file."""
    path = _log(tmp_path, RAW_ROWS)
    size = path.stat().st_size
    assert _load(path, size).source is not None
    assert _load(path, size + 1).source is None


def test_a_header_only_log_needs_allow_empty_both_ways(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(RAW_HEADER.encode() + b"\n")
    for threshold in (WHOLE, STREAMED):
        with pytest.raises(InputError, match="no job rows"):
            _load(path, threshold)
        log = _load(path, threshold, allow_empty=True)
        assert log.header == RAW_HEADER.split(",") and log.body == b"" and log.source is None
    with pytest.raises(InputError, match="no job rows"):
        logfile.load_log(path)  # allow_empty is False unless given


def test_a_log_that_cannot_be_opened_is_an_input_error_naming_it(tmp_path, monkeypatch):
    """Missing, a directory, not readable: located InputErrors in the CLI's words for the
    bare OSError, from the library's read as from load_log, streamed or whole."""
    missing, folder = tmp_path / "missing.csv", tmp_path / "folder.csv"
    folder.mkdir()
    expected = "an NQSII job log: a CSV file with a header row, plain or gzip"
    for threshold in (WHOLE, STREAMED):
        for path, why in ((missing, "no such file"),
                          (folder, "cannot open as a file: Is a directory [EISDIR]")):
            with pytest.raises(InputError) as info:
                _load(path, threshold)
            assert (info.value.path, info.value.message, info.value.line) == (str(path), why, None)
            assert info.value.expected == expected
            assert _read(path, threshold) == f"InputError: {path}: {why} (expected {expected})"

    def denied(path, *args, **kwargs):  # the tests may run as root, who reads anything
        raise PermissionError(13, "Permission denied", str(path))

    log = tmp_path / "log.csv"
    log.write_text(RAW_HEADER + "\n")
    for name in ("read_bytes", "is_gzip"):  # the first open, whole and streamed
        monkeypatch.setattr(logfile, name, denied)
    for threshold in (WHOLE, STREAMED):
        assert _read(log, threshold) == (f"InputError: {log}: cannot access: Permission denied "
                                         f"[EACCES] (expected {expected})")


@pytest.mark.parametrize("data, header, body", [
    (b"\na,b\n1,2\n", [], b"a,b\n1,2\n"),  # line 1 is the header, even empty
    (b"a,b \n1,2\n", ["a", "b "], b"1,2\n"),  # kept as written, to be written back
    (b"a,BOX\r\n1,2\r\n", ["a", "BOX"], b"1,2\r\n"),  # only the line end's \r goes
    (b"a, b\n1, 2\n", ["a", "b"], b"1,2\n"),  # spaces after separators dropped
])
def test_line_one_is_the_header_and_the_rest_the_job_lines(data, header, body):
    log = logfile.split_log(data, "log.csv")
    assert (log.header, log.body) == (header, body)


@pytest.mark.parametrize("data, layout", [
    (b"\xef\xbb\xbfa, b\r\n1, 2\r\n", (", ", "\r\n", True, True)),
    (b"a,b\n1,2", (",", "\n", False, False)),
])
def test_the_text_layout_is_recorded_to_be_written_back(data, layout):
    """Separator, line ending, final newline and byte-order mark, read off the text."""
    log = logfile.split_log(data, "log.csv")
    assert (log.separator, log.line_ending, log.final_newline, log.bom) == layout


@pytest.mark.parametrize("data", [b"a,b\n \n", b"a,b"])
def test_a_header_only_text_needs_allow_empty(data):
    with pytest.raises(InputError, match="no job rows"):
        logfile.split_log(data, "log.csv")
    log = logfile.split_log(data, "log.csv", allow_empty=True)
    assert log.header == ["a", "b"] and log.body == data[4:]


@pytest.mark.parametrize("lines, separator", [
    ([b"a, b", b"1, 2"], ", "),
    ([b"a, b", b"1,2"], ","),  # not every comma followed by a space
    ([b"a,  b", b"1,  2"], ","),  # two spaces: not one
    ([b"a", b"1"], ","),  # no comma at all
])
def test_the_separator_is_comma_space_only_when_every_comma_has_one_space(lines, separator):
    assert logfile._detect_separator(lines) == separator


@pytest.mark.parametrize("body, expected", [
    (b"1,   2, 3\n", b"1,2,3\n"),
    (b", 1, 2\n", b",1,2\n"),  # a separator at the very start
    (b'1, "a, b",  "c"", d", 2\n', b'1,"a, b","c"", d",2\n'),  # quoted values kept
    (b'"x",y\n', b'"x",y\n'),
])
def test_spaces_after_separators_go_but_not_inside_quoted_values(body, expected):
    assert logfile._drop_spaces_after_commas(body) == expected


@pytest.mark.parametrize("data, line", [(b"\x00a\nb\n", 1), (b"a\nb\x00\nc\x00\n", 2)])
def test_a_nul_byte_is_reported_on_the_line_of_the_first(data, line):
    with pytest.raises(InputError, match="NUL byte") as info:
        logfile.check_text(data, "log.csv")
    assert info.value.line == line


def test_a_header_that_is_not_utf8_is_reported_on_line_1():
    with pytest.raises(InputError, match="byte 0xe9") as info:
        logfile.split_log(b"a\xe9,b\n1,2\n", "log.csv")
    assert info.value.line == 1


@pytest.mark.parametrize("data", [b"a,b\r1,2\r3,4\r", b"\ra,b\n1,2\n",
                                  b"a," + b"b" * 200_000 + b"\n1,2\n"])
def test_a_header_csv_cannot_read_is_an_input_error_on_line_1(data):
    """A bare carriage return (classic Mac line ends: the whole file is line 1) or a field
    over the csv module's limit: a located InputError, not csv's own exception. The limit is
    process-wide and frictionless raises it on import: set to csv's default here."""
    import csv

    previous = csv.field_size_limit(131_072)
    try:
        with pytest.raises(InputError) as info:
            logfile.split_log(data, "log.csv")
    finally:
        csv.field_size_limit(previous)
    assert str(info.value).startswith("log.csv:1: header is not a CSV line: ")
    assert str(info.value).endswith(" (expected a header row ending in LF or CR LF)")
    assert info.value.line == 1
