"""The pod list's cells (issue 30): header forms, every cell check located, typed columns and
job-table columns re-derived from the CSV rows by a plain route (csv.DictReader, arithmetic)."""

from __future__ import annotations

import csv
import io
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import NO_JOB_ROWS, InputError
from swftools.formats.alibaba import pods as P
from swftools.formats.alibaba.schema import phase_codes, pod_columns
from tests.strategies import OPENB_POD_HEADER, openb_csv, openb_pod_rows

COLUMNS = OPENB_POD_HEADER.split(",")


def _where(text: str, **kw) -> tuple:
    with pytest.raises(InputError) as info:
        P.parse_pods(text, "f.csv", **kw)
    e = info.value
    return e.path, e.message, e.line, e.field, e.value, e.expected


def _row(**cells: str) -> str:
    base = dict(zip(COLUMNS, ["openb-pod-0001", "6000", "12288", "1", "460", "", "LS", "Running",
                              "100", "9000", "105"]))
    base.update(cells)
    return ",".join(base[c] for c in COLUMNS)


def _one(**cells: str) -> str:
    return OPENB_POD_HEADER + "\n" + _row(**cells) + "\n"


def _plain(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


# ------------------------------------------------------------------------ typed columns

@settings(max_examples=40, deadline=None)
@given(rows=openb_pod_rows(), data=st.data())
def test_columns_in_any_order_type_every_cell(rows, data):
    """Shuffled columns, blank lines, spaces around the header: the typed columns are the
    DictReader's cells, ints where the schema says so, None for an empty time or qos."""
    order = data.draw(st.permutations(COLUMNS))
    header = ", ".join(order) if data.draw(st.booleans()) else ",".join(order)
    lines = [header]
    for r in rows:
        cell = dict(zip(COLUMNS, r))
        lines.append(",".join(cell[c] for c in order))
        if data.draw(st.integers(0, 4)) == 0:
            lines.append("")
    text = ("\ufeff" if data.draw(st.booleans()) else "") + "\n".join(lines) + "\n"
    pods = P.parse_pods(text, "f.csv", allow_empty=True)
    plain = _plain(openb_csv(OPENB_POD_HEADER, rows))
    assert len(pods) == len(plain)
    opt = lambda v: int(v) if v else None  # noqa: E731
    assert pods.name == [r["name"] for r in plain]
    assert pods.job_id == [int("".join(c for c in r["name"] if c.isdigit())) for r in plain]
    for column in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli"):
        assert getattr(pods, column) == [int(r[column]) for r in plain], column
    for column in ("creation_time", "deletion_time", "scheduled_time"):
        assert getattr(pods, column) == [opt(r[column]) for r in plain], column
    assert pods.gpu_spec == [r["gpu_spec"] for r in plain]
    assert pods.qos == [r["qos"] or None for r in plain]
    assert pods.pod_phase == [r["pod_phase"] for r in plain]
    assert P.render(pods) == openb_csv(OPENB_POD_HEADER, rows)


@settings(max_examples=40, deadline=None)
@given(rows=openb_pod_rows(), origin=st.integers(0, 2_000_000_000))
def test_job_table_columns_by_plain_arithmetic(rows, origin):
    cols = P.to_columns(P.parse_pods(openb_csv(OPENB_POD_HEADER, rows), "f.csv",
                                     allow_empty=True), origin)
    plain = _plain(openb_csv(OPENB_POD_HEADER, rows))
    at = lambda v: int(v) + origin if v else None  # noqa: E731
    submit = [at(r["creation_time"]) for r in plain]
    start = [at(r["scheduled_time"]) for r in plain]
    finish = [at(r["deletion_time"]) for r in plain]
    codes = phase_codes()
    n = len(plain)
    assert cols["nodes"] == [1] * n
    for c in ("gpus", "gpus_per_node", "requested_procs"):
        assert cols[c] == [int(r["num_gpu"]) for r in plain], c
    assert cols["cpus"] == [math.ceil(int(r["cpu_milli"]) / 1000) for r in plain]
    assert cols["queue"] == [r["qos"] or None for r in plain]
    assert cols["termcode"] == [codes[r["pod_phase"]][0] for r in plain]
    assert cols["swf_status"] == [codes[r["pod_phase"]][1] for r in plain]
    assert (cols["submit_time"], cols["start_time"], cols["finish_time"]) == (submit, start, finish)
    assert cols["wait_s"] == [None if a is None or b is None else b - a
                              for a, b in zip(submit, start)]
    assert cols["walltime_s"] == [None if a is None or b is None else b - a
                                  for a, b in zip(start, finish)]


def test_a_pod_without_a_phase_has_no_outcome():
    pods = P.parse_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np7,1001,1,0,0\n", "f.csv")
    assert pods.pod_phase == [None] and pods.qos == [None] and pods.gpu_spec == [""]
    cols = P.to_columns(pods, 10)
    assert (cols["termcode"], cols["swf_status"], cols["cpus"]) == ([None], [None], [2])


def test_integer_cells():
    assert P.integer(" 12000.0 ", "f", 2, "c") == 12000
    assert P.integer("7.", "f", 2, "c") == 7
    assert P.integer("", "f", 2, "c", optional=True) is None
    assert P.integer("1000", "f", 2, "c", maximum=1000) == 1000
    for bad in ("12.5", "-1", "1e3", "", "x"):
        with pytest.raises(InputError) as info:
            P.integer(bad, "f", 2, "c")
        e = info.value
        assert (e.path, e.message, e.line, e.field, e.value, e.expected) == (
            "f", f"{bad!r} is not a non-negative integer", 2, "c", bad, "a non-negative integer")
    with pytest.raises(InputError) as info:
        P.integer("x", "f", 3, "t", optional=True)
    assert info.value.expected == "a non-negative integer, or empty"
    with pytest.raises(InputError) as info:
        P.integer("1001.0", "f", 4, "g", maximum=1000)
    e = info.value
    assert (e.message, e.line, e.field, e.value, e.expected) == (
        "1001 is above 1000", 4, "g", "1001.0", "an integer 0..1000")


# ---------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("num,milli,ok", [
    ("0", "0", True), ("0", "1", False), ("1", "0", False), ("1", "1", True), ("1", "1000", True),
    ("2", "1000", True), ("2", "999", False), ("8", "0", False)])
