"""The canonical long table (CSV / Parquet): checks with file and line."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, strategies as st

from swftools.errors import InputError
from swftools.telemetry.metric_map import identity_map, load_metric_map
from swftools.telemetry.readers_long import LONG_COLUMNS, check_long_table

T = 1_700_000_000
HEADER = "ts,node,gpu_index,metric,value\n"


def _check(path, mm=None):
    return check_long_table(path, mm or identity_map(), duckdb.connect())


def _csv(tmp_path, body, name="l.csv"):
    path = tmp_path / name
    path.write_text(HEADER + body)
    return path


def test_csv_summary(tmp_path):
    path = _csv(tmp_path, f"{T},n1,0,gpu_util_pct,5\n{T + 60},n1,,node_power_w,300.5\n")
    table = _check(path)
    assert table.kind == "csv" and table.metrics == ("gpu_util_pct", "node_power_w")
    assert table.stats.samples_read == 2 and not table.ts_sorted
    con = duckdb.connect()
    rows = con.execute(f"SELECT ts, node, gpu_index, metric, value, line FROM {table.scan_sql()} "
                       "ORDER BY line").fetchall()
    assert rows == [(T, "n1", 0, "gpu_util_pct", 5.0, 2), (T + 60, "n1", None, "node_power_w", 300.5, 3)]


@pytest.mark.parametrize("body,line,message", [
    (f"{T},n1,0,gpu_util_pct,5\n{T},n1,0,gpu_util_pct,high\n", 3, "value 'high' is not a number"),
    (f"{T},n1,0,gpu_util_pct,5\nyesterday,n1,0,gpu_util_pct,1\n", 3, "ts 'yesterday' is not a number"),
    (f"{T},n1,zero,gpu_util_pct,5\n", 2, "gpu_index 'zero' is not a GPU index"),
    (f"{T},n1,0,gpu_util_pct,5\n{T},n1,0,gpu_temp_c,50\n", 3, "'gpu_temp_c' is neither canonical"),
    (f"{T},n1,0,gpu_util_pct,5\n{T * 1000},n1,0,gpu_util_pct,5\n", 3, "looks like milliseconds"),
    (f"{T // 1000},n1,0,gpu_util_pct,5\n", 2, "seconds where milliseconds"),
    (f"{T},,0,gpu_util_pct,5\n", 2, "node is empty"),
])
def test_bad_csv_rows(tmp_path, body, line, message):
    with pytest.raises(InputError, match=message) as info:
        _check(_csv(tmp_path, body))
    assert info.value.line == line and info.value.path.endswith("l.csv")


def test_missing_column(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text(f"ts,node,metric,value\n{T},n1,gpu_util_pct,5\n")
    with pytest.raises(InputError, match="missing column gpu_index") as info:
        _check(path)
    assert info.value.line == 1


def test_wrong_extension(tmp_path):
    path = tmp_path / "l.tsv"
    path.write_text("x")
    with pytest.raises(InputError, match="not a long table"):
        _check(path)


def _parquet(tmp_path, ts, rg=2, metric="gpu_util_pct"):
    n = len(ts)
    table = pa.table({"ts": pa.array(ts, pa.float64()), "node": ["n1"] * n,
                      "gpu_index": pa.array([0] * n, pa.int32()), "metric": [metric] * n,
                      "value": pa.array([1.0] * n)})
    path = tmp_path / "l.parquet"
    pq.write_table(table, path, row_group_size=rg)
    return path


def test_parquet_sorted_detection_and_footer_summary(tmp_path):
    table = _check(_parquet(tmp_path, [T, T + 60, T + 120, T + 180]))
    assert table.kind == "parquet" and table.ts_sorted and table.stats.samples_read == 4
    table = _check(_parquet(tmp_path, [T + 120, T + 180, T, T + 60]))
    assert not table.ts_sorted


def test_parquet_bad_timestamp_names_the_row(tmp_path):
    with pytest.raises(InputError, match="looks like milliseconds") as info:
        _check(_parquet(tmp_path, [T, T + 60, T * 1000.0]))
    assert info.value.line == 3


def test_mapped_source_names_are_accepted(tmp_path):
    path = _parquet(tmp_path, [T], metric="DCGM_FI_DEV_GPU_UTIL")
    with pytest.raises(InputError, match="neither canonical nor in the metric map"):
        _check(path)
    assert _check(path, load_metric_map("dcgm")).metrics == ("DCGM_FI_DEV_GPU_UTIL",)


@given(st.lists(st.tuples(st.integers(0, 10**7), st.sampled_from(["n1", "n-2", "x.y"]),
                          st.none() | st.integers(0, 7),
                          st.floats(min_value=0, max_value=100, allow_nan=False)),
                min_size=1, max_size=30))
def test_csv_round_trip(tmp_path_factory, rows):
    """Property: rows written as a long CSV are read back as the same typed rows."""
    path = tmp_path_factory.mktemp("l") / "l.csv"
    path.write_text(HEADER + "".join(
        f"{T + t},{node},{'' if g is None else g},gpu_util_pct,{v!r}\n" for t, node, g, v in rows))
    table = _check(path)
    got = duckdb.connect().execute(f"SELECT ts, node, gpu_index, value FROM {table.scan_sql()} "
                                   "ORDER BY line").fetchall()
    assert got == [(float(T + t), node, g, v) for t, node, g, v in rows]


# --- issue 13 sweep: a bad token in ts or gpu_index is refused, with the line and field -------

@given(st.sampled_from(["ts", "gpu_index"]), st.integers(0, 2), st.data())
def test_a_bad_token_names_line_and_field(column, row, data):
    import tempfile
    from pathlib import Path

    from tests.strategies import bad_integer_tokens

    bad = bad_integer_tokens.filter(lambda t: "," not in t and t.strip() == t and '"' not in t)
    if column == "ts":  # decimals are valid epoch seconds; anything else is refused
        bad = bad.filter(lambda t: not t.replace(".", "", 1).isdigit() or not t.isascii())
    token = data.draw(bad)
    rows = [[str(T + 60 * i), "n1", "0", "gpu_util_pct", "5"] for i in range(3)]
    rows[row][LONG_COLUMNS.index(column)] = token
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "l.csv"
        path.write_text(HEADER + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
        with pytest.raises(InputError) as err:
            _check(path)
    assert (err.value.line, err.value.field) == (row + 2, column)
