"""Text exposition 0.0.4 (ms timestamps) and OpenMetrics (s timestamps) via prometheus_client."""

from __future__ import annotations

from dataclasses import astuple

import pytest
from hypothesis import given, strategies as st

from swftools.errors import InputError
from swftools.telemetry.buffer import SampleBuffer
from swftools.telemetry.metric_map import load_metric_map
from swftools.telemetry.readers_exposition import detect_text_format, read_exposition

T = 1_700_000_000

PROM = f"""# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{{gpu="0",Hostname="g1"}} 10 {T}000
DCGM_FI_DEV_GPU_UTIL{{gpu="0",Hostname="g1"}} 20 {T + 60}500

# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0",Hostname="g1"}} 5000 {T}000
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0",Hostname="g1"}} NaN {T + 60}000
"""

OM = f"""# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{{gpu="1",Hostname="g2"}} 30 {T}
DCGM_FI_DEV_GPU_UTIL{{gpu="1",Hostname="g2"}} 40 {T + 60}.25
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total{{gpu="1",Hostname="g2"}} 7000 {T}
# EOF
"""


def _read(tmp_path, text, name="x.prom", maps="dcgm"):
    path = tmp_path / name
    path.write_text(text)
    buf = SampleBuffer(load_metric_map(maps))
    stats = read_exposition(path, buf, 3)
    return path, buf.to_table().to_pylist(), stats


def test_prometheus_text_timestamps_are_milliseconds(tmp_path):
    _, rows, stats = _read(tmp_path, PROM)
    assert stats.format == "prometheus-text"
    assert [(r["metric"], r["ts"], r["value"]) for r in rows] == [
        ("gpu_util_pct", T, 10.0), ("gpu_util_pct", T + 60.5, 20.0), ("gpu_energy_j", T, 5.0)]
    assert stats.non_finite_dropped == 1 and all(r["src"] == 3 for r in rows)


def test_openmetrics_timestamps_are_seconds_and_counters_end_in_total(tmp_path):
    _, rows, stats = _read(tmp_path, OM, "x.om")
    assert stats.format == "openmetrics"
    assert [(r["metric"], r["ts"], r["value"], r["node"], r["gpu_index"]) for r in rows] == [
        ("gpu_util_pct", T, 30.0, "g2", 1), ("gpu_util_pct", T + 60.25, 40.0, "g2", 1),
        ("gpu_energy_j", T, 7.0, "g2", 1)]


def test_format_is_detected_from_eof():
    assert detect_text_format(OM.splitlines()) == "openmetrics"
    assert detect_text_format(PROM.splitlines()) == "prometheus-text"


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_parse_errors_carry_the_line(tmp_path):
    text = PROM.replace(f"20 {T + 60}500", f"twenty {T + 60}500")
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    assert info.value.line == _line_of(text, "twenty")
    assert "prometheus-text parse error" in str(info.value)
    text = OM.replace(f"{{gpu=\"1\",Hostname=\"g2\"}} 40", "{gpu=\"1\",Hostname=g2} 40")
    with pytest.raises(InputError) as info:
        _read(tmp_path, text, "x.om")
    assert info.value.line == _line_of(text, "Hostname=g2")


def test_openmetrics_without_eof_is_read_as_text_and_then_timestamps_betray_it(tmp_path):
    text = OM.replace("# EOF\n", "")
    with pytest.raises(InputError, match="seconds where milliseconds were expected") as info:
        _read(tmp_path, text)
    assert info.value.line == 2


def test_milliseconds_in_openmetrics_are_detected(tmp_path):
    text = OM.replace(f" {T + 60}.25", f" {T + 60}250")
    with pytest.raises(InputError, match="looks like milliseconds") as info:
        _read(tmp_path, text, "x.om")
    assert info.value.line == _line_of(text, f"{T + 60}250")