def test_gpu_milli_against_num_gpu(num, milli, ok):
    text = _one(num_gpu=num, gpu_milli=milli)
    if ok:
        pods = P.parse_pods(text, "f.csv")
        assert (pods.num_gpu, pods.gpu_milli) == ([int(num)], [int(milli)])
        return
    want = "0" if num == "0" else ("1..1000" if num == "1" else "1000")
    assert _where(text) == ("f.csv", f"gpu_milli {milli} with num_gpu {num}", 2, "gpu_milli", milli,
                            f"{want} when num_gpu is {num} (only a one-GPU pod shares its GPU)")


@pytest.mark.parametrize("created,deleted,scheduled,bad", [
    ("100", "100", "100", None), ("", "5", "9", "deletion_time"), ("9", "", "5", "scheduled_time"),
    ("5", "9", "", None), ("5", "4", "", "deletion_time"), ("", "", "", None),
    ("1", "8", "9", "deletion_time")])
def test_times_out_of_order_are_located(created, deleted, scheduled, bad):
    text = _one(creation_time=created, deletion_time=deleted, scheduled_time=scheduled)
    if bad is None:
        pods = P.parse_pods(text, "f.csv")
        assert pods.scheduled_time == [int(scheduled) if scheduled else None]
        return
    cells = {"creation_time": created, "deletion_time": deleted, "scheduled_time": scheduled}
    earlier = "creation_time" if cells["creation_time"] and int(cells[bad]) < int(
        cells["creation_time"]) else "scheduled_time"
    assert _where(text) == ("f.csv", f"{bad} {cells[bad]} is before {earlier} {cells[earlier]}",
                            2, bad, cells[bad], f">= {earlier} ({cells[earlier]})")


