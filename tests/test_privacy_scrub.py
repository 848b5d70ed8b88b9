"""What anonymization keeps of the table metadata and of a release's telemetry metadata: every
key's rule, with the notes it prints, on hand-made metadata."""

from __future__ import annotations

import copy

import pyarrow as pa

from swftools import table as jt
from swftools.privacy.match import Term
from swftools.privacy.scrub import (
    WITHHELD,
    clean_metadata,
    clean_telemetry,
    clean_telemetry_table,
)

RAW = [Term("kobayashi", "user"), Term("lab-vision", "group"), Term("gpuhost07", "host")]
WEEK = 7 * 86_400


def _clean(meta: dict, shift_s: int = 0, rename=lambda n: f"h-{n[::-1]}"):
    notes: list[str] = []
    out, hosts = clean_metadata(meta, shift_s, RAW, rename, notes)
    return out, hosts, notes


def _meta() -> dict:
    return {
        "source_file": "jobs-of-gpuhost07.swf", "source_format": "swf", "converter_version": "9",
        "site": "aaic", "time_zone": "Asia/Tokyo", "processor_unit": "gpu",
        "swf_time_origin": 1000, "swf_first_line": 20, "swf_extra_columns": {"count": 1},
        "synth": {"seed": 1}, "pbs": {"jobs": 3}, "nqsii": {"header": "owner KOBAYASHI"},
        "anonymization": {"kept_columns": ["kobayashi_notes"]},
        "swf_header": [["Version", "2.2"], ["Computer", "big"], ["Note", "a"], ["Note", "b"],
                       ["", "text"], ["Queue", "1 batch of lab-vision"], ["MaxProcs", "16"],
                       ["UnixStartTime", " 1000 "], ["StartTime", "Thu Jan 01 1970"], ["note"],
                       "Acknowledge", [], ["queue", "2 night"]],
        "swf_header_lines": ["; Version: 2.2"],
        "swf_layout": {"widths": [1], "other_lines": [[2, "; hi"], [3, "; ho"]]},
        "skipped_lines": [{"line": 4, "field": "user", "value": "kobayashi", "message": "bad"}],
        "slurm": {"header": ["JobID", "User", "kobayashi's", 7, "a" * 64, "a" * 65], "n": 2},
        "site_settings": {"name": "cluster", "notes": "read from jobs-of-gpuhost07.swf",
                          "owner": "kobayashi", "nodes": 4,
                          "files": ["jobs-of-gpuhost07.swf", "x"]},
        "later_key": 1}


def test_every_key_of_the_table_metadata_has_its_rule():
    meta = _meta()
    out, hosts, notes = _clean(meta)
    assert out == {
        "source_format": "swf", "converter_version": "9", "site": "aaic",
        "time_zone": "Asia/Tokyo", "processor_unit": "gpu", "swf_time_origin": 1000,
        "swf_first_line": 20, "swf_extra_columns": {"count": 1}, "synth": {"seed": 1},
        "pbs": {"jobs": 3}, "anonymization": {"kept_columns": ["kobayashi_notes"]},
        "swf_header": [["Version", "2.2"], ["MaxProcs", "16"], ["UnixStartTime", " 1000 "],
                       ["StartTime", "Thu Jan 01 1970"], ["queue", "2 night"]],
        "swf_layout": {"widths": [1], "other_lines": []},
        "skipped_lines": [{"line": 4, "field": "user"}],
        "slurm": {"header": ["JobID", "User", WITHHELD, WITHHELD, "a" * 64, WITHHELD], "n": 2},
        "site_settings": {"name": "cluster", "notes": "read from", "owner": WITHHELD,
                          "nodes": 4, "files": ["", "x"]}}
    assert hosts == []
    assert notes == [
        "dropped metadata 'source_file': a file name may name a user or host",
        "dropped SWF header entry 'Queue': it names a raw user, group or host",
        "dropped free-text SWF header entries (Computer, Note, (comment), note, Acknowledge): "
        "text from the source may name hosts or people",
        "dropped the verbatim SWF header lines: the header was changed",
        "dropped 2 SWF comment lines between jobs: free text from the source",
        "kept the line numbers of 1 skipped line, dropped their raw values and messages",
        "dropped metadata 'later_key': not a key anonymization knows to be safe",
        "dropped metadata 'nqsii': it names a raw user, group or host"]
    assert meta == _meta()  # the input is not changed


def test_a_time_shift_moves_the_origin_and_drops_the_dates():
    out, _, notes = _clean(_meta(), shift_s=WEEK)
    assert out["swf_header"] == [["Version", "2.2"], ["MaxProcs", "16"],
                                 ["UnixStartTime", str(1000 + WEEK)], ["queue", "2 night"]]
    assert out["swf_time_origin"] == 1000 + WEEK
    assert "dropped SWF header entry 'StartTime': it states an unshifted date" in notes
    # an origin that is no number, and a start time that is none, stay as they are
    meta = {"swf_time_origin": None, "swf_header": [["UnixStartTime", "soon"], ["EndTime", ""]]}
    out, _, notes = _clean(meta, shift_s=WEEK)
    assert out == {"swf_time_origin": None, "swf_header": [["UnixStartTime", "soon"]]}
    assert notes == ["dropped SWF header entry 'EndTime': it states an unshifted date"]


