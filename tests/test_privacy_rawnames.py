"""The raw names the leak audit searches for: sacct and PBS lines, host lists, table metadata,
telemetry exports."""

from __future__ import annotations

import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.privacy import rawnames
from swftools.privacy.rawnames import (
    MAX_EXPANDED,
    Collector,
    expand_node_run,
    file_stem_names,
    from_metadata,
    from_table,
    host_names,
    host_of_label,
    node_column,
    pbs_line,
    raw_names,
    slurm_line,
    telemetry_names,
)

T0 = 1_700_000_000


def _collect(fn, *args) -> dict[str, list[str]]:
    into = Collector()
    fn(*args, into)
    return into.result()


# --- Collector -------------------------------------------------------------------------------

def test_collector_drops_blanks_and_placeholders_and_sorts():
    into = Collector()
    for value in (None, "", "  ", "None", "none assigned", "(null)", "UNKNOWN", " zed ", "amy",
                  "zed"):
        into.add("user", value)
    assert into.result() == {"user": ["amy", "zed"]}


def test_collector_splits_user_at_host_and_expands_host_lists():
    into = Collector()
    into.add("user@host", "bob@login3")
    into.add("user@host", "carol")
    into.add("host", "gpu[1-2]")
    into.add("group", "lab")
    into.add("job", "run_7")
    assert into.result() == {"user": ["bob", "carol"], "group": ["lab"],
                             "host": ["gpu", "gpu1", "gpu2", "login3"], "job": ["run_7"]}


def test_collector_update_merges_other_names_and_new_kinds():
    into = Collector()
    into.add("user", "amy")
    into.update({"user": ["bob", "amy"], "extra": ["x"]})
    assert into.result() == {"user": ["amy", "bob"], "extra": ["x"]}
    assert Collector().result() == {}


# --- host lists ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, names", [
    ("node01", ["node01"]),
    ("gpu[01-02],login7", ["gpu01", "gpu02", "login7", "gpu"]),
    ("a[1-2]b[1-2]", ["a1b1", "a1b2", "a2b1", "a2b2"]),         # prefixes a and b are too short
    ("abc[1,3]", ["abc1", "abc3", "abc"]),
    ("secrethost[07-", ["secrethost"]),
    ("gpu[3-1]", ["gpu"]),                                        # does not parse
    ("ab,12", ["ab"]),                                            # expanded names need a letter
    ("-x1-.", ["-x1-."]),                                         # parsed: kept as written
    ("n[1-999999999]", []),
    ("big[1-4096]", [f"big{i}" for i in range(1, 4097)] + ["big"]),
    ("big[1-4097]", ["big"]),
    ("big[1-64]x[1-64]", ["big"]),                                 # 4,096 names: expanded ...
    ("big[1-64]x[1-65]", ["big"]),                                 # ... 4,160: prefixes only
    ("lab[a,b,c-d]", ["lab"]),                                     # letters do not expand
    ("abc[]", ["abc"]),
    ("gpu[1-2]:x(node9)", ["gpu", "node9"]),
])
def test_host_names(text, names):
    got = host_names(text)
    if text == "big[1-64]x[1-64]":
        assert len(got) == 4096 + 1 and got[-1] == "big"
        return
    assert got == names


def test_host_names_of_a_broken_list_cut_at_separators_and_trim_punctuation():
    assert host_names("(alpha1:ncpus=4)+beta_2/0*8 =gamma3[x") == [
        "alpha1", "ncpus", "beta_2", "gamma3"]
    assert host_names("--ab-.[1-") == []       # "ab" once trimmed: too short
    assert host_names(".abc.[1-") == ["abc"]


# --- sacct and PBS lines ---------------------------------------------------------------------