def test_names_numbers_and_phases_are_checked():
    assert _where(_one(name="pod-")) == (
        "f.csv", "pod name 'pod-' does not end in a number", 2, "name", "pod-",
        "a name ending in the pod number, e.g. openb-pod-0017")
    text = OPENB_POD_HEADER + "\n" + _row(name="a-7") + "\n\n" + _row(name="b-007") + "\n"
    assert _where(text) == ("f.csv", "pod number 7 repeats line 2", 4, "name", "b-007",
                            "pod numbers unique in the file")
    assert _where(_one(pod_phase=" Lost ")) == (
        "f.csv", "unknown pod phase 'Lost'", 2, "pod_phase", "Lost",
        "one of Succeeded, Failed, Running, Pending")
    assert P.parse_pods(_one(pod_phase=" Failed ", qos=" BE "), "f.csv").qos == ["BE"]
    with pytest.raises(InputError) as info:
        P.parse_pods(_one(qos="B\x01E"), "f.csv")
    assert (info.value.field, info.value.line) == ("qos", 2)


def test_headers_and_row_shapes():
    assert _where("") == ("f.csv", "empty file: no pod list header", 1, None, None,
                          ",".join(pod_columns()))
    assert _where(OPENB_POD_HEADER + "\n") == ("f.csv", NO_JOB_ROWS, 1, None, None,
                                               _where(OPENB_POD_HEADER + "\n")[5])
    assert len(P.parse_pods(OPENB_POD_HEADER + "\n \n", "f.csv", allow_empty=True)) == 0
    dup = OPENB_POD_HEADER + ",qos"
    e = _where(dup + "\n")
    assert e[1] == "the header is not the pod list header (unexpected 'duplicate column')"
    assert (e[2], e[3], e[4]) == (1, "header", dup)
    assert _where(OPENB_POD_HEADER.replace("qos", "queue") + "\n")[1] == (
        "the header is not the pod list header (no column 'qos')")
    assert _where(OPENB_POD_HEADER + ",extra\n")[1] == (
        "the header is not the pod list header (unexpected 'extra')")
    short = "name,cpu_milli,memory_mib,num_gpu,gpu_milli"
    assert _where(short + ",qos\n")[1] == (
        "the header is not the pod list header (no column 'gpu_spec')")
    assert _where(short + ",name\n")[1] == (
        "the header is not the pod list header (no column 'gpu_spec')")
    row = _row()
    assert _where(OPENB_POD_HEADER + "\n" + row + ",x\n") == (
        "f.csv", "12 fields, the header has 11", 2, None, row + ",x", "11 comma-separated fields")
    # the limit is process-wide and other libraries (frictionless) raise it: pin it here
    previous = csv.field_size_limit(1000)
    try:
        assert _where(OPENB_POD_HEADER + "\n" + "a" * 1001 + "\n") == (
            "f.csv", "malformed CSV (field larger than field limit (1000))", 2, None, None,
            "comma-separated fields, quotes balanced")
    finally:
        csv.field_size_limit(previous)


def test_node_list_errors_name_the_node_list():
    header = "sn,cpu_milli,memory_mib,gpu,model"
    with pytest.raises(InputError) as info:
        P.split_csv(header + "\n", "n.csv", tuple(header.split(",")), "node list",
                    allow_empty=False)
    e = info.value
    assert (e.message, e.line, e.expected) == (
        "no rows: the node list holds only a header", 1,
        "one row per line after the header of the node list")
    index, rows = P.split_csv(header + "\r\na,1,2,3,T4\r\n", "n.csv",
                              tuple(header.split(",")), "node list")
    assert index == {c: i for i, c in enumerate(header.split(","))}
    assert rows == [(2, ["a", "1", "2", "3", "T4"])]
    assert P.split_csv(header + "\n", "n.csv", tuple(header.split(",")), "node list") == (index, [])
    _, rows = P.split_csv(header + '\n"a\r\nb",1,2,3,T4\r\n', "n.csv", tuple(header.split(",")),
                          "node list")
    assert rows == [(3, ["a\r\nb", "1", "2", "3", "T4"])]