def test_unknown_metric_and_missing_labels_name_the_line(tmp_path):
    text = PROM + f'DCGM_FI_DEV_GPU_TEMP{{gpu="0",Hostname="g1"}} 50 {T}000\n'
    with pytest.raises(InputError, match="'DCGM_FI_DEV_GPU_TEMP' has no entry") as info:
        _read(tmp_path, text)
    assert info.value.line == len(text.splitlines())
    text = PROM.replace(f'{{gpu="0",Hostname="g1"}} 20', '{Hostname="g1"} 20')
    with pytest.raises(InputError, match="label 'gpu' is missing") as info:
        _read(tmp_path, text)
    assert info.value.line == _line_of(text, '{Hostname="g1"} 20')
    text = PROM.replace(f'{{gpu="0",Hostname="g1"}} 20', '{gpu="x",Hostname="g1"} 20')
    with pytest.raises(InputError, match="'x' is not a GPU index"):
        _read(tmp_path, text)


def test_samples_need_timestamps(tmp_path):
    text = PROM.replace(f"20 {T + 60}500", "20")
    with pytest.raises(InputError, match="has no timestamp") as info:
        _read(tmp_path, text)
    assert info.value.line == _line_of(text, "} 20")


def test_percent_above_hundred_means_a_wrong_scale(tmp_path):
    text = PROM.replace(f"20 {T + 60}500", f"2000 {T + 60}500")
    with pytest.raises(InputError, match="exceeds 100 %") as info:
        _read(tmp_path, text)
    assert info.value.line == _line_of(text, "2000")


def test_empty_file(tmp_path):
    with pytest.raises(InputError, match="no samples"):
        _read(tmp_path, "# just a comment\n")


label_values = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                       min_size=1, max_size=8)


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@given(host=label_values, gpu=st.integers(0, 15), openmetrics=st.booleans(),
       points=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 100)), min_size=1,
                       max_size=20, unique_by=lambda p: p[0]))
def test_written_expositions_read_back(tmp_path_factory, host, gpu, openmetrics, points):
    """Property: any escaped host label, GPU and ms timestamps survive both text formats."""
    points = sorted(points)
    lines = ["# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    for t_ms, v in points:
        ms = T * 1000 + t_ms
        stamp = f"{ms // 1000}.{ms % 1000:03d}" if openmetrics else str(ms)
        lines.append(f'DCGM_FI_DEV_GPU_UTIL{{gpu="{gpu}",Hostname="{_escape(host)}"}} {v} {stamp}')
    if openmetrics:
        lines.append("# EOF")
    path = tmp_path_factory.mktemp("om") / "x.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    buf = SampleBuffer(load_metric_map("dcgm"))
    read_exposition(path, buf, 0)
    rows = buf.to_table().to_pylist()
    assert [(r["ts"], r["value"], r["node"], r["gpu_index"]) for r in rows] == [
        ((T * 1000 + t) / 1000, float(v), host, gpu) for t, v in points]


# --- issue 13 sweep: a bad token in the timestamp or the GPU index label is refused and located --

@given(st.sampled_from(["timestamp", "gpu"]), st.integers(0, 2), st.data())
def test_a_bad_token_names_line_and_field(field, row, data):
    import tempfile
    from pathlib import Path

    from tests.strategies import bad_integer_tokens

    # a timestamp token that parses as a float is caught by the range check; any other is refused
    token = data.draw(bad_integer_tokens.filter(lambda t: t.strip() == t and '"' not in t))
    lines = ["# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"] + [
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="0",Hostname="g1"}} 10 {T + 60 * i}000\n' for i in range(3)]
    if field == "gpu":
        lines[1 + row] = lines[1 + row].replace('gpu="0"', f'gpu="{token}"')
    else:
        lines[1 + row] = lines[1 + row].rsplit(" ", 1)[0] + f" {token}\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.prom"
        path.write_text("".join(lines), encoding="utf-8")
        with pytest.raises(InputError) as err:
            read_exposition(path, SampleBuffer(load_metric_map("dcgm")), 0)
    assert err.value.line == row + 2
    assert err.value.field == field


def test_other_scripts_digits_are_not_numbers(tmp_path):
    text = PROM.replace(f"}} 10 {T}000", f"}} \u0661\u0662 {T}000")
    with pytest.raises(InputError) as err:
        _read(tmp_path, text)
    assert (err.value.line, err.value.field, err.value.value) == (3, "value", "\u0661\u0662")
    with pytest.raises(InputError, match="is not a GPU index"):
        _read(tmp_path, PROM.replace('gpu="0"', 'gpu="\u0661"', 1))