def test_slurm_line_reads_identifying_columns_case_insensitively():
    header = ["JobID", " User", "Group", "Account", "JobName", "NodeList", "BatchHost",
              "ReqNodeList", "ExcNodeList", "Exclude", "Cluster", "State"]
    line = "1|amy|lab|proj|train_1|gpu[1-2]|gpu1|req9|exc9|exl9|clus9|COMPLETED"
    assert _collect(slurm_line, header, line) == {
        "user": ["amy"], "group": ["lab", "proj"], "job": ["train_1"],
        "host": ["clus9", "exc9", "exl9", "gpu", "gpu1", "gpu2", "req9"]}
    assert _collect(slurm_line, header, "2|bob") == {"user": ["bob"]}   # a short line


def test_pbs_line_reads_attributes_of_a_record_and_of_a_malformed_line():
    line = ("04/01/2023 10:00:00;E;123.srv9;user=amy euser=eve group=lab egroup=elab "
            "account=acc Job_Name=my job name exec_host=n01/0*8+n02/0-3 "
            "exec_vnode=(v01:ncpus=4)+(v02:ncpus=4) exec_host2=h2x:15002/0 "
            "Resource_List.nodes=2:ppn=8+r03 owner=own@o9x requestor=req@r9x queue=q1 x=y")
    assert _collect(pbs_line, line) == {
        "user": ["amy", "eve", "own", "req"],
        "group": ["acc", "elab", "lab"],
        "host": ["h2x", "n01", "n02", "o9x", "r03", "r9x", "srv9", "v01", "v02"],
        "job": ["job", "my", "name"]}
    # no server part, and a word after a non-job attribute is no job name
    assert _collect(pbs_line, "04/01/2023 10:00:00;Q;124;queue=long spare user=zed") == {
        "user": ["zed"]}
    assert _collect(pbs_line, "garbage user=amy jobname=a b") == {"user": ["amy"],
                                                                   "job": ["a", "b"]}
    assert _collect(pbs_line, "1=2 9x=y jobname.x=3") == {}


# --- raw files -------------------------------------------------------------------------------

SACCT_HEADER = "JobID|User|Group|JobName|NodeList|State"


