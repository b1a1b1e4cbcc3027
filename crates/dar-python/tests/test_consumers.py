"""The tools people read Delta tables with take a dar scan as it is: pyarrow
(no pyarrow.dataset), Polars, DuckDB and pandas; the C stream hands over
the buffers without a copy."""

import decimal

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

import dar
from conftest import SAMPLE

COLUMNS = ["trip_id", "vendor", "fare", "payment", "day"]


def expected() -> pa.Table:
    return dar.Table(str(SAMPLE)).scan(columns=COLUMNS).to_table()


def scan():
    return dar.Table(str(SAMPLE)).scan(columns=COLUMNS)


def test_pyarrow_takes_the_stream_without_a_copy():
    reference = expected()
    before = pa.total_allocated_bytes()
    t = pa.table(scan())
    # The buffers come from dar's allocations, not pyarrow's pool.
    assert pa.total_allocated_bytes() - before < 1024
    assert t.nbytes > 10_000
    assert t.equals(reference)
    reader = pa.RecordBatchReader.from_stream(scan())
    assert reader.schema == reference.schema
    assert pa.Table.from_batches(list(reader), reference.schema).equals(reference)


def test_polars_from_arrow():
    reference = pl.from_arrow(expected())
    # Polars reads any Arrow stream as a Series of structs, one field per
    # column; pl.DataFrame takes the stream as a frame directly.
    series = pl.from_arrow(scan())
    assert isinstance(series, pl.Series) and series.len() == 300
    assert series.struct.unnest().equals(reference)
    df = pl.DataFrame(scan())
    assert df.columns == COLUMNS
    assert df.height == 300
    assert df.equals(reference)
    # Struct fields and decimals arrive typed.
    assert df.schema["fare"] == pl.Decimal(8, 2)
    assert df.schema["payment"] == pl.Struct({"method": pl.String, "tip": pl.Decimal(6, 2)})
    assert df.filter(pl.col("trip_id") == 165)["vendor"].to_list() == ["Metro Taxi"]
    # A pyarrow reader goes in as a frame too.
    assert pl.from_arrow(scan().to_reader()).equals(reference)


def test_duckdb_over_the_reader():
    reference = expected()
    reader = scan().to_reader()
    rows = duckdb.sql(
        "SELECT count(*), sum(fare), count(DISTINCT day) FROM reader WHERE vendor IS NOT NULL"
    ).fetchall()
    with_vendor = reference.filter(pc.is_valid(reference.column("vendor")))
    assert rows == [
        (with_vendor.num_rows, pc.sum(with_vendor.column("fare")).as_py(), 4),
    ]
    assert isinstance(rows[0][1], decimal.Decimal)


def test_duckdb_over_the_scan_itself():
    s = scan()
    rows = duckdb.sql("SELECT trip_id FROM s WHERE trip_id BETWEEN 165 AND 175 ORDER BY 1").fetchall()
    assert [r[0] for r in rows] == [165, 166, 167, 168, 169, 170, 174, 175]


def test_pandas_via_to_table():
    df = scan().to_table().to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == COLUMNS
    assert len(df) == 300
    assert sorted(df["trip_id"].tolist()) == sorted(expected().column("trip_id").to_pylist())
    assert df.loc[df["trip_id"] == 165, "vendor"].tolist() == ["Metro Taxi"]