def test_the_verbatim_header_lines_go_whenever_the_header_or_the_times_change():
    meta = {"swf_header": [["Version", "2.2"], ["MaxJobs", "3"]],
            "swf_header_lines": ["; Version: 2.2", "; MaxJobs: 3"], "swf_layout": {"n_rows": 3}}
    assert _clean(meta) == (meta, [], [])
    out, _, notes = _clean(meta, shift_s=WEEK)
    assert out == {"swf_header": [["Version", "2.2"], ["MaxJobs", "3"]],
                   "swf_layout": {"n_rows": 3}}
    assert notes == ["dropped the verbatim SWF header lines: the header was changed"]
    out, _, notes = _clean({"swf_header": None, "swf_header_lines": ["; Note: x"]})
    assert out == {"swf_header": None} and notes == []
    out, _, notes = _clean({"swf_header": [["Note", "x"]]}, shift_s=WEEK)
    assert out == {"swf_header": []} and len(notes) == 1


def test_alibaba_node_names_are_pseudonymized_and_the_file_names_dropped():
    meta = {"source_file": "pods.csv", "alibaba": {
        "names": {"p1": "pod-1"}, "other": 1,
        "nodes": {"file": "inventory-lab-b.csv", "runs": [
            {"names": ["node-a1", "node-b2"]}, {"nodes": 2, "names": {"prefix": "gpu", "width": 2,
                                                                       "first": 1}},
            "junk", {"names": []}]}},
        "site_settings": {"name": "from inventory-lab-b.csv", "racks": ["node-a1 row", "r2"]}}
    before = copy.deepcopy(meta)
    out, hosts, notes = _clean(meta)
    assert meta == before  # the input is not changed
    assert hosts == ["node-a1", "node-b2", "gpu01", "gpu02"]
    assert out == {"alibaba": {"other": 1, "nodes": {"runs": [
        {"names": ["h-1a-edon", "h-2b-edon"]},
        {"nodes": 2, "names": ["h-10upg", "h-20upg"]}, "junk", {"names": []}]}},
        "site_settings": {"name": "from", "racks": [WITHHELD, "r2"]}}
    assert notes == [
        "dropped metadata 'source_file': a file name may name a user or host",
        "dropped the Alibaba pod names (job names): pods are named from job ids",
        "pseudonymized 4 node names of the Alibaba node list"]
    # without pod names or node runs there is nothing to say
    out, hosts, notes = _clean({"alibaba": {"nodes": {"runs": "x"}}})
    assert (out, hosts, notes) == ({"alibaba": {"nodes": {"runs": "x"}}}, [], [])
    assert _clean({"alibaba": {"nodes": {"runs": None}}})[1:] == ([], [])
    assert _clean({"alibaba": ["x"]})[1:] == ([], [])


def test_a_kept_key_naming_a_pseudonymized_host_is_dropped():
    meta = {"alibaba": {"nodes": {"runs": [{"names": ["gpu-rack-9"]}]}},
            "synth": {"note": "made on gpu-rack-9"}, "site": "aaic"}
    out, hosts, notes = _clean(meta)
    assert hosts == ["gpu-rack-9"] and out["site"] == "aaic" and "synth" not in out
    assert notes[-1] == "dropped metadata 'synth': it names a raw user, group or host"


def _telemetry() -> dict:
    return {"telemetry": {
        "interval_s": 30, "metrics": ["gpu_util_pct"], "sampling": ["raw"], "gpus_per_node": 8,
        "idle_threshold_pct": 5.0, "energy": "sum", "allocations": "node07-alloc.csv",
        "metric_maps": ["dcgm", "node07-map", "lab-map", "node07-map"],
        "future_key": "x", "old_key": 1, "description": "Sources: node07.prom",
        "metric_map": [
            {"source": "m", "match": {"instance": "10.0.0.7:9100", "mode": "idle",
                                      "Hostname": "x", "job": "node07-exporter"},
             "canonical": "gpu_util_pct", "source_unit": "%", "scale": 1, "type": "gauge",
             "map": "node07-map", "extra": "y"},
            "junk", {"source": "n", "map": "dcgm"}, {"source": "o", "match": ["x"]}],
        "sources": [{"file": "node07.prom", "format": "prometheus-text", "samples_read": 3,
                     "rows_mapped": 3, "non_finite_dropped": 0, "sampling": "raw",
                     "warnings": ["node07 is down", "slow"], "path": "/x"},
                    "junk",
                    {"file": "b.csv", "format": "csv", "sampling": "resampled",
                     "warnings": "not a list"}]}}


