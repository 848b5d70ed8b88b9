"""swftools.report.html: index.html's structure, accessibility, self-containment, determinism."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from swftools import formats, synth
from swftools.errors import InputError, UsageError
from swftools.report import analyze, figures, html, report
from swftools.report.alt import ALT, alt_text
from swftools.report.sections import ANALYSES
from swftools.validate import validate
from tests.conftest import other_hash_seed, sample_html_report

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"


class Page(HTMLParser):
    """Every element with its attributes, the text of each table's caption, and th scopes."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.captions: dict[str, str] = {}
        self.table_ids: list[str] = []
        self.row_labels: dict[str, list[str]] = {}
        self._table: str | None = None
        self._in: str | None = None
        self._text = ""
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        values = {k: v or "" for k, v in attrs}
        self.elements.append((tag, values))
        if tag == "table":
            self._table = values.get("id", f"table{len(self.table_ids)}")
            self.table_ids.append(self._table)
            self.row_labels[self._table] = []
        elif tag in ("caption", "th") and self._table:
            self._in, self._text = tag, ""
            self._scope = values.get("scope")

    def handle_data(self, data):
        if self._in:
            self._text += data

    def handle_endtag(self, tag):
        if tag == self._in == "caption":
            self.captions[self._table] = self._text.strip()
            self._in = None
        elif tag == self._in == "th":
            if self._scope == "row":
                self.row_labels[self._table].append(self._text.strip())
            self._in = None
        elif tag == "table":
            self._table = None

    def all(self, tag: str) -> list[dict[str, str]]:
        return [attrs for t, attrs in self.elements if t == tag]


@pytest.fixture(scope="module")
def sample_table():
    return formats.read(SAMPLE)


@pytest.fixture(scope="module")
def sample_data(sample_table):
    return analyze(sample_table).data


@pytest.fixture(scope="module")
def written_report(tmp_path_factory):
    """``report --html`` of the bundled sample, with a what-if comparison: the Report (its data
    as computed in this process) and the folder written."""
    from swftools.whatif.run import whatif

    base = tmp_path_factory.mktemp("html")
    whatif(formats.read(SAMPLE), "aaic-v100-half",  # the report's trace: its fingerprint
           policies=("packed", "lxv")).write(base / "whatif")
    return report(SAMPLE, base / "rep", html=True, whatif=base / "whatif")


@pytest.fixture(scope="module")
def written(written_report):
    return written_report.out_dir


