"""The canonical long table (CSV / Parquet): checks with file and line."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    with pytest.raises(InputError, match=r": not a long table \(expected") as info:
        _check(path)
    assert (info.value.path, info.value.expected) == (str(path), ".csv, .csv.gz or .parquet")


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


# --- issue 30: compression by content, headers, empty cells, footers, the time span ------------

def _rows_of(table):
    return duckdb.connect().execute(f"SELECT ts, node, gpu_index, metric, value FROM {table.scan_sql()} "
                                    "ORDER BY line").fetchall()


def test_gzip_is_told_by_content_not_by_name(tmp_path):
    import gzip
    import warnings

    from swftools.formats.inputs import MisnamedGzipWarning

    body = HEADER + f"{T},n1,0,gpu_util_pct,5\n"
    packed = tmp_path / "packed.csv"  # gzip content under a plain name
    packed.write_bytes(gzip.compress(body.encode()))
    gz = tmp_path / "l.csv.gz"
    gz.write_bytes(gzip.compress(body.encode()))
    for path in (packed, gz):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert _rows_of(_check(path)) == [(T, "n1", 0, "gpu_util_pct", 5.0)]
    plain = tmp_path / "plain.csv.gz"
    plain.write_text(body)
    with pytest.warns(MisnamedGzipWarning, match="plain.csv.gz: named .gz but the content is not gzip") as seen:
        rows = _rows_of(_check(plain))
    assert rows == [(T, "n1", 0, "gpu_util_pct", 5.0)]
    assert len(seen) == 1  # once, when the file is checked, not at every scan


def test_numbers_as_exporters_write_them(tmp_path):
    path = _csv(tmp_path, f"{T}.5,n1,,node_power_w,-inf\n{T + 1},n1,7,gpu_util_pct,NaN\n"
                          f"{T + 2},n1,0,gpu_util_pct,+Infinity\n{T + 3},n1,0,gpu_util_pct,1e2\n")
    rows = _rows_of(_check(path))
    assert [r[:3] for r in rows] == [(T + 0.5, "n1", None), (T + 1, "n1", 7), (T + 2, "n1", 0),
                                     (T + 3, "n1", 0)]
    values = [r[4] for r in rows]
    assert values[0] == float("-inf") and values[1] != values[1] and values[2:] == [float("inf"), 100.0]


@pytest.mark.parametrize("body,line,field,message", [
    (f"{T},n1,0,,5\n", 2, "metric", "metric is empty"),
    (f"{T},n1,0,gpu_util_pct,5\n{T},n1,0,gpu_util_pct,\n", 3, "value", "value None is not a number"),
    (f"{T},n1,0,gpu_util_pct,1_0\n", 2, "value", "value '1_0' is not a number"),
    (",n1,0,gpu_util_pct,5\n", 2, "ts", "ts None is not a number"),
    (f"{T},n1,-1,gpu_util_pct,5\n", 2, "gpu_index", "gpu_index '-1' is not a GPU index"),
])
def test_empty_and_malformed_cells_name_line_and_field(tmp_path, body, line, field, message):
    with pytest.raises(InputError, match=message) as info:
        _check(_csv(tmp_path, body))
    assert (info.value.line, info.value.field) == (line, field)


def test_header_errors(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text(f"ts,node,metric\n{T},n1,gpu_util_pct\n")
    with pytest.raises(InputError, match=r"missing columns gpu_index, value \(expected") as info:
        _check(path)
    assert (info.value.line, info.value.field, info.value.value) == (1, "header", "ts,node,metric")
    assert info.value.expected == "columns ts, node, gpu_index, metric, value"
    assert info.value.path == str(path)
    bad = tmp_path / "l.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="cannot read parquet file: Parquet magic bytes not found") as info:
        _check(bad)
    assert info.value.path == str(bad)
    with pytest.raises(InputError, match="no such file$") as info:
        _check(tmp_path / "gone.csv")
    assert info.value.path == str(tmp_path / "gone.csv")


def test_a_parquet_file_whose_data_cannot_be_read_is_located_on_the_file(tmp_path):
    """A footer that reads (summary, null counts) over a damaged data page: the first line of
    DuckDB's own error, on the file."""
    path = tmp_path / "l.parquet"
    n = 4
    pq.write_table(pa.table({"ts": pa.array([T + 60 * i for i in range(n)], pa.float64()),
                             "node": ["n1"] * n, "gpu_index": pa.array([0] * n, pa.int32()),
                             "metric": ["gpu_util_pct"] * n, "value": pa.array([1.0] * n)}),
                   path, compression="none", use_dictionary=False)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(3)  # the metric column's page
    data = bytearray(path.read_bytes())
    start, stop = chunk.data_page_offset, chunk.data_page_offset + chunk.total_compressed_size
    data[start:stop] = b"\xff" * (stop - start)
    path.write_bytes(bytes(data))
    with pytest.raises(duckdb.Error) as raw:
        duckdb.connect().execute(f"SELECT DISTINCT metric FROM read_parquet('{path}')").fetchall()
    with pytest.raises(InputError) as info:
        _check(path)
    first = str(raw.value).splitlines()[0]
    assert (info.value.path, info.value.message) == (str(path), f"cannot read: {first}")
    assert (info.value.line, info.value.field) == (None, None)


