"""Table.to_polars() / dar.scan_polars(): lazy Polars frames through Polars'
IO-plugin API. Every query's rows are those of `pl.scan_delta` (deltalake)
on the tables both read; the projection, the predicate where it converts
and the row limit reach dar's scan (dar._polars.last_pushdown and the scan's
metrics say what was pushed and pruned)."""

import datetime

import polars as pl
import pytest

import dar
import dar._polars as dp
from conftest import SAMPLE

QUERIES = [
    # (label, lazy frame -> lazy frame, whole predicate converts)
    ("all", lambda f: f, True),
    ("projection", lambda f: f.select("trip_id", "fare"), True),
    ("between", lambda f: f.filter(pl.col("trip_id").is_between(165, 175)), True),
    ("string eq", lambda f: f.filter(pl.col("vendor") == "Metro Taxi"), True),
    ("prefix", lambda f: f.filter(pl.col("vendor").str.starts_with("Lake")), True),
    ("is_in", lambda f: f.filter(pl.col("trip_id").is_in([1, 5, 171, 299, 1000])), True),
    ("date", lambda f: f.filter(pl.col("day") == datetime.date(2024, 1, 3)), True),
    ("decimal", lambda f: f.filter(pl.col("fare") > 50).select("trip_id", "fare"), True),
    ("is_null", lambda f: f.filter(pl.col("passengers").is_null()), True),
    (
        "not or",
        lambda f: f.filter(~((pl.col("trip_id") < 100) | (pl.col("vendor") != "Zip Rides"))),
        True,
    ),
    # Floats stay in Polars; the integer term still goes to dar.
    (
        "float and int",
        lambda f: f.filter((pl.col("distance_km") > 5.0) & (pl.col("trip_id") >= 200)),
        False,
    ),
    # Nothing converts: an expression of two columns.
    ("two columns", lambda f: f.filter(pl.col("trip_id") > pl.col("passengers")), False),
    ("struct field", lambda f: f.filter(pl.col("payment").struct.field("method") == "card"), False),
    (
        "aggregate",
        lambda f: f.filter(pl.col("day") >= datetime.date(2024, 1, 2))
        .group_by("vendor")
        .agg(pl.len(), pl.col("fare").sum()),
        True,
    ),
]


def rows(frame: pl.DataFrame) -> list:
    return sorted(frame.to_dicts(), key=repr)


@pytest.mark.parametrize("label,query,whole", QUERIES, ids=[q[0] for q in QUERIES])
def test_queries_answer_as_scan_delta(label, query, whole):
    want = query(pl.scan_delta(str(SAMPLE))).collect()
    got = query(dar.Table(SAMPLE).to_polars()).collect()
    assert got.schema == want.schema, label
    assert rows(got) == rows(want), label
    assert dp.last_pushdown["exact"] is whole, (label, dp.last_pushdown)


def test_the_predicate_and_projection_reach_the_scan():
    lf = dar.scan_polars(str(SAMPLE))
    out = lf.filter(pl.col("trip_id").is_between(165, 175)).select("trip_id", "vendor").collect()
    assert out["trip_id"].sort().to_list() == [165, 166, 167, 168, 169, 170, 174, 175]
    p = dp.last_pushdown
    assert p["filter"] == "trip_id >= 165 AND trip_id <= 175", p
    assert set(p["columns"]) == {"trip_id", "vendor"}, p
    m = p["scan"].metrics()
    # docs/python.md's numbers: 3 of 4 files pruned by the log's statistics.
    assert m["files_pruned"] == 3 and m["files_read"] == 1, m
    # A float term is not pushed; the integer term still prunes.
    lf.filter((pl.col("distance_km") > 1.0) & (pl.col("trip_id") < 10)).collect()
    assert dp.last_pushdown["filter"] == "(trip_id < 10)", dp.last_pushdown
    assert dp.last_pushdown["scan"].metrics()["files_read"] == 1