def test_raw_names_of_a_sacct_log_read_every_line(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_bytes(("\ufeff" + SACCT_HEADER + "\n1|amy|lab|job_1|gpu[1-2]|COMPLETED\r\n\n"
                      "garbage|bob|\n").encode())
    assert raw_names(path, "slurm") == {"user": ["amy", "bob"], "group": ["lab"],
                                        "job": ["job_1"], "host": ["gpu", "gpu1", "gpu2"]}


def test_raw_names_of_a_gzipped_pbs_log(tmp_path):
    path = tmp_path / "pbs.gz"
    path.write_bytes(gzip.compress(b"04/01/2023 10:00:00;Q;1.srv9;user=amy queue=q\n\n"
                                   b"broken exec_host=node7\n"))
    assert raw_names(path, "pbs") == {"user": ["amy"], "host": ["node7", "srv9"]}


def test_an_over_long_line_is_read_in_part(tmp_path, monkeypatch):
    monkeypatch.setattr(rawnames, "MAX_LINE_BYTES", 32)
    path = tmp_path / "pbs.log"
    path.write_bytes(b"x user=amy " + b"y" * 60 + b" user=lost\nuser=bob\n" +
                     b"z" * 40 + b"\nuser=cid\n")
    assert raw_names(path, "pbs") == {"user": ["amy", "bob", "cid"]}


def test_raw_names_of_a_table_format_come_from_the_table(tmp_path):
    path = tmp_path / "jobs.parquet"
    table = jt.from_columns({"job_id": [1, 2], "user": ["amy", "bob"], "group": ["lab", "lab"],
                             "submit_time": [T0, T0 + 1]}, {"time_zone": "UTC"})
    pq.write_table(table, path)
    assert raw_names(path, "package", table=table) == {"user": ["amy", "bob"], "group": ["lab"]}


def test_a_table_format_that_does_not_read_is_an_input_error(tmp_path):
    path = tmp_path / "bad.swf"
    path.write_text("not a trace\n")
    with pytest.raises(InputError):
        raw_names(path, "swf")


def test_from_table_reads_user_group_and_metadata():
    table = pa.table({"user": [1, 2, 1], "x": ["a", "b", "c"]})
    table = jt.with_metadata(table, {"skipped_lines": [{"field": "user", "value": "eve"}]})
    names = _collect(from_table, table)
    assert names["user"] == ["1", "2", "eve"]
    assert "group" not in names


# --- metadata --------------------------------------------------------------------------------

def test_from_metadata_reads_skipped_lines_by_field_and_format():
    meta = {"slurm": {"header": ["JobID", "User", "NodeList"]}, "skipped_lines": [
        {"field": "NodeList", "value": "secret[1-2]", "message": "bad node list"},
        {"field": "user", "value": "amy"},
        {"field": "Account", "value": "acc"},
        {"field": "job name", "value": "run_1"},
        {"field": "owner", "value": "own@o9x"},
        {"field": "line", "value": "9|bob|n9x", "message": "too short"},
        {"field": "", "value": "x;E;y user=cid exec_host=h7x"},
        {"field": "submit", "value": "not-a-name"},
        {"field": "user", "value": ""}, {"field": "user", "value": 5}, "not a dict",
        {"field": "user", "message": "user=msg1 in text"},
    ]}
    assert _collect(from_metadata, meta) == {
        "user": ["amy", "bob", "cid", "own"], "group": ["acc"],
        "host": ["h7x", "n9x", "o9x", "secret", "secret1", "secret2"], "job": ["run_1"]}


def test_from_metadata_message_with_a_separator_is_read_as_a_line():
    meta = {"slurm": {"header": ["User"]}, "skipped_lines": [
        {"field": "state", "message": "a|b"}, {"message": "x; user=pbsmsg"}]}
    assert _collect(from_metadata, meta) == {"user": ["a", "pbsmsg"]}
    # without a sacct header, a | line is no sacct line
    assert _collect(from_metadata, {"skipped_lines": [{"field": "x", "value": "a|b"}]}) == {}
    assert _collect(from_metadata, {"slurm": "x", "skipped_lines": [{"value": "a|b"}]}) == {}


def test_from_metadata_reads_alibaba_node_runs_unless_anonymized():
    meta = {"alibaba": {"nodes": {"runs": [
        {"names": ["n-a", "n-b"]},
        {"nodes": 3, "names": {"prefix": "node-", "width": 3, "first": 8}}]}}}
    assert _collect(from_metadata, meta) == {"host": ["n-a", "n-b", "node-008", "node-009",
                                                      "node-010"]}
    assert _collect(from_metadata, {**meta, "anonymization": {"x": 1}}) == {}
    assert _collect(from_metadata, {"alibaba": {"nodes": []}}) == {}
    assert _collect(from_metadata, {"alibaba": []}) == {}


@pytest.mark.parametrize("run, names", [
    ({"names": ["a", 1]}, ["a", "1"]),
    ({"names": {"prefix": "p"}}, ["p0"]),
    ({"nodes": 2, "names": {"prefix": "p", "width": 2}}, ["p00", "p01"]),
    ({"nodes": 0, "names": {"prefix": "p", "first": 5}}, ["p5"]),
    ({"nodes": "x", "names": {"prefix": "p"}}, ["p"]),
    ({"nodes": 1, "names": {"prefix": "p", "width": None}}, ["p"]),
    ({"names": {"width": 2}}, []),
    ({"names": "p"}, []),
    ("not a run", []),
])
def test_expand_node_run(run, names):
    assert expand_node_run(run) == names


def test_expand_node_run_stops_at_the_expansion_limit():
    names = expand_node_run({"nodes": MAX_EXPANDED + 5, "names": {"prefix": "p"}})
    assert len(names) == MAX_EXPANDED and names[-1] == f"p{MAX_EXPANDED - 1}"


# --- telemetry -------------------------------------------------------------------------------

@pytest.mark.parametrize("value, host", [
    (" node07:9100 ", "node07"), ("https://a.b:1/x/y", "a.b"), ("user@node07", "node07"),
    ("node07:http", "node07:http"), (":9100", ":9100"), ("[::1]", "::1"), ("[::1]:9", "::1"),
    ("a://b://c", "b:"), ("x@y@z:1", "z"),
])
def test_host_of_label(value, host):
    assert host_of_label(value) == host


def test_file_stem_names():
    assert file_stem_names("Node07.lab.PROM") == ["Node07.lab", "Node07"]
    assert file_stem_names("n7.json") == []           # shorter than 3
    assert file_stem_names("ab7.txt.om") == ["ab7"]
    assert file_stem_names("gpu-7.metrics.csv.parquet") == ["gpu-7"]
    assert file_stem_names("ab.c9") == ["ab.c9"]      # the short part alone is too short
    assert file_stem_names("MyNode1.json", ["mynode1"]) == []


def _prom(tmp_path, text: str, name: str = "x.prom"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_telemetry_names_from_labels(tmp_path):
    path = _prom(tmp_path, 'up{Instance="node07.lab:9100",job="a",mylabel="m1x",'
                           'host="10.0.0.1:80",node="nq\\"quoted9"} 1\n'
                           '{"hostname": "h\\u0041x.example"}\n'
                           'up{node="\\\\bad\\q"} 1\n')
    # escapes undone (a bad escape read as written), then cut like a host list
    assert telemetry_names([path])["host"] == ["10.0.0.1", "bad", "hAx", "hAx.example",
                                               "node07", "node07.lab", "quoted9"]


def test_telemetry_names_use_the_map_node_label_and_skip_metric_file_names(tmp_path):
    class Entry:
        def __init__(self, node_label, source):
            self.node_label, self.source = node_label, source

    class Map:
        entries = [Entry("GpuHost", "site_util9"), Entry(None, "other")]

    path = _prom(tmp_path, 'site_util9{gpuhost="g7x"} 1\n', "site_util9.prom")
    assert telemetry_names([path], metric_map=Map())["host"] == ["g7x"]
    assert telemetry_names([path])["host"] == ["site_util9"]


def test_labels_split_by_a_chunk_boundary_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(rawnames, "_CHUNK", 16)
    monkeypatch.setattr(rawnames, "_OVERLAP", 40)
    path = _prom(tmp_path, "x" * 10 + 'up{instance="chunked7:1"} 1\n' + "y" * 50 +
                 'up{instance="later8"} 1\n', "x.prom.gz" if False else "x.prom")
    assert telemetry_names([path])["host"] == ["chunked7", "later8"]


def test_node_column_of_csv_gzip_and_parquet(tmp_path):
    csv = tmp_path / "long.csv"
    csv.write_text(f"ts,node,value\n{T0},b9x,1\n{T0},a9x,2\n{T0},b9x,3\n{T0},,4\n")
    assert node_column(csv) == ["a9x", "b9x"]
    gz = tmp_path / "long.csv.gz"
    gz.write_bytes(gzip.compress(csv.read_bytes()))
    assert node_column(gz) == ["a9x", "b9x"]
    pqt = tmp_path / "long.PARQUET"
    pq.write_table(pa.table({"node": [3, 1, None]}), pqt)
    assert node_column(pqt) == ["1", "3"]
    assert node_column(csv, "value") == ["1", "2", "3", "4"]
    assert node_column(csv, "host") == []


def test_node_column_of_a_bad_file_is_an_input_error(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(InputError, match="cannot read"):
        node_column(bad)


def test_node_column_is_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(rawnames, "MAX_TELEMETRY_NAMES", 2)
    csv = tmp_path / "long.csv"
    csv.write_text("node\nc\nb\na\n")
    assert node_column(csv) == ["a", "b"]


def test_telemetry_names_of_long_tables_and_allocations(tmp_path):
    long = tmp_path / "export.csv"
    long.write_text(f"ts,node,gpu_index,metric,value\n{T0},long9.lab,0,gpu_util_pct,1\n")
    alloc = tmp_path / "alloc.csv"
    alloc.write_text("job_id,node\n1,al9x\n")
    assert telemetry_names([long], alloc)["host"] == ["al9x", "long9", "long9.lab"]
    table = pa.table({"node": ["t9x.site", None, ""]})
    assert telemetry_names([], table) == {"host": ["t9x", "t9x.site"]}
    assert telemetry_names([], pa.table({"host": ["zz9"]})) == {}
    assert telemetry_names([]) == {}


# --- boundaries and edge cases ---------------------------------------------------------------

@pytest.mark.parametrize("text, expanded", [
    ("big[1-3000,1-3000]", False),       # 6,000 names counted, though 3,000 distinct
    ("big[1-4095,7-7]", True),            # 4,096
    ("big[1-4095,7]", True),              # 4,096
    ("big[1-4096,5]", False),             # 4,097
    ("big[1-4096]x[7]", True),            # 4,096 x 1
    ("big[1-4096]x[1-2]", False),         # 8,192: the count goes on past the limit
])
def test_host_lists_are_expanded_up_to_the_limit(text, expanded):
    names = host_names(text)
    assert (len(names) > 1) == expanded
    assert "big" in names


def test_host_list_items_that_are_not_ranges_count_one():
    assert host_names("abc[a-5]") == ["abc"]
    assert host_names("-abc-.") == ["-abc-."]              # parsed: not cut into tokens
    assert host_names("abcXX,XXdef[") == ["abcXX", "XXdef"]
    assert host_names("Xab1X[1-") == ["Xab1X"]


def test_a_line_of_exactly_the_read_size_is_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(rawnames, "MAX_LINE_BYTES", 9)
    path = tmp_path / "pbs.log"
    path.write_bytes(b"user=amy\nuser=bob\n")
    assert raw_names(path, "pbs") == {"user": ["amy", "bob"]}


def test_bad_utf8_and_trailing_letters_are_kept(tmp_path):
    path = tmp_path / "pbs.log"
    path.write_bytes(b"user=BOXX\r\nuser=c\xffd\n")
    assert raw_names(path, "pbs") == {"user": ["BOXX", "c\ufffdd"]}


def test_the_server_of_a_pbs_job_id_is_everything_after_the_first_dot():
    assert _collect(pbs_line, "04/01/2023 10:00:00;Q;1.srv9.example.org;queue=q") == {
        "host": ["srv9.example.org"]}


def test_a_pbs_record_the_reader_accepts_is_read_as_a_record():
    # the reader's grammar: a "file:" prefix (grep -H output), a lowercase record type
    for line in ("acct/20230401:04/01/2023 10:00:00;E;12.srv9;user=amy group=lab",
                 "04/01/2023 10:00:00;e;12.srv9;user=amy group=lab"):
        assert _collect(pbs_line, line) == {"user": ["amy"], "group": ["lab"],
                                            "host": ["srv9"]}


def test_raw_names_find_every_user_the_pbs_reader_reads(tmp_path):
    from swftools.formats import pbs

    path = tmp_path / "pbs.log"
    path.write_bytes(b"20230401:04/01/2023 10:00:00;Q;7.srv9;queue=q\n"
                     b"20230401:04/01/2023 10:00:05;S;7.srv9;user=amy group=lab "
                     b"exec_host=n01/0 Resource_List.walltime=01:00:00\n"
                     b"20230401:04/01/2023 10:10:00;E;7.srv9;user=amy group=lab "
                     b"exec_host=n01/0 Resource_List.walltime=01:00:00 start=1680343205 "
                     b"end=1680343800 Exit_status=0\n"
                     b"\r04/01/2023 10:00:00;Q;8.srv9;user=bob queue=q\n"
                     b"\t \tuser=cid\n")
    users = set(pbs.read(path, skip_bad_lines=True).column("user").to_pylist())
    assert "amy" in users
    names = raw_names(path, "pbs")
    assert users <= set(names["user"]) and names["user"] == ["amy", "bob", "cid"]
    assert names["host"] == ["n01", "srv9"]


def test_pbs_attributes_are_separated_by_spaces_only():
    # PBS writes one space between attributes: a tab belongs to the value
    assert _collect(pbs_line, "04/01/2023 10:00:00;Q;1;user=amy\tgroup=lab") == {
        "user": ["amy\tgroup=lab"]}


def test_pbs_vnode_chunks_keep_letters_next_to_their_parentheses():
    assert _collect(pbs_line, "x exec_vnode=(Xa1X:ncpus=4)+(Yb2:mem=1)") == {
        "host": ["Xa1X", "Yb2"]}


def test_a_sacct_header_starting_with_user_after_a_bom(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_bytes("\ufeffUser|JobID\namy|1\n".encode())
    assert raw_names(path, "slurm")["user"] == ["amy"]


def test_an_empty_sacct_log_names_nothing(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_bytes(b"")
    assert raw_names(path, "slurm") == {}


def test_from_metadata_goes_on_after_an_entry_that_is_no_dict():
    assert _collect(from_metadata, {"skipped_lines": ["x", {"field": "user", "value": "amy"}]}) \
        == {"user": ["amy"]}


def test_from_metadata_ignores_alibaba_nodes_of_an_unknown_shape():
    assert _collect(from_metadata, {"alibaba": {"nodes": ["n1x"]}}) == {}
    assert _collect(from_metadata, {"alibaba": {"nodes": {"count": 3}}}) == {}


@pytest.mark.parametrize("field, kind", [
    ("NodeList", "host"), ("node list", "host"), ("Host", "host"), ("exec_vnode", "host"),
    ("Cluster", "host"), ("JobName", "job"), ("job name", "job"), ("Job_Name", "job"),
    ("Requestor", "user"), ("Owner", "user"), ("User", "user"), ("Group", "group"),
    ("Account", "group"), ("submit", None),
])
def test_a_skipped_value_is_read_by_its_field(field, kind):
    names = _collect(from_metadata, {"skipped_lines": [{"field": field, "value": "val9x"}]})
    assert names == ({kind: ["val9x"]} if kind else {})


def test_raw_names_detects_the_format(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("1 0 10 100 1 -1 -1 1 100 -1 1 7 -1 -1 -1 -1 -1 -1\n")
    assert raw_names(path) == {"user": ["7"]}


def test_raw_names_reads_with_the_site(tmp_path):
    import warnings

    from swftools.site import load_site

    path = tmp_path / "pbs.log"
    path.write_text("04/01/2023 10:00:00;Q;1.srv9;user=amy queue=q\n"
                    "04/01/2023 10:00:01;E;1.srv9;user=amy queue=q qtime=1680343200 "
                    "start=1680343200 end=1680343300 Exit_status=0\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        names = raw_names(path, "pbs", site=load_site("aaic"))
    assert names == {"user": ["amy"], "host": ["srv9"]}


def test_host_of_a_label_with_brackets_only_at_one_end():
    assert host_of_label("gpu[1-2]") == "gpu[1-2]"
    assert host_of_label("[gpu") == "[gpu"


def test_telemetry_hosts_give_their_first_part_from_three_letters():
    path_names = telemetry_names([], pa.table({"node": ["n7.lab", "node07.lab.example.org"]}))
    assert path_names == {"host": ["n7.lab", "node07", "node07.lab.example.org"]}


def test_file_stems_of_several_parts_and_archive_words():
    assert file_stem_names("gpu-7.lab.example.org.json") == ["gpu-7.lab.example.org", "gpu-7"]
    assert file_stem_names("sha256sums.txt") == []


def test_a_label_at_the_very_start_of_a_file_and_bad_utf8_in_a_value(tmp_path):
    path = tmp_path / "x.prom"
    path.write_bytes(b'instance="start9x:1" 1\nup{instance="b\xffd9x"} 1\n')
    assert telemetry_names([path])["host"] == ["d9x", "start9x"]  # cut at the bad byte


def test_node_column_error_names_the_file_and_the_cause(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_text("x")
    with pytest.raises(InputError) as info:
        node_column(bad)
    assert info.value.path == str(bad)
    assert info.value.message.startswith("cannot read: ") and "Parquet" in info.value.message


def test_a_label_value_with_a_bad_escape_is_read_as_written(tmp_path):
    path = tmp_path / "x.prom"
    path.write_text('up{instance="abc\\"def\\q"} 1\n')
    assert telemetry_names([path])["host"] == ["abc", "def"]