def test_name_format_and_render():
    assert P.name_format(P.Pods()) == {"prefix": "openb-pod-", "width": 4, "other": {}}
    pods = P.parse_pods(OPENB_POD_HEADER + "\n" + "\n".join(
        _row(name=n, gpu_spec=s) for n, s in (("x-007", "A|B"), ("x-8", "\"A,B\""), ("y-009", ""),
                                              ("x-010", ""))) + "\n", "f.csv")
    assert P.name_format(pods) == {"prefix": "x-", "width": 3,
                                   "other": {"8": "x-8", "9": "y-009"}}
    text = P.render(pods)
    assert _plain(text)[1]["gpu_spec"] == "A,B"
    assert text.splitlines()[2] == 'x-8,6000,12288,1,460,"A,B",LS,Running,100,9000,105'
    assert "\r" not in text


def test_a_byte_order_mark_before_the_header_is_dropped():
    pods = P.parse_pods("\ufeff" + _one(), "f.csv")
    assert (pods.name, pods.cpu_milli) == (["openb-pod-0001"], [6000])
    short = "\ufeffname,cpu_milli,memory_mib,num_gpu,gpu_milli\np2,3,4,0,0\n"
    assert P.parse_pods(short, "f.csv").name == ["p2"]


def test_old_mac_line_ends_and_rows_of_one_cell():
    assert P.parse_pods(_one().replace("\n", "\r"), "f.csv").name == ["openb-pod-0001"]
    assert _where(OPENB_POD_HEADER + "\nx\n")[1:5] == ("1 fields, the header has 11", 2, None, "x")
    assert _where(OPENB_POD_HEADER + "\n" + _row(name="") + "\n")[1:5] == (
        "pod name '' does not end in a number", 2, "name", "")


# ------------------------------------------------------------- every cell error, located

_NAME_EXPECTED = ("a name without control characters: no NUL, tab, line break, escape, DEL or "
                  "other character of Unicode category Cc")


@pytest.mark.parametrize("column,value,message,expected", [
    *[(c, "x", "'x' is not a non-negative integer", "a non-negative integer")
      for c in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli")],
    *[(c, "x", "'x' is not a non-negative integer", "a non-negative integer, or empty")
      for c in ("creation_time", "deletion_time", "scheduled_time")],
    ("gpu_milli", "1001", "1001 is above 1000", "an integer 0..1000"),  # a one-GPU pod: 1..1000
    ("name", "pod\x01-2", "'pod\\x01-2' holds a control character", _NAME_EXPECTED),
    ("qos", "B\x01E", "'B\\x01E' holds a control character", _NAME_EXPECTED),
])
def test_every_cell_error_names_its_file_line_and_column(column, value, message, expected):
    """The second pod (line 4, after a blank line) holds the bad cell: the error names the file,
    that line and the column, with the docstring's 'what was expected'."""
    text = (OPENB_POD_HEADER + "\n" + _row() + "\n\n"
            + _row(**{"name": "openb-pod-0002", column: value}) + "\n")
    assert _where(text) == ("f.csv", message, 4, column, value, expected)


def test_header_and_no_row_errors_name_the_file_and_every_form():
    short = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
    assert _where(OPENB_POD_HEADER + ",extra\n") == (
        "f.csv", "the header is not the pod list header (unexpected 'extra')", 1, "header",
        OPENB_POD_HEADER + ",extra",
        "the columns " + ",".join(COLUMNS) + " (any order), or the 5 columns " + ",".join(short))
    header = ("sn", "model")
    with pytest.raises(InputError) as info:
        P.split_csv("sn,model\n", "n.csv", header, "node list", allow_empty=False)
    assert (info.value.path, info.value.line) == ("n.csv", 1)
    with pytest.raises(InputError) as info:
        P.split_csv("model\n", "n.csv", header, "node list")
    e = info.value
    assert (e.path, e.message, e.value, e.expected) == (
        "n.csv", "the header is not the node list header (no column 'sn')", "model",
        "the columns sn,model (any order)")
