"""swftools.report.summary: the headline rows and the Markdown table a README embeds."""

from __future__ import annotations

from swftools.report import analyze, summary_table_markdown
from swftools.report.summary import (
    PAPER,
    format_value,
    reference_applies,
    table_markdown,
)
from swftools.site import load_site
from tests.report_support import T0, aaic_table, swf_table


def test_rows_carry_values_paper_figures_and_notes():
    table = aaic_table([{"walltime_s": 1800, "requested_walltime_s": 3600}] * 3 +
                       [{"walltime_s": 7200, "gpus_per_node": 4, "requested_walltime_s": 259_200}])
    result = analyze(table, site=load_site("aaic"))
    rows = {r["key"]: r for r in result.summary}
    assert rows["single_pe_share"]["value"] == 0.75
    assert rows["single_pe_share"]["paper"] == PAPER["single_pe_share"]
    assert rows["at_queue_max_share"]["value"] == 0.25
    assert rows["median_walltime_h_single"]["value"] == 0.5
    assert rows["median_walltime_h_multi_node"]["value"] is None
    assert rows["median_walltime_h_multi_node"]["note"] == "no multi-node jobs"
    assert result.value("wra_median") == 0.5


def test_markdown_table_formats_kinds_and_explains_gaps():
    table = swf_table({"job_id": [1, 2], "gpus": [1, 2], "walltime_s": [600, 900],
                       "swf_status": [1, 1], "submit_time": [T0, T0]})
    text = summary_table_markdown(analyze(table))
    lines = text.splitlines()
    # a CPU trace is not framed by the AAIC paper: no reference column
    assert lines[0] == "| Figure | This trace |"
    assert lines[1] == "|---|---:|"
    assert "| Single-processor jobs (jobs of at least 60 s) | 50.0 % |" in lines
    assert any(line.startswith("| Walltime request accuracy, mean | n/a (the requested walltime")
               for line in lines)
    assert text.endswith("|\n")


def test_format_value():
    assert format_value(0.3651, "share") == "36.5 %"
    assert format_value(5.5764, "hours") == "5.576 h"
    assert format_value(0.2541, "coefficient") == "0.254"
    assert format_value(460000, "count") == "460,000"
    assert format_value(None, "share") == "n/a"


def test_pipes_in_labels_are_escaped():
    rows = [{"key": "k", "label": "a|b", "kind": "text", "value": "x|y", "paper": None,
             "note": None}]
    assert "| a\\|b | x\\|y |" in table_markdown(rows).splitlines()


def test_aaic_reference_only_for_an_aaic_trace():
    """The paper's values are the AAIC reference of an AAIC trace, and of no other site's."""
    rows = [{"walltime_s": 1800, "requested_walltime_s": 3600}] * 3
    aaic = analyze(aaic_table(rows), site=load_site("aaic"))
    text = summary_table_markdown(aaic)
    assert text.splitlines()[0] == "| Figure | This trace | AAIC reference (Takizawa et al. 2019) |"
    assert "| Successful jobs (all jobs) | 100.0 % | 83.0 % |" in text.splitlines()
    other_gpu_site = analyze(aaic_table(rows, site="abci"), site=load_site("abci"))
    cpu = analyze(swf_table({"job_id": [1, 2], "gpus": [1, 2], "walltime_s": [600, 900],
                             "swf_status": [1, 1], "submit_time": [T0, T0]}))
    for result in (other_gpu_site, cpu):
        assert all(row["paper"] is None for row in result.summary)
        assert "AAIC" not in summary_table_markdown(result)
    assert reference_applies({"processing_element": "GPU", "site": "aaic-v100-half"})
    assert reference_applies({"processing_element": "GPU", "site": None, "source_format": "synth"})
    assert not reference_applies({"processing_element": "processor", "site": "aaic"})