def test_lines_stay_right_after_openmetrics_drops_a_duplicate(tmp_path):
    """OpenMetrics keeps one of two identical samples: the samples after it are one line
    further down than their count says, for gauges and for counters (``_total`` samples)."""
    gauge = (f'# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n'
             f'DCGM_FI_DEV_GPU_UTIL{{gpu="1",Hostname="g2"}} 30 {T}\n'
             f'DCGM_FI_DEV_GPU_UTIL{{gpu="1",Hostname="g2"}} 30 {T}\n'
             f'DCGM_FI_DEV_GPU_UTIL{{gpu="1",Hostname="g2"}} 400 {T + 60}\n# EOF\n')
    with pytest.raises(InputError, match="exceeds 100 %") as info:
        _read(tmp_path, gauge, "g.om")
    assert info.value.line == 4
    name = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
    counter = (f'# TYPE {name} counter\n{name}_total{{gpu="1",Hostname="g2"}} 7000 {T}\n'
               f'{name}_total{{gpu="1",Hostname="g2"}} 7000 {T}\n'
               f'{name}_total{{gpu="1"}} 9000 {T + 60}\n# EOF\n')
    with pytest.raises(InputError, match="label 'Hostname' \\(the node\\) is missing") as info:
        _read(tmp_path, counter, "c.om")
    assert info.value.line == 4


def test_the_tokens_after_a_sample_name_and_labels():
    from swftools.telemetry.readers_exposition import _bad_number, _sample_tail

    assert _sample_tail('m{a="x}y",b="}"} 5 17') == ["5", "17"]   # the last brace closes
    assert _sample_tail('m{a="1"}5 17') == ["5", "17"]
    assert _sample_tail("m") == [] and _sample_tail("  m 5") == ["5"]
    assert _sample_tail('m{a="x}y"} 5 17 # {trace_id="a}b"} 1 17') == [
        "5", "17", "#", '{trace_id="a}b"}', "1", "17"]               # an exemplar's braces
    assert _sample_tail('m{a="say \\"}\\""} 5') == ["5"]            # an escaped quote
    assert _sample_tail('m{a="x"') == []
    assert _sample_tail("m{} 5 17") == ["5", "17"]
    assert _sample_tail('m{a="x y"} 5 17 # {t="z"} 1') == ["5", "17", "#", '{t="z"}', "1"]
    assert _sample_tail('{a="x y"} 5') == ["5"]                      # no name: labels first
    assert _bad_number('m{a="x}y"} 1_000 17') == ("value", "1_000")
    assert _bad_number("m 5 17_0") == ("timestamp", "17_0")
    assert _bad_number("m 5 x") == ("timestamp", "x")
    assert _bad_number("m 5 17") == (None, None)


def test_unreadable_files_and_unknown_formats_are_named(tmp_path):
    path = tmp_path / "a-folder.prom"
    path.mkdir()
    path2 = tmp_path / "latin.prom"
    path2.write_bytes(PROM.replace("utilization", "utilizaci\xf3n").encode("latin-1"))
    for bad, start in ((path, "cannot read file: "), (path2, "not UTF-8 text (invalid")):
        with pytest.raises(InputError) as info:
            read_exposition(bad, SampleBuffer(load_metric_map("dcgm")), 0)
        assert info.value.path == str(bad) and info.value.message.startswith(start)
    good = tmp_path / "good.prom"
    good.write_text(PROM)
    with pytest.raises(InputError) as info:
        read_exposition(good, SampleBuffer(load_metric_map("dcgm")), 0, fmt="json")
    err = info.value
    assert (err.path, err.message, err.expected) == (str(good), "unknown text format 'json'",
                                                     "prometheus-text or openmetrics")