def test_a_path_with_a_quote(tmp_path):
    folder = tmp_path / "it's"
    folder.mkdir()
    for name in ("l.csv", "l.parquet"):
        path = folder / name
        if name.endswith(".csv"):
            path.write_text(HEADER + f"{T},n1,0,gpu_util_pct,5\n")
        else:
            pq.write_table(pa.table({"ts": [float(T)], "node": ["n1"], "gpu_index": pa.array([0], pa.int32()),
                                     "metric": ["gpu_util_pct"], "value": [5.0]}), path)
        table = _check(path)
        assert _rows_of(table) == [(T, "n1", 0, "gpu_util_pct", 5.0)] and table.metrics == ("gpu_util_pct",)


def test_time_span_of_the_rows(tmp_path):
    table = _check(_csv(tmp_path, f"{T + 60},n1,0,gpu_util_pct,5\n{T},n1,0,gpu_util_pct,5\n"))
    assert (table.ts_min, table.ts_max) == (T, T + 60)
    table = _check(_parquet(tmp_path, [T + 120, T + 180, T, T + 60]))
    assert (table.ts_min, table.ts_max) == (T, T + 180)
    empty = _check(_parquet(tmp_path, []))
    assert (empty.ts_min, empty.ts_max, empty.stats.samples_read, empty.metrics) == (None, None, 0, ())
    csv = _check(_csv(tmp_path, ""))
    assert (csv.ts_min, csv.ts_max, csv.stats.samples_read) == (None, None, 0)
    one = _check(_parquet(tmp_path, [T + 5]))
    assert (one.ts_min, one.ts_max, one.stats.samples_read) == (T + 5, T + 5, 1)
    path = tmp_path / "none.parquet"  # no row group at all: the footer says 0 rows
    pq.ParquetWriter(path, pa.schema([("ts", pa.float64()), ("node", pa.string()),
                                      ("gpu_index", pa.int32()), ("metric", pa.string()),
                                      ("value", pa.float64())])).close()
    assert pq.ParquetFile(path).metadata.num_row_groups == 0
    none = _check(path)
    assert (none.ts_min, none.ts_max, none.stats.samples_read, none.metrics) == (None, None, 0, ())


def test_row_groups_in_order_when_they_only_touch(tmp_path):
    assert _check(_parquet(tmp_path, [T, T + 60, T + 60, T + 120])).ts_sorted
    assert not _check(_parquet(tmp_path, [T, T + 61, T + 60, T + 120])).ts_sorted


def test_parquet_without_statistics_is_summed_by_a_scan(tmp_path):
    n = 5
    table = pa.table({"ts": pa.array([T + 60.0 * i for i in range(n)]), "node": ["n1"] * n,
                      "gpu_index": pa.array([0] * n, pa.int32()), "metric": ["gpu_util_pct"] * n,
                      "value": pa.array([1.0] * n)})
    path = tmp_path / "l.parquet"
    pq.write_table(table, path, row_group_size=2, write_statistics=False)
    got = _check(path)
    assert (got.stats.samples_read, got.ts_min, got.ts_max) == (n, T, T + 240)
    assert not got.ts_sorted  # without statistics the order is unknown
    pq.write_table(table, path, row_group_size=2, write_statistics=["node", "metric", "value"])
    assert _check(path).stats.samples_read == n


@pytest.mark.parametrize("column", ["ts", "node", "metric", "value"])
@pytest.mark.parametrize("first,group,nulls", [(3, 1, "1 row"), (4, 2, "2 rows")])
def test_parquet_nulls_in_a_required_column_name_the_row_group(tmp_path, column, first, group, nulls):
    n = 6
    cols = {"ts": [T + 60.0 * i for i in range(n)], "node": ["n1"] * n,
            "gpu_index": pa.array([0] * n, pa.int32()), "metric": ["gpu_util_pct"] * n,
            "value": [1.0] * n}
    cols[column] = cols[column][:first] + [None] * (n - first)
    path = tmp_path / "l.parquet"
    pq.write_table(pa.table(cols), path, row_group_size=2)
    with pytest.raises(InputError, match=f"{column} is empty in {nulls}") as info:
        _check(path)
    assert info.value.field == column and info.value.line is None and info.value.path == str(path)
    assert info.value.expected == f"no nulls (row group {group}, rows from {2 * group + 1})"


