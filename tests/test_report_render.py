"""swftools.report.render: report.json text (rounding, sorted keys) and report.md."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from swftools.report import analyze
from swftools.report.render import json_text, markdown, rounded
from swftools.site import load_site
from tests.report_support import T0, aaic_table, swf_table


def test_rounding_keeps_six_significant_digits_and_nulls_non_finite():
    data = {"a": 0.1234567891, "b": [123456789.123, float("nan")], "c": {"d": float("inf")},
            "e": 7, "f": True, "g": np.float64(2.0 / 3.0), "h": None, "i": "text"}
    assert rounded(data) == {"a": 0.123457, "b": [123457000.0, None], "c": {"d": None},
                             "e": 7, "f": True, "g": 0.666667, "h": None, "i": "text"}


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_rounding_is_idempotent_and_close(value):
    once = rounded(value)
    assert rounded(once) == once
    assert math.isclose(once, value, rel_tol=1e-5, abs_tol=1e-300)


def test_json_text_is_sorted_and_ends_with_a_newline():
    text = json_text({"b": 1, "a": {"d": 2, "c": 3}})
    assert text.endswith("}\n")
    assert list(json.loads(text)) == ["a", "b"]
    assert text.index('"c"') < text.index('"d"')


def test_markdown_has_every_section_and_says_why_analyses_are_missing():
    table = swf_table({"job_id": [1, 2], "gpus": [1, 4], "walltime_s": [600, 900],
                       "swf_status": [1, 1], "submit_time": [T0, T0 + 10]})
    text = analyze(table).markdown
    for heading in ("## Summary", "## 1. Parallelism", "## 2. Walltime request accuracy",
                    "## 3. Walltime", "## 4. Parallelism vs walltime", "## 5. Arrivals",
                    "## Context", "### Utilization"):
        assert heading in text
    assert "*Not computed: the requested walltime is unknown for every job" in text
    assert "single-processor" in text


def test_markdown_links_only_the_figures_listed():
    result = analyze(aaic_table([{"walltime_s": 600}, {"walltime_s": 900, "gpus_per_node": 2}]),
                     site=load_site("aaic"))
    linked = {line.split("(")[1].rstrip(")") for line in result.markdown.splitlines()
              if line.startswith("![")}
    assert linked == set(result.figures)
    assert markdown(result.data) == result.markdown