def test_an_exposition_is_utf8_whatever_the_locale(tmp_path):
    from .conftest import text_under_c_locale

    path = tmp_path / "u.prom"
    path.write_text(PROM.replace('Hostname="g1"', 'Hostname="nœud-1"'), encoding="utf-8")
    code = ("import sys; from swftools.telemetry.buffer import SampleBuffer; "
            "from swftools.telemetry.metric_map import load_metric_map; "
            "from swftools.telemetry.readers_exposition import read_exposition; "
            "b = SampleBuffer(load_metric_map('dcgm')); read_exposition(sys.argv[1], b, 0); "
            "print(b.to_table().column('node')[0].as_py().encode().hex())")
    assert text_under_c_locale(code, str(path)) == "nœud-1"
    assert _read(tmp_path, path.read_text(encoding="utf-8"))[1][0]["node"] == "nœud-1"


def test_a_value_in_other_digits_before_an_exemplar_is_refused(tmp_path):
    name = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
    text = (f'# TYPE {name} counter\n'
            f'{name}_total{{gpu="1",Hostname="g2"}} \u0661\u0662 {T} # {{trace_id="a"}} 1 {T}\n'
            "# EOF\n")
    with pytest.raises(InputError) as info:
        _read(tmp_path, text, "e.om")
    err = info.value
    assert (err.message, err.line, err.field) == ("'\u0661\u0662' is not a number", 2, "value")


def test_a_sample_without_timestamp_is_located_in_full(tmp_path):
    text = PROM.replace(f"20 {T + 60}500", "20")
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    err = info.value
    assert (err.path, err.message, err.line, err.field, err.expected) == (
        str(tmp_path / "x.prom"), "sample of DCGM_FI_DEV_GPU_UTIL has no timestamp", 4,
        "timestamp", "every sample with a timestamp")
    text = PROM.replace(f'{{gpu="0",Hostname="g1"}} 20', '{gpu="0"} 20')
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    assert info.value.path == str(tmp_path / "x.prom") and info.value.line == 4


def test_every_file_level_refusal_word_for_word(tmp_path):
    path, _, stats = _read(tmp_path, OM, "s.om")
    assert (stats.path, stats.format, stats.samples_read) == (str(path), "openmetrics", 3)
    bad = PROM.replace(f"20 {T + 60}500", f"20 {T + 60}5x0")
    with pytest.raises(InputError) as info:
        _read(tmp_path, bad)
    err = astuple(info.value)
    assert err[0] == str(tmp_path / "x.prom") and err[1].startswith("prometheus-text parse error: ")
    assert err[2:] == (4, "timestamp", f"{T + 60}5x0",
                       "prometheus-text exposition with timestamps in milliseconds")
    with pytest.raises(InputError) as info:
        _read(tmp_path, OM.replace(" 30 ", " 3x0 "), "b.om")
    assert astuple(info.value)[2:] == (2, "value", "3x0",
                                       "openmetrics exposition with timestamps in seconds")
    with pytest.raises(InputError) as info:
        _read(tmp_path, "# HELP m nothing\n  # an indented comment\n\n", "c.prom")
    assert astuple(info.value) == (str(tmp_path / "c.prom"), "no samples", None, None, None,
                                   "prometheus-text samples with timestamps")
    digits = PROM.replace(f"20 {T + 60}500", "\u0662\u0660 " + f"{T + 60}500")
    with pytest.raises(InputError) as info:
        _read(tmp_path, digits)
    assert astuple(info.value) == (str(tmp_path / "x.prom"), "'\u0662\u0660' is not a number", 4,
                                   "value", "\u0662\u0660",
                                   "ASCII digits (a float value, an integer timestamp)")


def test_lines_stay_right_in_a_later_family_and_after_indented_comments(tmp_path):
    text = ("  # a comment indented\n" + PROM.replace(
        f'NaN {T + 60}000', f'NaN {T + 60}000\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0"}} 1 {T}000'))
    with pytest.raises(InputError) as info:
        _read(tmp_path, text)
    assert "label 'Hostname' (the node) is missing" in info.value.message
    assert info.value.line == _line_of(text, '{gpu="0"} 1 ')