def test_head_pushes_the_limit_into_the_scan():
    t = dar.Table(SAMPLE)
    got = t.to_polars().head(5).collect()
    assert got.height == 5
    assert dp.last_pushdown["limit"] == 5
    assert dp.last_pushdown["scan"].metrics()["rows_output"] <= 5, dp.last_pushdown
    assert t.to_polars().select("trip_id").head(7).collect().height == 7
    assert dp.last_pushdown["limit"] == 7 and dp.last_pushdown["columns"] == ["trip_id"]
    # After a filter Polars keeps the limit itself (it hands the source no
    # n_rows); the filter still reaches the scan, the rows are right.
    f = pl.col("vendor") == "Metro Taxi"
    got = t.to_polars().filter(f).head(3).collect()
    assert got.height == 3 and (got["vendor"] == "Metro Taxi").all()
    assert dp.last_pushdown["filter"] == "vendor = 'Metro Taxi'"
    g = (pl.col("distance_km") > 3.0) & (pl.col("trip_id") > 250)
    got = t.to_polars().filter(g).head(4).collect()
    want = pl.scan_delta(str(SAMPLE)).filter(g).collect()
    assert got.height == min(4, want.height)
    assert set(got["trip_id"]) <= set(want["trip_id"])
    assert dp.last_pushdown["limit"] is None
    assert t.to_polars().slice(0, 2).collect().height == 2


def test_shared_tables_answer_as_scan_delta(testdata):
    for path, query in [
        ("kernel/table-with-dv-small", lambda f: f.filter(pl.col("value") > 2)),
        ("kernel/table-with-dv-small", lambda f: f),
        ("dat/basic_partitioned/delta", lambda f: f.filter(pl.col("letter").is_in(["a", "e"]))),
        ("dat/basic_append/delta", lambda f: f.filter(pl.col("number") <= 3).select("letter")),
        ("dat/with_schema_change/delta", lambda f: f.filter(pl.col("num1").is_not_null())),
    ]:
        t = str(testdata / path)
        want = query(pl.scan_delta(t)).collect()
        got = query(dar.scan_polars(t)).collect()
        assert got.schema == want.schema, path
        assert rows(got) == rows(want), path


def test_tables_scan_delta_cannot_read(testdata):
    # dar reads column mapping and V2 checkpoints, which Polars' own reader
    # refuses; the lazy frame answers as dar's scan with the same filter.
    for name, expr, sql in [
        ("cdf-column-mapping-name-mode-3-7", pl.col("id") >= 2, "id >= 2"),
        ("v2-checkpoints-parquet-with-sidecars", pl.col("id") < 5, "id < 5"),
    ]:
        t = str(testdata / "kernel" / name)
        with pytest.raises(Exception):
            pl.scan_delta(t).collect()
        got = dar.scan_polars(t).filter(expr).collect()
        want = pl.from_arrow(dar.Table(t).scan(filter=sql).to_table())
        assert got.height > 0, name
        assert rows(got) == rows(want), name
        assert dp.last_pushdown["filter"] == sql, name


def test_sql_in_lists_push_down_through_polars_casts():
    # Polars' optimizer casts an Int32 column to the Int64 of SQL's
    # `IN (...)` list before handing the predicate over; the widening is
    # lossless, so the whole filter still goes to dar's scan.
    t = str(SAMPLE)
    for sql_text, pushed in [
        ("passengers IN (1, 2)", ["passengers IN (1, 2)"]),
        ("vendor = 'Northwind' AND passengers IN (2)", ["passengers IN (2)", "vendor = 'Northwind'"]),
    ]:
        got = dar.scan_polars(t).filter(pl.sql_expr(sql_text)).collect()
        # Polars may reorder the conjuncts: each is pushed, and all of them.
        assert all(p in dp.last_pushdown["filter"] for p in pushed), dp.last_pushdown
        assert dp.last_pushdown["exact"] is True
        want = pl.from_arrow(dar.Table(t).scan(filter=sql_text).to_table())
        assert got.height > 0, sql_text
        assert rows(got) == rows(want), sql_text


