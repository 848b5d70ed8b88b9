"""Streamed synthesis (issue 15): chunks equal the whole table, chunked logs equal unchunked
ones byte for byte, prefixes are stable, and ``--site`` targets another site's queues."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools import table as jt
from swftools.cli import app
from swftools.formats import nqsii
from swftools.site import load_site
from swftools.synth.jobs import generate, generate_chunks, write_log


def _rows(table: pa.Table) -> pa.Table:
    return table.replace_schema_metadata(None).combine_chunks()


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 700), st.integers(1, 300), st.integers(0, 3))
def test_chunks_concatenate_to_the_whole_table(n, chunk_jobs, seed):
    chunks = list(generate_chunks(n, seed, chunk_jobs=chunk_jobs, nodes=3))
    assert all(c.num_rows <= chunk_jobs for c in chunks) and len(chunks) >= 1
    whole = generate(n, seed, nodes=3)
    assert _rows(pa.concat_tables(chunks)).equals(_rows(whole))
    assert all(c.schema.metadata == whole.schema.metadata for c in chunks)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 500), st.integers(1, 300), st.integers(1, 200),
       st.sampled_from(["raw", "published"]), st.sampled_from(["aaic", "abci"]))
def test_chunked_log_is_byte_identical_and_prefix_stable(tmp_path_factory, n, m, chunk_jobs,
                                                         form, site):
    tmp = tmp_path_factory.mktemp("log")
    whole, chunked, longer = tmp / "whole.csv", tmp / "chunked.csv", tmp / "longer.csv"
    nqsii.write(generate(n, 7, site=site), whole, form=form, site=site)
    write_log(chunked, n, 7, form=form, site=site, chunk_jobs=chunk_jobs)
    write_log(longer, n + m, 7, form=form, site=site, chunk_jobs=chunk_jobs)
    assert chunked.read_bytes() == whole.read_bytes()
    lines, longer_lines = whole.read_bytes().splitlines(), longer.read_bytes().splitlines()
    assert longer_lines[:n + 1] == lines  # published ids: numbered by first appearance


def test_chunked_gzip_log_is_byte_identical(tmp_path):
    nqsii.write(generate(3000, 2), tmp_path / "whole.csv.gz")
    write_log(tmp_path / "chunked.csv.gz", 3000, 2, chunk_jobs=777)
    assert (tmp_path / "chunked.csv.gz").read_bytes() == (tmp_path / "whole.csv.gz").read_bytes()


def test_bad_chunk_size():
    with pytest.raises(ValueError):
        next(generate_chunks(10, chunk_jobs=0))


@pytest.fixture(scope="module")
def abci():
    return generate(20_000, 4, site="abci")


def test_abci_jobs_fit_its_queues(abci):
    site = load_site("abci")
    assert jt.get_metadata(abci)["site"] == "abci"
    frame = abci.to_pandas()
    assert frame["gpus_per_node"].max() <= site.gpus_per_node
    assert set(frame["queue"]) <= {"rt_F", "rt_G.large", "rt_G.small"}
    for q in site.queues:
        rows = frame[frame["queue"] == q.name]
        assert rows["nodes"].between(q.nodes_min, q.nodes_max).all()
        assert rows["gpus_per_node"].between(q.gpus_per_node_min, q.gpus_per_node_max).all()
        assert (rows["requested_walltime_s"] <= q.walltime_max_s).all()
    # resource-type allocation: multi-GPU single-node jobs hold all 4 GPUs of rt_G.large
    assert set(frame.loc[frame["queue"] == "rt_G.large", "gpus"]) == {4}
    assert (frame.loc[frame["nodes"] > 1, "queue"] == "rt_F").all()
    # no job runs past its limit unless it is recorded as having exceeded it (termcode 2)
    over = frame["walltime_s"] > frame["requested_walltime_s"]
    assert (frame.loc[over, "termcode"] == 2).all()
    assert frame["finish_time"].max() > frame["submit_time"].min()


def test_abci_log_is_valid_for_the_abci_site(tmp_path, abci):
    from swftools.validate import validate

    nqsii.write(abci, tmp_path / "abci.csv", site="abci")
    report = validate(tmp_path / "abci.csv", site="abci")
    assert report.valid, [f.rule for f in report.findings][:5]


def test_cli_site_abci_streams_the_same_log(tmp_path, abci):
    out = tmp_path / "cli.csv"
    result = CliRunner().invoke(app, ["synth", "--jobs", "20000", "--seed", "4", "--site", "abci",
                                      "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    nqsii.write(abci, tmp_path / "lib.csv", site="abci")
    assert out.read_bytes() == (tmp_path / "lib.csv").read_bytes()
    assert '"site": "abci"' in result.stdout and '"nodes": 1088' in result.stdout


def test_cli_site_without_gpu_queues_is_a_usage_error(tmp_path):
    import json

    settings_ = json.loads((load_site("abci").settings and json.dumps(load_site("abci").settings)))
    settings_["queues"] = [q for q in settings_["queues"] if q["gpus_per_node_max"] == 0]
    site_file = tmp_path / "cpu.json"
    site_file.write_text(json.dumps(settings_))
    result = CliRunner().invoke(app, ["synth", "--jobs", "5", "--site", str(site_file),
                                      "--out", str(tmp_path / "x.csv")])
    assert result.exit_code == 2 and "no queue with GPUs" in result.output
    assert not (tmp_path / "x.csv").exists()
