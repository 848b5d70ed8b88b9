"""The Batsim workload writer and reader (``swftools.formats.batsim.workload``) against a
brute-force recomputation of the module doc's mapping, and hand-worked cases: where the machine
size comes from, every skip reason and its count, the loss report, the file layout, both files
refused, and what the reader takes, refuses and locates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import table as jt
from swftools.errors import InputError, UsageError, count
from swftools.formats.batsim import workload
from tests.strategies import batsim_rows

from .test_formats_batsim import batsim_load, platform_hosts

_WORD = {"gpu": "GPUs", "processor": "processors"}
_DROPPED = (
    (("start_time", "finish_time", "wait_s"),
     "the recorded schedule is dropped: a Batsim workload holds requests, "
     "Batsim simulates the rest"),
    (("termcode", "swf_status"),
     "the recorded outcome is dropped: delay jobs always complete in Batsim"),
    (("nodes", "gpus_per_node"), "the job shape is dropped: res holds the total only"),
    (("user", "group", "queue", "partition", "executable"),
     "who and where is dropped: a Batsim job has no such field"),
    (("requested_procs", "avg_cpu_time_s", "used_memory_kb", "requested_memory_kb",
      "preceding_job_id", "think_time_s"),
     "SWF-only fields are dropped: a Batsim job has no such field"),
    (("cpus",), "processors beside GPUs are dropped: res counts one kind of resource"),
    (("recorded_walltime_s",), "the log's own run time is dropped: walltime is finish - start"),
)


def _expected(cols: dict, meta: dict, nb_res: int | None) -> tuple[dict, list[str], list[dict]]:
    """The workload document, the loss report and the rows written (in file order), worked out
    row by row from the module doc: the first skip reason that applies, a repeated id's first
    row written, submit order with ties in row order, subtime from the first submit written."""
    n = len(cols["job_id"])
    rows = [{k: v[i] for k, v in cols.items()} for i in range(n)]
    unit = meta.get("processor_unit") or ("processor" if meta.get("source_format") == "swf"
                                          else "gpu")
    counts = dict.fromkeys(("submit", "run", "zero", "res", "wide", "dup"), 0)
    kept, seen = [], set()
    for r in rows:
        if r["submit_time"] is None:
            reason = "submit"
        elif r["walltime_s"] is None:
            reason = "run"
        elif r["walltime_s"] <= 0:
            reason = "zero"
        elif r["gpus"] is None or r["gpus"] <= 0:
            reason = "res"
        elif nb_res is not None and r["gpus"] > nb_res:
            reason = "wide"
        elif r["job_id"] in seen:
            reason = "dup"
        else:
            kept.append(r)
            seen.add(r["job_id"])
            continue
        counts[reason] += 1
    n_res = nb_res if nb_res is not None else max([r["gpus"] for r in kept], default=1)
    kept.sort(key=lambda r: r["submit_time"])  # stable: ties in row order
    origin = min((r["submit_time"] for r in kept), default=0)
    word = _WORD[unit]
    why = {"submit": "submit_time unknown",
           "run": "never ran (walltime_s unknown): a delay profile needs the run time",
           "zero": "run time 0 s: Batsim delay profiles must last more than 0 s",
           "res": f"requesting no {word} or an unknown number (gpus)",
           "wide": f"requesting more than nb_res = {n_res} {word} (from the nb_res option)",
           "dup": "repeating a job_id already written (Batsim refuses duplicate ids)"}
    losses = [f"{count(c, 'job')} skipped: {why[k]}" for k, c in counts.items() if c]
    zero = sum(r["requested_walltime_s"] == 0 for r in kept)
    if zero:
        losses.append(f"requested_walltime_s: {count(zero, 'job')} with a 0 s limit, written as "
                      "walltime -1 (no limit): Batsim wants -1 or more than 0")
    for names, text in _DROPPED:
        held = [c for c in names if c in cols and any(r[c] is not None for r in kept)]
        if held:
            losses.append(f"{', '.join(held)}: {text}")
    extra = {"time_origin_s": origin, "processor_unit": unit}
    extra.update({k: meta[k] for k in ("site", "time_zone") if k in meta})
    doc = {"description": f"written by swftools; res counts {word}; "
                          "delay profiles replay the recorded run times",
           "nb_res": n_res, "swftools": extra,
           "jobs": [{"id": str(r["job_id"]), "subtime": r["submit_time"] - origin,
                     "walltime": r["requested_walltime_s"] if (r["requested_walltime_s"] or 0) > 0
                     else -1, "res": r["gpus"], "profile": f"delay_{r['walltime_s']}"}
                    for r in kept],
           "profiles": {f"delay_{d}": {"type": "delay", "delay": d}
                        for d in sorted({r["walltime_s"] for r in kept})}}
    return doc, losses, kept


def _layout(doc: dict) -> str:
    """The text the module doc promises: one member a line, ``swftools`` with sorted keys, one
    job and one profile a line, each as ``json.dumps`` prints it."""
    def listed(items: list[str]) -> list[str]:
        return [f"    {item}," for item in items[:-1]] + [f"    {item}" for item in items[-1:]]

    lines = ["{", f'  "description": {json.dumps(doc["description"])},',
             f'  "nb_res": {json.dumps(doc["nb_res"])},',
             f'  "swftools": {json.dumps(doc["swftools"], sort_keys=True)},', '  "jobs": [',
             *listed([json.dumps(j) for j in doc["jobs"]]), "  ],", '  "profiles": {',
             *listed([json.dumps({k: v})[1:-1] for k, v in doc["profiles"].items()]), "  }", "}"]
    return "\n".join(lines) + "\n"


@settings(max_examples=50, deadline=None)
@given(batsim_rows(), st.none() | st.integers(1, 9))
def test_render_matches_a_row_by_row_recomputation(case, nb_res):
    cols, meta = case
    table = jt.from_columns(cols, meta)
    text, xml, losses = workload.render(table, nb_res=nb_res)
    doc, want_losses, _ = _expected(cols, meta, nb_res)
    assert json.loads(text) == doc
    assert list(json.loads(text)) == ["description", "nb_res", "swftools", "jobs", "profiles"]
    assert text == _layout(doc)
    assert losses == want_losses
    assert xml.count("<cluster ") == 2 and f'radical="0-{doc["nb_res"] - 1}"' in xml


@settings(max_examples=25, deadline=None)
@given(batsim_rows())
def test_write_then_read_gives_back_what_batsim_carries(tmp_path_factory, case):
    cols, meta = case
    tmp = tmp_path_factory.mktemp("w")
    table = jt.from_columns(cols, meta)
    losses = workload.write(table, tmp / "w.json")
    doc, want_losses, kept = _expected(cols, meta, None)
    assert losses == want_losses
    loaded = batsim_load(tmp / "w.json")
    assert loaded["nb_res"] == doc["nb_res"] == len(platform_hosts(tmp / "w.platform.xml")[0])
    if not kept:
        with pytest.raises(InputError, match="no job rows"):
            workload.read(tmp / "w.json")
    back = workload.read(tmp / "w.json", allow_empty=True)
    want = sorted(kept, key=lambda r: (r["submit_time"], r["job_id"]))
    assert back.to_pylist() == [
        {**dict.fromkeys(back.column_names), "job_id": r["job_id"],
         "submit_time": r["submit_time"], "walltime_s": r["walltime_s"], "gpus": r["gpus"],
         "requested_walltime_s": r["requested_walltime_s"]
         if (r["requested_walltime_s"] or 0) > 0 else None} for r in want]
    got = jt.get_metadata(back)
    assert got["source_format"] == "batsim" and got["source_file"] == "w.json"
    assert got["batsim"] == {"nb_res": doc["nb_res"]}
    assert got["processor_unit"] == doc["swftools"]["processor_unit"]
    for key in ("site", "time_zone"):
        assert got.get(key) == meta.get(key)


# --- the machine size ------------------------------------------------------------------------

def _one_wide_table(meta: dict | None = None):
    """Two jobs of 2 and 5 units: a size of 2 to 4 skips the second."""
    return jt.from_columns({"job_id": [1, 2], "submit_time": [10, 20], "walltime_s": [3, 4],
                            "gpus": [2, 5]}, meta or {})


def _size(table, **options) -> tuple[int, list[str]]:
    text, _, losses = workload.render(table, **options)
    return json.loads(text)["nb_res"], losses


def test_the_nb_res_option_wins_and_is_named_in_the_report():
    table = _one_wide_table({"site": "aaic", "batsim": {"nb_res": 3}})
    assert _size(table, nb_res=4) == (4, [
        "1 job skipped: requesting more than nb_res = 4 GPUs (from the nb_res option)"])
    assert _size(table, nb_res=1)[0] == 1  # 1 is a size; both jobs are then too wide
    assert _size(table, nb_res=1)[1][0].startswith("2 jobs skipped: requesting more than")


@pytest.mark.parametrize("bad", [0, -3])
def test_an_nb_res_below_one_is_refused(bad):
    with pytest.raises(UsageError) as info:
        workload.render(_one_wide_table(), nb_res=bad)
    assert str(info.value) == f"nb_res must be a positive number of resources, not {bad}"


def test_the_site_gives_the_size_before_the_table():
    from swftools.site import preset

    big = preset("aaic").max_gpus
    table = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 1], "walltime_s": [3, 4],
                             "gpus": [2, big + 1]}, {"batsim": {"nb_res": 3}})
    assert _size(table, site="aaic") == (big, [
        f"1 job skipped: requesting more than nb_res = {big} GPUs (from site aaic)"])
    # the site the table names, when none is given
    named = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 1], "walltime_s": [3, 4],
                             "gpus": [2, big + 1]}, {"site": "aaic", "batsim": {"nb_res": 3}})
    assert _size(named)[0] == big


@pytest.mark.parametrize("earlier,size,origin", [
    (3, 3, "the Batsim workload read"), (1, 1, "the Batsim workload read"),
    (0, 5, None), (-2, 5, None), ("3", 5, None), (None, 5, None)])
def test_the_size_of_the_workload_read(earlier, size, origin):
    table = _one_wide_table({"batsim": {"nb_res": earlier}})
    got, losses = _size(table)
    assert got == size
    if origin is None:
        assert losses == []  # the widest job: none too wide
    else:
        assert losses[0].endswith(f"GPUs (from {origin})")


@pytest.mark.parametrize("header,size", [
    ([["MaxProcs", "3"]], 3), ([["MaxProcs", " 4 "]], 4), ([["MaxProcs", "1"]], 1),
    ([["MaxProcs", "0"]], 5), ([["MaxProcs", "-3"]], 5), ([["MaxProcs", "x"]], 5),
    ([["MaxNodes", "3"]], 5), ([["Version", "2.2"], ["MaxProcs", "4"]], 4), ([], 5)])
def test_the_size_from_an_swf_header(header, size):
    table = _one_wide_table({"source_format": "swf", "swf_header": header})
    got, losses = _size(table)
    assert got == size
    if size < 5:
        wide = count(sum(g > size for g in (2, 5)), "job")
        assert losses == [f"{wide} skipped: requesting more than nb_res = {size} processors "
                          "(from SWF header MaxProcs)"]
    else:
        assert losses == []


def test_the_workload_read_comes_before_the_swf_header():
    table = _one_wide_table({"source_format": "swf", "swf_header": [["MaxProcs", "2"]],
                             "batsim": {"nb_res": 4}})
    assert _size(table)[0] == 4


def test_with_no_size_and_no_job_written_the_machine_has_one_resource():
    table = jt.from_columns({"job_id": [1], "submit_time": [5], "walltime_s": [0], "gpus": [3]})
    text, xml, losses = workload.render(table)
    doc = json.loads(text)
    assert doc["nb_res"] == 1 and doc["jobs"] == [] and doc["profiles"] == {}
    assert doc["swftools"]["time_origin_s"] == 0
    assert 'radical="0-0"' in xml
    assert losses == ["1 job skipped: run time 0 s: Batsim delay profiles must last more than 0 s"]


# --- a hand-worked table -----------------------------------------------------------------------

def test_a_hand_worked_table():
    # rows: 9 (submit 50) and 4 (submit 20, tie with 3 at 20 after it), 3 repeated, 7 too wide
    table = jt.from_columns({
        "job_id": [9, 3, 4, 3, 7, 8],
        "submit_time": [50, 20, 20, 30, 40, None],
        "walltime_s": [5, 7, 5, 9, 1, 2],
        "gpus": [1, 2, 3, 1, 9, 1],
        "requested_walltime_s": [0, 60, None, 5, 5, 5],
        "user": [None, None, None, "a", None, None],
        "cpus": [None, 4, None, None, None, None]},
        {"processor_unit": "processor", "time_zone": "UTC"})
    text, _, losses = workload.render(table, nb_res=8)
    assert text == (
        '{\n'
        '  "description": "written by swftools; res counts processors; delay profiles replay '
        'the recorded run times",\n'
        '  "nb_res": 8,\n'
        '  "swftools": {"processor_unit": "processor", "time_origin_s": 20, "time_zone": "UTC"},\n'
        '  "jobs": [\n'
        '    {"id": "3", "subtime": 0, "walltime": 60, "res": 2, "profile": "delay_7"},\n'
        '    {"id": "4", "subtime": 0, "walltime": -1, "res": 3, "profile": "delay_5"},\n'
        '    {"id": "9", "subtime": 30, "walltime": -1, "res": 1, "profile": "delay_5"}\n'
        '  ],\n'
        '  "profiles": {\n'
        '    "delay_5": {"type": "delay", "delay": 5},\n'
        '    "delay_7": {"type": "delay", "delay": 7}\n'
        '  }\n'
        '}\n')
    assert losses == [
        "1 job skipped: submit_time unknown",
        "1 job skipped: requesting more than nb_res = 8 processors (from the nb_res option)",
        "1 job skipped: repeating a job_id already written (Batsim refuses duplicate ids)",
        "requested_walltime_s: 1 job with a 0 s limit, written as walltime -1 (no limit): "
        "Batsim wants -1 or more than 0",
        "cpus: processors beside GPUs are dropped: res counts one kind of resource"]


def test_counts_above_one_are_plural():
    table = jt.from_columns({"job_id": [1, 2, 3, 4], "submit_time": [0, 0, 0, 0],
                             "walltime_s": [None, None, 3, 3], "gpus": [1, 1, 1, 1],
                             "requested_walltime_s": [5, 5, 0, 0]})
    assert workload.render(table)[2] == [
        "2 jobs skipped: never ran (walltime_s unknown): a delay profile needs the run time",
        "requested_walltime_s: 2 jobs with a 0 s limit, written as walltime -1 (no limit): "
        "Batsim wants -1 or more than 0"]


def test_a_gpu_table_says_gpus():
    table = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 0], "walltime_s": [3, 3],
                             "gpus": [0, 1]}, {"source_format": "nqsii"})
    text, _, losses = workload.render(table)
    assert json.loads(text)["description"].startswith("written by swftools; res counts GPUs;")
    assert losses == ["1 job skipped: requesting no GPUs or an unknown number (gpus)"]


# --- write -------------------------------------------------------------------------------------

def test_write_puts_the_rendered_text_in_both_files(tmp_path):
    table = _one_wide_table({"site": "Ōsaka lab"})
    losses = workload.write(table, tmp_path / "w.json", nb_res=4, platform=tmp_path / "p.xml")
    text, xml, want = workload.render(table, nb_res=4)
    assert losses == want
    assert (tmp_path / "w.json").read_bytes() == text.encode("utf-8")
    assert (tmp_path / "p.xml").read_bytes() == xml.encode("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.xml", "w.json"]


def test_the_platform_cannot_be_the_workload(tmp_path):
    with pytest.raises(UsageError) as info:
        workload.write(_one_wide_table(), tmp_path / "w.json", platform=tmp_path / "." / "w.json",
                       force=True)
    assert "the platform file cannot be the workload file" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_workload_is_kept_and_no_platform_written(tmp_path):
    (tmp_path / "w.json").write_text("mine")
    with pytest.raises(UsageError, match="already exists"):
        workload.write(_one_wide_table(), tmp_path / "w.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.json"]
    assert (tmp_path / "w.json").read_text() == "mine"
    workload.write(_one_wide_table(), tmp_path / "w.json", force=True)
    assert batsim_load(tmp_path / "w.json")["nb_res"] == 5


# --- read --------------------------------------------------------------------------------------

def _read(tmp_path: Path, doc: dict | str, **options):
    path = tmp_path / "in.json"
    if isinstance(doc, dict) and isinstance(doc.get("jobs"), list):  # job k on line k + 2
        rest = json.dumps({k: v for k, v in doc.items() if k != "jobs"})
        doc = '{"jobs": [\n' + ",\n".join(map(json.dumps, doc["jobs"])) + "\n], " + rest[1:]
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return workload.read(path, **options)


def _doc(*jobs: dict, **members) -> dict:
    return {"nb_res": 4, "jobs": list(jobs),
            "profiles": {"p": {"type": "delay", "delay": 3}, "m": {"type": "parallel"}},
            **members}


def _job(ident, subtime=0, **members) -> dict:
    return {"id": ident, "subtime": subtime, "res": 1, "profile": "p", **members}


def test_read_takes_ids_plain_or_after_the_workload_name(tmp_path):
    table = _read(tmp_path, _doc(_job("w0!12", 5), _job(7, 5), _job("123456789012345678", 6)))
    assert table.column("job_id").to_pylist() == [7, 12, 123456789012345678]


@pytest.mark.parametrize("ident", ["1a", "", "w0!", "1234567890123456789", "\u0661", "+5",
                                   "1.5"])
def test_read_refuses_an_id_that_is_no_whole_number(tmp_path, ident):
    with pytest.raises(InputError) as info:
        _read(tmp_path, _doc(_job("2"), _job(ident)))
    err = info.value
    assert err.message == "job id is not a whole number" and err.line == 3
    assert err.field == "jobs/1/id" and err.value == ident
    assert err.expected == "a decimal job number, plain or as 'workload!number'"


def test_read_refuses_a_repeated_id_and_a_missing_profile(tmp_path):
    with pytest.raises(InputError) as info:
        _read(tmp_path, _doc(_job("5"), _job("x!5")))
    err = info.value
    assert err.message == "job id repeated (Batsim refuses duplicate ids)"
    assert err.field == "jobs/1/id" and err.value == "x!5" and err.line == 3
    assert err.expected == "each job id once"
    with pytest.raises(InputError) as info:
        _read(tmp_path, _doc(_job("5"), _job("6", profile="q")))
    err = info.value
    assert err.message == "the job's profile is not in profiles" and err.line == 3
    assert err.field == "jobs/1/profile" and err.value == "q"
    assert err.expected == "a profile name defined under profiles"


def test_read_maps_each_member(tmp_path):
    doc = _doc(_job("1", 10.6, walltime=100.4), _job("2", 3, walltime=-1),
               _job("3", 2, res=3, profile="m"), _job("4", 2.4),
               swftools={"time_origin_s": 1000, "processor_unit": "processor", "site": "lab",
                         "time_zone": "UTC"})
    table = _read(tmp_path, doc)
    assert [(r["job_id"], r["submit_time"], r["walltime_s"], r["requested_walltime_s"],
             r["gpus"]) for r in table.to_pylist()] == [
        (3, 1002, None, None, 3), (4, 1002, 3, None, 1), (2, 1003, 3, None, 1),
        (1, 1011, 3, 100, 1)]
    meta = jt.get_metadata(table)
    assert {k: meta.get(k) for k in ("source_format", "source_file", "processor_unit", "site",
                                     "time_zone", "batsim")} == {
        "source_format": "batsim", "source_file": "in.json", "processor_unit": "processor",
        "site": "lab", "time_zone": "UTC", "batsim": {"nb_res": 4}}


def test_read_without_the_swftools_object(tmp_path):
    table = _read(tmp_path, _doc(_job("1", 7)))
    assert table.column("submit_time").to_pylist() == [7]
    meta = jt.get_metadata(table)
    assert "processor_unit" not in meta and "site" not in meta and "time_zone" not in meta


def test_read_of_no_job(tmp_path):
    with pytest.raises(InputError) as info:
        _read(tmp_path, _doc())
    err = info.value
    assert err.message == "no job rows: the workload's jobs array is empty"
    assert err.field == "jobs" and err.path == str(tmp_path / "in.json")
    assert err.expected == "at least one job, or --allow-empty"
    assert _read(tmp_path, _doc(), allow_empty=True).num_rows == 0


def test_read_locates_the_job_of_each_error(tmp_path):
    text = ('{"nb_res": 4, "jobs": [\n'
            '  {"id": "1", "subtime": 0, "res": 1, "profile": "p"},\n'
            '\n'
            '  {"id": "2",\n   "subtime": 1, "res": 1, "profile": "p"},\n'
            '  {"id": "q", "subtime": 2, "res": 1, "profile": "p"}\n'
            '], "profiles": {"p": {"type": "delay", "delay": 3}}}')
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    assert info.value.line == 6 and info.value.field == "jobs/2/id"
    # a job past the last "subtime" line (two jobs on one line) has no line
    text = ('{"nb_res": 4, "jobs": [\n'
            '  {"id": "1", "subtime": 0, "res": 1, "profile": "p"}, {"id": "q", "subtime": 1,'
            ' "res": 1, "profile": "p"}\n'
            '], "profiles": {"p": {"type": "delay", "delay": 3}}}')
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    assert info.value.line is None and info.value.field == "jobs/1/id"
    text = text.replace('"res": 1, "profile": "p"}\n', '"res": -1, "profile": "p"}\n')
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    assert info.value.line is None and info.value.field == "jobs/1/res"
    assert info.value.value == "-1"


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity"])
def test_read_refuses_non_numbers_on_their_line(tmp_path, word):
    text = ('{"nb_res": 4,\n "jobs": [\n  {"id": "1", "subtime": 0, "res": 1, "profile": "p"}\n'
            f'], "profiles": {{"p": {{"type": "delay",\n "delay": {word}}}}}}}')
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    err = info.value
    assert err.line == 5 and err.message == f"{word} is not a JSON number" and err.value == word
    assert err.expected == "finite numbers (JSON has no NaN or Infinity)"


def test_read_of_text_that_is_no_json(tmp_path):
    with pytest.raises(InputError) as info:
        _read(tmp_path, '{"nb_res": 4,\n\n "jobs": [}')
    assert info.value.line == 3 and info.value.message.startswith("not JSON: ")
    assert info.value.expected == "a Batsim JSON workload"


def test_a_schema_error_names_the_value_and_the_schema(tmp_path):
    with pytest.raises(InputError) as info:
        _read(tmp_path, _doc(_job("1", res="many")))
    err = info.value
    assert err.field == "jobs/0/res" and err.value == '"many"'
    assert err.path == str(tmp_path / "in.json")
    with pytest.raises(InputError) as info:
        _read(tmp_path, _doc(_job("1", res="m" * 100)))
    assert info.value.value == '"' + "m" * 79  # the value cut to 80 characters
    assert err.expected == "a Batsim workload (schemas/formats/batsim-workload.schema.json)"
    with pytest.raises(InputError) as info:
        _read(tmp_path, json.dumps([1]))
    assert info.value.field is None and info.value.line is None
    # jobs not an array: no job to locate
    with pytest.raises(InputError) as info:
        _read(tmp_path, _doc(jobs=5))
    assert info.value.field == "jobs" and info.value.line is None


def test_a_job_refused_as_a_whole_is_located(tmp_path):
    text = ('{"nb_res": 4, "jobs": [\n'
            '  {"id": "1", "subtime": 0, "res": 1, "profile": "p"},\n'
            '  {"id": "2", "subtime": 0, "profile": "p"}\n'
            '], "profiles": {"p": {"type": "delay", "delay": 3}}}')
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    assert info.value.field == "jobs/1" and info.value.line == 3