def test_telemetry_metadata_keeps_figures_and_renames_files_and_maps():
    notes: list[str] = []
    out = clean_telemetry(_telemetry(), lambda text: "node07" in text, notes)
    assert list(out) == ["telemetry"]
    tel = out["telemetry"]
    description = tel.pop("description")
    assert tel == {
        "energy": "sum", "gpus_per_node": 8, "idle_threshold_pct": 5.0, "interval_s": 30,
        "metrics": ["gpu_util_pct"], "sampling": ["raw"],
        "metric_maps": ["dcgm", "site map 1", "site map 2", "site map 1"],
        "metric_map": [
            {"source": "m", "canonical": "gpu_util_pct", "source_unit": "%", "scale": 1,
             "type": "gauge", "match": {"Hostname": WITHHELD, "instance": WITHHELD,
                                        "job": WITHHELD, "mode": "idle"},
             "map": "site map 1"},
            {"source": "n", "match": {}, "map": "dcgm"},
            {"source": "o", "match": {}, "map": "site map 3"}],
        "sources": [
            {"file": "source 1", "format": "prometheus-text", "samples_read": 3,
             "rows_mapped": 3, "non_finite_dropped": 0, "sampling": "raw",
             "warnings": [WITHHELD, WITHHELD]},
            {"file": "source 2", "format": "csv", "sampling": "resampled", "warnings": []}],
        "allocations": "allocation table"}
    assert "Nominal sampling interval 30 s; samples were raw and resampled " in description
    assert ("Sources: source 1 (prometheus-text, raw), source 2 (csv, resampled). Metric maps: "
            "dcgm, site map 1, site map 2, site map 1. Canonical metrics present: gpu_util_pct."
            in description)
    assert notes == [
        "telemetry: the 2 sample file names and the allocation file name replaced by "
        "'source N' (file names may name hosts)",
        "telemetry: withheld 2 Prometheus warnings (raw server text)",
        "telemetry: 3 site metric map names replaced",
        "telemetry: dropped metadata future_key, old_key: not a key anonymization knows to be "
        "safe"]


def test_telemetry_metadata_with_little_in_it():
    notes: list[str] = []
    assert clean_telemetry({"telemetry": "x"}, lambda text: False, notes) == {} and notes == []
    out = clean_telemetry({"telemetry": {"sources": [{"file": "a", "format": "f",
                                                      "sampling": "raw"}],
                                         "allocations": "<no allocation table>"}},
                          lambda text: False, notes)["telemetry"]
    assert out["allocations"] == "<no allocation table>"
    assert out["metric_maps"] == [] and out["metric_map"] == []
    assert "Nominal sampling interval 0 s;" in out["description"]
    assert "Canonical metrics present: none." in out["description"]
    assert notes == ["telemetry: the 1 sample file name replaced by 'source N' (file names may "
                     "name hosts)"]
    notes.clear()
    out = clean_telemetry({"telemetry": {"interval_s": None}}, lambda text: False,
                          notes)["telemetry"]
    assert out["allocations"] == "<no allocation table>" and out["sources"] == []
    assert notes == ["telemetry: the 0 sample file names replaced by 'source N' (file names may "
                     "name hosts)"]


def test_a_telemetry_table_is_cleaned_with_the_names_of_each_kind():
    """Job names are searched as whole words, host names anywhere."""
    match = {"job": "train7", "mode": "retrain7x", "x": "on-node07a"}
    table = jt.with_metadata(pa.table({"job_id": [1]}), {"telemetry": {
        "metric_map": [{"source": "m", "match": match, "map": "dcgm"}]}})
    notes: list[str] = []
    out = clean_telemetry_table(table, {"job": ["train7"], "host": ["node07"]}, notes)
    assert out.column("job_id").to_pylist() == [1]
    tel = jt.get_metadata(out)["telemetry"]
    assert tel["metric_map"][0]["match"] == {"job": WITHHELD, "mode": "retrain7x", "x": WITHHELD}
    assert notes == ["telemetry: the 0 sample file names replaced by 'source N' (file names may "
                     "name hosts)"]


def test_a_header_entry_is_searched_whole_and_a_file_name_anywhere():
    """An entry with more than a key and a value (a foreign package's) is searched whole; the
    source file's name is searched in every kept key."""
    meta = {"source_file": "traces-2020b.swf", "synth": {"from": "traces-2020b.swf"},
            "swf_header": [["Queue", "1 batch", "kobayashi"], ["MaxJobs", "3"]]}
    out, _, notes = _clean(meta)
    assert out == {"swf_header": [["MaxJobs", "3"]]}
    assert notes == [
        "dropped metadata 'source_file': a file name may name a user or host",
        "dropped SWF header entry 'Queue': it names a raw user, group or host",
        "dropped metadata 'synth': it names a raw user, group or host"]