@pytest.mark.parametrize("column,values,expected", [
    ("ts", ["1700000000", "x"], "a number"), ("value", ["1", "2"], "a number"),
    ("gpu_index", ["zero", "0"], "an integer"), ("gpu_index", [0.0, 1.5], "an integer"),
    ("node", [1, 2], "text"), ("metric", [True, False], "text")])
def test_parquet_column_types_are_checked_up_front(tmp_path, column, values, expected):
    cols = {"ts": [float(T), T + 60.0], "node": ["n1", "n1"], "gpu_index": pa.array([0, 0], pa.int32()),
            "metric": ["gpu_util_pct"] * 2, "value": [1.0, 2.0]}
    cols[column] = values
    path = tmp_path / "l.parquet"
    pq.write_table(pa.table(cols), path)
    with pytest.raises(InputError, match=f"column {column} is of type ") as info:
        _check(path)
    typ = str(pq.read_schema(path).field(column).type)
    assert (info.value.path, info.value.field, info.value.value, info.value.expected) == (
        str(path), column, typ, expected)


def test_parquet_integer_times_and_values_and_null_gpus_are_accepted(tmp_path):
    path = tmp_path / "l.parquet"
    pq.write_table(pa.table({"ts": pa.array([T], pa.int64()), "node": pa.array(["n1"], pa.large_string()),
                             "gpu_index": pa.array([None], pa.null()), "metric": ["node_power_w"],
                             "value": pa.array([300], pa.int16())}), path)
    assert _rows_of(_check(path)) == [(T, "n1", None, "node_power_w", 300.0)]


@pytest.mark.parametrize("body,field,value,expected", [
    ("yesterday,n1,0,gpu_util_pct,5\n", "ts", "yesterday", "UTC epoch seconds"),
    (f"{T},n1,zero,gpu_util_pct,5\n", "gpu_index", "zero", "a non-negative integer, or empty for node metrics"),
    (f"{T},n1,0,gpu_util_pct,high\n", "value", "high", "a number"),
    (f'{T},n1,"",node_power_w,high\n', "value", "high", "a number"),  # an empty GPU is no error
])
def test_bad_cells_carry_value_and_expectation(tmp_path, body, field, value, expected):
    with pytest.raises(InputError) as info:
        _check(_csv(tmp_path, body))
    assert (info.value.line, info.value.field, info.value.value, info.value.expected) == (2, field, value, expected)


def test_unknown_metric_and_timestamp_range_errors(tmp_path):
    from swftools.telemetry.metric_map import canonical_metrics

    with pytest.raises(InputError) as info:
        _check(_csv(tmp_path, f"{T},n1,0,gpu_util_pct,5\n{T},n1,0,gpu_temp_c,50\n"))
    assert (info.value.field, info.value.value) == ("metric", "gpu_temp_c")
    assert info.value.expected == f"one of {', '.join(canonical_metrics())} or a mapped name"
    with pytest.raises(InputError) as info:
        _check(_csv(tmp_path, f"{T},n1,0,gpu_util_pct,5\n{T * 1000},n1,0,gpu_util_pct,5\n"))
    assert (info.value.line, info.value.field, info.value.value) == (3, "ts", repr(float(T * 1000)))
    # the plausible range: 2000-01-01 inclusive to 2100-01-01 exclusive
    low, high = 946_684_800, 4_102_444_800
    table = _check(_csv(tmp_path, f"{low},n1,0,gpu_util_pct,5\n{high - 1},n1,0,gpu_util_pct,5\n"))
    assert (table.ts_min, table.ts_max) == (low, high - 1)
    with pytest.raises(InputError, match="outside 2000..2100") as info:
        _check(_csv(tmp_path, f"{low},n1,0,gpu_util_pct,5\n{high},n1,0,gpu_util_pct,5\n"))
    assert info.value.line == 3


def test_file_stats_name_the_file_and_kind(tmp_path):
    for path in (_csv(tmp_path, f"{T},n1,0,gpu_util_pct,5\n"), _parquet(tmp_path, [T, T + 60])):
        stats = _check(path).stats.as_dict()
        assert (stats["file"], stats["format"]) == (str(path), f"long-{path.suffix[1:]}")
