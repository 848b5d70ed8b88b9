"""The PBS format schema (``schemas/formats/pbs-accounting.schema.json``) lists what the reader
reads: every key it takes a value from, and the job id grammar it uses."""

from __future__ import annotations

import json
from pathlib import Path

from swftools.formats.pbs import fields, reader

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "schemas" / "formats"
                     / "pbs-accounting.schema.json").read_text())
# The keys reader._row reads besides the size keys (reader._SHAPE_KEYS).
TIME_AND_NAME_KEYS = {"qtime", "ctime", "etime", "start", "end", "resources_used.walltime",
                      "Resource_List.walltime", "Exit_status", "user", "group", "queue"}


def test_every_key_the_reader_reads_is_listed():
    listed = {key["name"] for key in SCHEMA["keys"]}
    assert set(reader._SHAPE_KEYS) | TIME_AND_NAME_KEYS == listed


def test_the_cpu_keys_say_they_give_cpus():
    column = {key["name"]: key.get("column", "") for key in SCHEMA["keys"]}
    for name, quantity in reader._SHAPE_KEYS.items():
        assert quantity in column[name], name
    assert column["resources_used.walltime"] == "recorded_walltime_s"


def test_the_job_id_pattern_is_the_readers():
    assert SCHEMA["jobIdPattern"] == f"^{fields._JOB_ID.pattern}$"