def test_converted_filters():
    schema = pl.Schema(
        {
            "i": pl.Int64,
            "s": pl.String,
            "d": pl.Date,
            "b": pl.Boolean,
            "x": pl.Float64,
            "t": pl.Datetime("us", "UTC"),
            "m": pl.Decimal(8, 2),
            "odd name": pl.Int32,
        }
    )
    cases = [
        (pl.col("i") > 5, "i > 5", True),
        (pl.lit(5) < pl.col("i"), "i > 5", True),
        (pl.col("s") == "it's", "s = 'it''s'", True),
        (pl.col("d") == datetime.date(2024, 1, 2), "d = DATE '2024-01-02'", True),
        (pl.col("b") == True, "b = TRUE", True),  # noqa: E712
        (pl.col("m") >= 10, "m >= 10", True),
        (pl.col("odd name") != 1, '"odd name" <> 1', True),
        (pl.col("i").is_in([1, 2]), "i IN (1, 2)", True),
        (pl.col("s").str.starts_with("ab"), "s LIKE 'ab%'", True),
        (pl.col("i").is_null(), "i IS NULL", True),
        (pl.col("x").is_not_null(), "x IS NOT NULL", True),
        ((pl.col("i") > 1) & (pl.col("x") > 1.0), "(i > 1)", False),
        ((pl.col("i") > 1) | (pl.col("x") > 1.0), None, False),
        (~(pl.col("i") > 1), "NOT (i > 1)", True),
        (~((pl.col("i") > 1) & (pl.col("x") > 1.0)), None, False),
        (pl.col("x") > 1.0, None, False),
        (pl.col("m") > 1.5, None, False),
        (pl.col("b"), "b = TRUE", True),
        (pl.col("t") > datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), None, False),
        (pl.col("s").str.starts_with("a%"), None, False),
        (pl.col("i").is_in([1, None]), None, False),
        (pl.col("nope") > 1, None, False),
        # SQL's IN (`pl.sql_expr`, as a user of `pl.SQLContext` writes it)
        # holds its list as a series: the same filter as `is_in`.
        (pl.sql_expr("i IN (1)"), "i IN (1)", True),
        (pl.sql_expr("s IN ('a', 'it''s')"), "s IN ('a', 'it''s')", True),
        (pl.sql_expr("i IN (1, 2) AND s = 'a'"), "(i IN (1, 2)) AND (s = 'a')", True),
        (pl.sql_expr("i NOT IN (1, 2)"), "NOT (i IN (1, 2))", True),
    ]
    for expr, sql, exact in cases:
        assert dp.to_filter(expr, schema) == (sql, exact), expr


def test_errors_surface_as_dar_errors(tmp_path, testdata):
    with pytest.raises(dar.NotFoundError):
        dar.scan_polars(str(tmp_path / "missing"))
    with pytest.raises(dar.ProtocolUnsupportedError):
        dar.scan_polars(str(testdata / "kernel" / "table-with-geo"))
    # A data file that goes missing after the frame was made: the error
    # of the scan reaches the caller of collect().
    path = str(testdata / "kernel" / "app-txn-with-last-updated")
    with pytest.raises(dar.StorageError):
        dar.scan_polars(path).collect()


def test_a_selective_scan_reaches_polars_in_one_frame():
    """The scan's small batches (one a file here) are merged before they
    become Polars frames: one conversion, not one per batch; the rows are
    those of `pl.scan_delta`, and Polars does not filter them again when
    the whole predicate converted."""
    query = lambda f: f.filter(pl.col("vendor") == "Metro Taxi").select("trip_id", "fare")
    got = query(dar.Table(SAMPLE).to_polars()).collect()
    want = query(pl.scan_delta(str(SAMPLE))).collect()
    assert rows(got) == rows(want)
    p = dp.last_pushdown
    assert p["exact"] is True, p
    assert p["scan"].metrics()["batches_output"] > 1, p["scan"].metrics()
    assert p["frames"] == 1, p