@pytest.fixture(scope="module")
def text(written):
    return (written / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(text):
    return Page(text)


def test_report_html_writes_index_beside_the_report(written):
    names = sorted(p.name for p in written.iterdir())
    assert "index.html" in names and "report.md" in names and "report.json" in names


def test_page_has_language_headline_table_and_every_section(page, sample_data):
    assert page.all("html") == [{"lang": "en"}]
    assert page.captions["headline"] == "Headline numbers of this trace"
    labels = page.row_labels["headline"]
    assert labels == ["Jobs", "Users", "Groups", "Period (submissions)", "Queues",
                      "GPUs (capacity)", "Mean GPU utilization"]
    ids = {attrs.get("id") for _, attrs in page.elements}
    for key in (*ANALYSES, "context", "context-queues", "context-outcomes",
                "context-per-quarter", "context-utilization", "validation", "consistency",
                "whatif"):
        assert key in ids, key
    assert "download" not in ids  # release sections only in an archive's page


def test_headline_values_are_the_reports(text, sample_data):
    trace = sample_data["trace"]
    cells = re.findall(r'<tr><th scope="row">([^<]+)</th><td class="num">([^<]+)</td>',
                       text.split('id="headline"')[1].split("</table>")[0])
    values = dict(cells)
    assert values["Jobs"] == f"{trace['jobs']:,}"
    assert values["Users"] == f"{trace['users']:,}" and values["Groups"] == f"{trace['groups']:,}"
    utilization = sample_data["context"]["utilization"]["capacity"]["mean_utilization"]
    assert values["Mean GPU utilization"] == f"{100 * utilization:.1f} %"
    assert values["Period (submissions)"].startswith(trace["first_submit_local"][:10])


def test_every_paper_value_is_shown_beside_this_trace(page, text, sample_data):
    paper_tables = [t for t in page.table_ids if t.endswith("-paper")]
    # arrivals: the paper states no value, so no reference table of dashes
    assert {t[: -len("-paper")] for t in paper_tables} >= set(ANALYSES) - {"arrivals"}
    shown = [label for t in paper_tables for label in page.row_labels[t]]
    for row in sample_data["summary"]:
        if row["paper"] is not None:
            assert row["label"] in shown, row["key"]
    referenced = {r["label"] for r in sample_data["summary"] if r["paper"] is not None}
    assert set(shown) == referenced


def test_tables_have_captions_and_scoped_headers(page, text):
    assert page.table_ids and all(page.captions.get(t) for t in page.table_ids)
    ths = page.all("th")
    assert ths and all(th.get("scope") in ("col", "row") for th in ths)
    for wrap in re.findall(r'<div class="table-wrap"[^>]*>', text):
        assert 'role="region"' in wrap and 'tabindex="0"' in wrap  # scrolls on phones


def test_every_figure_has_a_finding_specific_alt_text(page, sample_data):
    imgs = page.all("img")
    assert len(imgs) == len(sample_data["figures"])
    alts = [img["alt"] for img in imgs]
    assert all(len(alt) > 60 and re.search(r"\d", alt) for alt in alts)
    assert len(set(alts)) == len(alts)
    single = sample_data["analyses"]["parallelism"]["classes"]["single"]["share"]
    assert f"{100 * single:.1f} %" in alts[0]


def test_alt_texts_follow_the_numbers(sample_data):
    """The same figure of another trace says something else: the text comes from the data."""
    other = analyze(synth.generate(1500, seed=11)).data
    assert set(ALT) == set(figures.FIGURES)
    for name in sample_data["figures"]:
        assert alt_text(sample_data, name) != alt_text(other, name), name
    util = other["context"]["utilization"]["capacity"]["mean_utilization"]
    assert f"{100 * util:.1f} %" in alt_text(other, "utilization.png")


def test_nothing_is_fetched_from_outside_the_file(page, text):
    assert not page.all("script") and not page.all("link") and not page.all("iframe")
    for tag, attrs in page.elements:
        for key in ("src", "srcset", "data", "poster"):
            if key in attrs:
                assert attrs[key].startswith("data:image/svg+xml;base64,"), (tag, key)
        if "href" in attrs:
            assert tag == "a", tag
    assert "@import" not in text and not re.search(r"url\(", text)
    for img in page.all("img"):
        svg = base64.b64decode(img["src"].split(",", 1)[1]).decode()
        assert svg.lstrip().startswith("<?xml") and "<image" not in svg.replace("<image/>", "")


def test_external_links_are_plain_anchors(tmp_path):
    """In an archive's page the licence URL is an <a href>, never a resource."""
    example = ROOT / "archive" / "example" / "index.html"
    parsed = Page(example.read_text(encoding="utf-8"))
    external = [(t, a) for t, a in parsed.elements
                if any(str(v).startswith(("http://", "https://")) for v in a.values())]
    assert external and all(t == "a" and set(a) == {"href"} for t, a in external)


def test_whatif_table_lists_each_policy(page, written):
    assert page.captions["whatif-table"].startswith("What-if replays per placement policy")
    assert page.row_labels["whatif-table"] == ["packed", "lxv"]


def test_two_renders_are_byte_identical(sample_table, written_report, text):
    """The page ``report --html`` wrote, rendered again in this process from its report data
    after a JSON round trip (as report.json holds it), with the same validation, consistency
    findings and what-if comparison: the same bytes."""
    from swftools.report import consistency
    from swftools.site import resolve_site

    site = resolve_site(None, sample_table)  # as report() resolves it (the table names aaic)
    assert site is not None and site.name == "aaic"
    second = html.page(json.loads(json.dumps(written_report.data)),
                       validation=validate(sample_table, site=site),
                       consistency=consistency.findings(sample_table, site),
                       whatif=html.load_whatif(written_report.out_dir.parent / "whatif"))
    assert second == text


def test_page_is_byte_identical_across_processes(written, tmp_path_factory):
    """``whatif`` and ``report --html --whatif`` run again by the CLI in other processes, under
    another hash seed than this one's: every file they write (index.html, report.json,
    report.md, the PNGs; the what-if's files) is the same bytes as the in-process run's (the
    ``written`` fixture: the sample with its what-if comparison)."""
    # this process's seed is random unless PYTHONHASHSEED is set: the child's must differ
    env = dict(os.environ, PYTHONHASHSEED=other_hash_seed())
    child_hash = subprocess.run([sys.executable, "-c", "print(hash('swftools'))"], check=True,
                                capture_output=True, text=True, env=env).stdout.strip()
    assert child_hash != str(hash("swftools"))  # the two processes hash strings differently
    out = sample_html_report(tmp_path_factory)
    for mine, theirs in ((written, out), (written.parent / "whatif", out.parent / "whatif")):
        names = sorted(p.name for p in mine.iterdir())
        assert sorted(p.name for p in theirs.iterdir()) == names
        for name in names:
            assert (theirs / name).read_bytes() == (mine / name).read_bytes(), name
    assert "index.html" in {p.name for p in out.iterdir()}


def test_svg_has_no_date_nor_creator(sample_data, page):
    """One SVG drawn here is byte-identical to the page's (drawn earlier in this process from the
    same data); each figure's phone-width variant differs from its wide one."""
    svg = figures.svg(sample_data, "utilization.png")
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg
    wide = [img["src"] for img in page.all("img")]
    assert html._svg_data_url(svg) in wide
    narrow = [source["srcset"] for source in page.all("source")]
    assert len(narrow) == len(wide) == len(sample_data["figures"])
    assert all(n != w for n, w in zip(narrow, wide))


def test_whatif_needs_html_and_a_comparison(tmp_path):
    with pytest.raises(UsageError, match="--html"):
        report(SAMPLE, tmp_path / "a", whatif=tmp_path)
    with pytest.raises(InputError, match="no what-if comparison"):
        report(SAMPLE, tmp_path / "b", html=True, whatif=tmp_path)
    (tmp_path / "comparison.json").write_text('{"policies": [{"policy": "packed"}]}')
    with pytest.raises(InputError, match="lacks jobs"):
        html.load_whatif(tmp_path)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_skipped_analyses_are_said_on_the_page(tmp_path, stub_figures):
    """An SWF trace without requested walltimes: the page says why, with no figure for it."""
    from tests.report_support import swf_table

    table = swf_table({"job_id": [1, 2, 3], "submit_time": [0, 100, 200],
                       "wait_s": [0, 5, 10], "walltime_s": [600, 700, 800],
                       "gpus": [1, 2, 4]})
    data = analyze(table).data
    text = html.page(data)
    parsed = Page(text)
    assert "Not computed:" in text
    assert len(parsed.all("img")) == len(data["figures"])


def test_validation_findings_are_listed_per_rule(stub_figures):
    from tests.report_support import aaic_table

    table = aaic_table([{"walltime_s": 600}, {"walltime_s": 700}, {"walltime_s": -50}])
    validation = validate(table)
    assert validation.errors
    parsed = Page(html.page(analyze(table).data, validation=validation))
    fired = sorted(validation.fired())
    assert parsed.row_labels["validation-rules"] == fired  # every rule that found something
    clean = parsed.row_labels["validation-clean"]
    assert clean and not set(clean) & set(fired)
    assert set(clean) | set(fired) == set(validation.rules_run) | set(fired)


def test_whatif_of_another_trace_is_refused(tmp_path):
    """A comparison records its trace's fingerprint; report --whatif refuses another trace's,
    and one with no fingerprint (an older swftools), before the analysis and writing nothing."""
    from typer.testing import CliRunner

    from swftools.cli import app
    from swftools.whatif.run import whatif

    whatif(formats.read(SAMPLE).slice(0, 50), "aaic", policies="packed").write(tmp_path / "w")
    with pytest.raises(InputError, match="made from another trace") as info:
        report(SAMPLE, tmp_path / "r", html=True, whatif=tmp_path / "w")
    assert info.value.field == "trace/fingerprint"
    result = CliRunner().invoke(app, ["report", str(SAMPLE), "-o", str(tmp_path / "r"),
                                      "--html", "--whatif", str(tmp_path / "w")])
    assert result.exit_code == 1 and "another trace (aaic-sample.csv.gz, 50 jobs)" in result.output
    assert "Traceback" not in result.output
    doc = json.loads((tmp_path / "w" / "comparison.json").read_text())
    del doc["trace"]
    (tmp_path / "w" / "comparison.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="no trace fingerprint"):
        report(SAMPLE, tmp_path / "r", html=True, whatif=tmp_path / "w")
    assert not (tmp_path / "r").exists()


def test_whatif_context_says_when_jobs_were_placed_by_gpu_count():
    from swftools.whatif.compare import COLUMNS

    row = {"policy": "packed", **{key: 1.0 for key, _, _ in COLUMNS}}
    base = {"site": "aaic", "scheduler": "easy", "seed": 0, "policies": [row]}
    assert html.whatif_table(base)["context"] == "site aaic, scheduler easy, seed 0"
    for shape, tail in (("recorded", ""), ("gpus", ", jobs placed by GPU count")):
        assert html.whatif_table({**base, "shape": shape})["context"] == (
            "site aaic, scheduler easy, seed 0" + tail)


def _cpu_data():
    """A CPU SWF trace (processors, no node counts, no site) over two quarters."""
    from tests.report_support import T0, swf_table

    n = 40
    return analyze(swf_table({
        "job_id": list(range(1, n + 1)), "gpus": [1 + (i % 5) * 7 for i in range(n)],
        "walltime_s": [600 + 97 * i for i in range(n)], "swf_status": [1] * n,
        "requested_walltime_s": [3600] * n, "submit_time": [T0 + 3571 * 60 * i for i in range(n)],
        "start_time": [T0 + 3571 * 60 * i for i in range(n)],
        "finish_time": [T0 + 3571 * 60 * i + 600 + 97 * i for i in range(n)],
        "wait_s": [0] * n}, swf_header=[["Version", "2.2"], ["MaxProcs", "100"]])).data


def test_a_cpu_trace_is_not_framed_by_the_aaic_paper(stub_figures):
    """KTH-SP2-like: no AAIC reference anywhere (tables, alt texts, footer), units in
    processors, and the alt text says why there is no node-count chart."""
    data = _cpu_data()
    text = html.page(data)
    parsed = Page(text)
    assert not [t for t in parsed.table_ids if t.endswith("-paper")]
    assert "AAIC reference" not in text and "AAIC paper:" not in text and "96.0 %" not in text
    assert "Processors (capacity)" in parsed.row_labels["headline"]
    assert parsed.captions["headline"] == "Headline numbers of this trace"
    alts = {img["alt"] for img in parsed.all("img")}
    assert not any("AAIC" in alt or "GPU" in alt for alt in alts)
    breakdown = alt_text(data, "parallelism_breakdown.png")
    assert "no such jobs" not in breakdown and "node counts are unknown" in breakdown
    assert "single-processor" in alt_text(data, "parallelism.png")


def test_an_aaic_trace_carries_the_labelled_reference(page, sample_data):
    captions = [c for t, c in page.captions.items() if t.endswith("-paper")]
    assert captions and all(c.startswith("AAIC reference") for c in captions)
    assert "(AAIC reference: 96.0 % single-GPU jobs)" in alt_text(sample_data, "parallelism.png")


def test_contents_are_not_numbered_twice(text, page):
    """The analyses' titles carry their number (1. Parallelism): the contents list adds none."""
    nav = text.split('<nav aria-label="Contents">')[1].split("</nav>")[0]
    assert "<li><a href=\"#parallelism\">1. Parallelism</a></li>" in nav
    rule = re.search(r"nav ol \{([^}]*)\}", text).group(1)
    assert "list-style: none" in rule


def test_footer_links_report_json_beside_the_report(written, text):
    footer = text.split("<footer>")[1]
    assert '<a href="report.json">' in footer and (written / "report.json").is_file()


def test_settings_text_shows_code_not_backticks():
    assert str(html.code_spans("made by `swftools synth` <b>")) == \
        "made by <code>swftools synth</code> &lt;b&gt;"
    assert str(html.code_spans("no code here")) == "no code here"


def test_whatif_units_follow_the_report_trace():
    doc = {"policies": [{"policy": "packed", **{k: 1.0 for k, _, _ in html.WHATIF_COLUMNS}}]}
    assert any("processor-hours" in h for h in html.whatif_table(doc, "processor")["headers"])
    assert any("GPU-hours" in h for h in html.whatif_table(doc, "gpu")["headers"])
