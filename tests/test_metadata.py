"""The typed table metadata: byte-identical serialization, the schema file, unknown keys, the unit."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from swftools import formats
from swftools import table as jt
from swftools.errors import InputError
from swftools.metadata import METADATA_KEY, TableMetadata, encode
from swftools.resources import load_json

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
EXAMPLE = ROOT / "archive" / "example"

# Every stored input the tests read: golden NQSII logs and SWF, the example archive's files.
SAMPLES = sorted(str(p.relative_to(ROOT)) for p in (GOLDEN / "nqsii").glob("*.csv*")) + [
    "tests/golden/swf/aaic-small.swf", "archive/example/data/jobs.swf.gz", "archive/example"]

SWF_HEADER = "; Version: 2.2\n; Computer: caf\u00e9 cluster\n; MaxProcs: 16\n"


def _stored(table) -> bytes:
    return table.schema.metadata[METADATA_KEY]


@pytest.mark.parametrize("name", SAMPLES)
def test_metadata_of_every_sample_serializes_to_the_same_bytes(name):
    table = formats.read(ROOT / name)
    meta = TableMetadata.from_table(table)
    assert meta.to_json() == _stored(table)
    assert _stored(meta.to_table(table.replace_schema_metadata({}))) == _stored(table)


def test_the_example_archive_parquet_metadata_is_reproduced_byte_for_byte():
    """The Parquet file was written before the typed object existed: same bytes from it."""
    stored = pq.read_schema(EXAMPLE / "data" / "jobs.parquet").metadata[METADATA_KEY]
    meta = TableMetadata.from_dict(json.loads(stored))
    assert meta.to_json() == stored
    # and the package reader (descriptor metadata + time zone) gives the same object
    assert TableMetadata.from_table(formats.read(EXAMPLE)).to_json() == stored
    descriptor = json.loads((EXAMPLE / "datapackage.json").read_text(encoding="utf-8"))
    jobs_meta = descriptor["swftools"]["metadata"]["jobs"]
    assert {k: v for k, v in meta.to_dict().items() if k != "time_zone"} == jobs_meta


@pytest.mark.parametrize("body", [
    "1 0 5 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n",  # no UnixStartTime: origin null
    "1 0 5 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1 7 8\n"  # extra fields
    "; a comment among the jobs\n"
    "2\t10 5 100.5 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1  \n",  # tabs, decimals, trailing blanks
])
def test_swf_reader_metadata_round_trips_byte_for_byte(tmp_path, body):
    path = tmp_path / "t.swf"
    path.write_bytes((SWF_HEADER + body).encode("latin-1"))
    table = formats.read(path)
    raw = json.loads(_stored(table))
    assert "swf_time_origin" in raw and raw["swf_time_origin"] is None
    assert TableMetadata.from_table(table).to_json() == _stored(table)


def test_to_json_is_the_historical_encoding():
    data = {"source_file": "\u65e5\u672c.csv", "site": "aaic", "swf_time_origin": None,
            "nqsii": {"form": "raw", "header": ["b", "a"]}}
    expected = json.dumps(data, sort_keys=True, ensure_ascii=False).encode()
    assert encode(data) == expected
    assert TableMetadata.from_dict(data).to_json() == expected
    assert jt.get_metadata(jt.from_columns({}, TableMetadata.from_dict(data))) == data


def test_unknown_keys_are_kept_verbatim():
    """Decision: unknown keys are kept (in ``extra``), untyped, and written back unchanged."""
    data = {"site": "aaic", "future_key": {"b": 1, "a": [1, 2]}, "interval_s": 60}
    meta = TableMetadata.from_dict(data)
    assert meta.site == "aaic"
    assert dict(meta.extra) == {"future_key": {"b": 1, "a": [1, 2]}, "interval_s": 60}
    assert meta.to_json() == encode(data)
    table = meta.to_table(jt.empty())
    assert TableMetadata.from_table(table) == meta


def test_known_keys_of_the_wrong_type_are_rejected():
    with pytest.raises(InputError, match="swf_first_line"):
        TableMetadata.from_dict({"swf_first_line": "seven"}, source="t.swf")
    with pytest.raises(InputError, match="processor_unit"):
        TableMetadata.from_dict({"processor_unit": "core"})
    bad = jt.with_metadata(jt.empty(), {"swf_header": [["Version", 2.2]]})
    with pytest.raises(InputError, match="table metadata"):
        TableMetadata.from_table(bad)


def test_none_fields_are_left_out_but_read_nulls_are_kept():
    assert TableMetadata().to_dict() == {}
    assert TableMetadata(site="aaic", time_zone=None).to_dict() == {"site": "aaic"}
    hand_made = {"source_format": "swf", "swf_time_origin": None}  # no swf_first_line
    assert TableMetadata.from_dict(hand_made).to_dict() == hand_made
    # swf_time_origin goes with swf_first_line, as the SWF reader always wrote it
    assert TableMetadata(swf_first_line=3).to_dict() == {"swf_first_line": 3,
                                                         "swf_time_origin": None}


def test_the_schema_file_and_the_dataclass_name_the_same_keys():
    schema_keys = set(load_json("table-metadata.schema.json")["properties"])
    fields = {f.name for f in dataclasses.fields(TableMetadata)} - {"extra", "nulls"}
    assert schema_keys == fields


def test_developing_md_lists_every_key():
    text = (ROOT / "DEVELOPING.md").read_text(encoding="utf-8")
    section = text.split("## Table metadata", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^- `(\w+)`", section, flags=re.M))
    fields = {f.name for f in dataclasses.fields(TableMetadata)} - {"extra", "nulls"}
    assert fields <= set(re.findall(r"`(\w+)`", section)), fields - set(re.findall(r"`(\w+)`", section))
    assert "swf_line_numbers" not in section and listed


@pytest.mark.parametrize("name, unit", [
    ("tests/golden/nqsii/raw.csv", "gpu"),
    ("tests/golden/swf/aaic-small.swf", "gpu"),  # its header: "Note: processors are GPUs"
    ("archive/example", "gpu"),
])
def test_unit_of_samples(name, unit):
    assert TableMetadata.from_table(formats.read(ROOT / name)).unit == unit


def test_unit_of_a_plain_swf_trace_is_processors(tmp_path):
    path = tmp_path / "cpu.swf"
    path.write_text(SWF_HEADER + "1 0 5 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n",
                    encoding="latin-1")
    meta = TableMetadata.from_table(formats.read(path))
    assert (meta.unit, meta.unit_word, meta.processor_unit) == ("processor", "processors", None)
    assert dataclasses.replace(meta, processor_unit="gpu").unit == "gpu"
    assert TableMetadata(source_format="synth").unit == "gpu"


@pytest.mark.parametrize("name", SAMPLES)
def test_every_reader_writes_metadata_the_schema_accepts(name):
    """A table a reader built in this process is not checked again when read back
    (``from_table`` trusts bytes ``to_table`` serialized): so check them here."""
    from swftools.metadata import check, decode

    check(decode(formats.read(ROOT / name)))


def test_only_bytes_serialized_here_skip_the_check(monkeypatch):
    import swftools.metadata as md

    calls = []
    monkeypatch.setattr(md, "check", lambda data, source=None: calls.append(data))
    meta = TableMetadata(site="aaic", source_file="t.swf")
    table = meta.to_table(jt.empty())
    assert TableMetadata.from_table(table) == meta
    assert calls == []
    foreign = jt.with_metadata(jt.empty(), {"site": "aaic", "source_file": "u.swf"})
    TableMetadata.from_table(foreign)
    assert len(calls) == 1
    for k in range(md.SERIALIZED_KEPT + 1):  # bounded: the oldest bytes are checked again
        TableMetadata(site=f"s{k}").to_table(jt.empty())
    TableMetadata.from_table(table)
    assert len(calls) == 2