def test_a_file_of_blank_lines_is_read_as_text_and_has_no_samples(tmp_path):
    with pytest.raises(InputError) as info:
        _read(tmp_path, "\n  \n\n", "blank.prom")
    assert (info.value.message, info.value.expected) == (
        "no samples", "prometheus-text samples with timestamps")
    assert detect_text_format(["\n", " \n"]) == "prometheus-text"


def test_a_bad_sample_is_named_by_its_own_line_among_look_alikes(tmp_path):
    """The line of a sample is searched from its position on: a later sample or an earlier
    one with the same name, labels and timestamp is not taken for it."""
    util = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="g1"}'
    other = "# TYPE OTHER gauge\n"
    text = f"{util} 10 {T}000\n{other}OTHER 1\nOTHER 2\n"  # the second family's first sample
    with pytest.raises(InputError, match="sample of OTHER has no timestamp") as info:
        _read(tmp_path, text, "a.prom")
    assert info.value.line == 3
    text = f"{other}OTHER 1 {T}000\nOTHER 2\nOTHER 3\n"  # the family's second sample
    with pytest.raises(InputError, match="sample of OTHER has no timestamp") as info:
        _read(tmp_path, text, "b.prom")
    assert info.value.line == 3
    text = f"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n{util} 10 {T}000\n{util} 400 {T}000\n"
    with pytest.raises(InputError, match="exceeds 100 %") as info:  # same time, 2nd is bad
        _read(tmp_path, text, "c.prom")
    assert info.value.line == 3


def test_a_bad_sample_after_ten_thousand_is_named_by_its_line(tmp_path):
    """A third family's sample after 10,000 others: line 1 is the TYPE line, 2-10001 the
    first family, 10002 the second, 10003 the unmapped metric (about 0.5 s)."""
    util = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="g1"}'
    text = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" + "".join(
        f"{util} 10 {T + i}000\n" for i in range(10_000))
    text += f'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0",Hostname="g1"}} 5000 {T}000\n'
    with pytest.raises(InputError, match="'OTHER' has no entry") as info:
        _read(tmp_path, text + f"OTHER 1 {T}000\n")
    assert info.value.line == 10_003


def test_a_bad_sample_after_ten_thousand_dropped_duplicates_is_named_by_its_line(tmp_path):
    """OpenMetrics keeps one of 10,001 identical samples: the bad one after them is sample 2
    but line 10,003 (1 TYPE line, 10,001 copies); the line search has no horizon (~0.6 s)."""
    util = 'DCGM_FI_DEV_GPU_UTIL{gpu="1",Hostname="g2"}'
    text = ("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" + f"{util} 30 {T}\n" * 10_001
            + f"{util} 400 {T + 60}\n# EOF\n")
    with pytest.raises(InputError, match="exceeds 100 %") as info:
        _read(tmp_path, text, "dups.om")
    assert info.value.line == 10_003


def test_a_bucket_with_an_exemplar_is_named_by_its_line(tmp_path):
    """A bucket line with an exemplar does not parse alone (an untyped sample has none), so
    its line is the one its position gives."""
    text = ('# TYPE h histogram\nh_bucket{le="1"} 1 # {t="x"} 0.5\nh_bucket{le="+Inf"} 2\n'
            'h_count 2\nh_sum 3\n# EOF\n')
    with pytest.raises(InputError, match="sample of h_bucket has no timestamp") as info:
        _read(tmp_path, text, "ex.om")
    assert (info.value.line, info.value.field) == (2, "timestamp")


def test_a_bad_sample_after_its_look_alike_in_an_earlier_family_is_named_by_its_own_line(tmp_path):
    """Without TYPE lines every sample is a family of its own: the bad one (line 4) repeats
    the name, labels and time of a good one (line 2) two families before it."""
    key = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="g1"}'
    text = (f'DCGM_FI_DEV_GPU_UTIL{{gpu="1",Hostname="g1"}} 10 {T}000\n'
            f"{key} 20 {T}000\n"
            f'DCGM_FI_DEV_GPU_UTIL{{gpu="2",Hostname="g1"}} 30 {T}000\n'
            f"{key} 2000 {T}000\n")
    with pytest.raises(InputError, match="exceeds 100 %") as info:
        _read(tmp_path, text)
    assert info.value.line == 4
