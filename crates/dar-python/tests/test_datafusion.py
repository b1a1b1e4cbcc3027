"""dar.Table in DataFusion Python (`SessionContext.register_table`, through
`__datafusion_table_provider__`): SQL over Delta tables gives dar's rows
(deletion vectors and column mapping applied), with dar's filter,
projection and limit pushdown and statistics, measured by dar's own scan
metrics in `EXPLAIN ANALYZE`; a failing scan is a Python exception naming
the file."""

import os
import re

import pyarrow as pa
import pytest

import dar
from conftest import SAMPLE, sorted_rows, write_delta_table

datafusion = pytest.importorskip("datafusion")


def context(**tables) -> "datafusion.SessionContext":
    """A session with each `name=dar.Table(...)` registered."""
    ctx = datafusion.SessionContext()
    for name, table in tables.items():
        ctx.register_table(name, table)
    return ctx


def sql(ctx, query: str) -> pa.Table:
    return ctx.sql(query).to_arrow_table()


def scan_metrics(ctx, query: str) -> dict:
    """dar's scan metrics (files_total, files_pruned, files_read, ...) of
    the one DeltaScanExec in `EXPLAIN ANALYZE query`."""
    plans = sql(ctx, "EXPLAIN ANALYZE " + query).column("plan").to_pylist()
    lines = [l for p in plans for l in p.splitlines() if "DeltaScanExec" in l]
    assert len(lines) == 1, plans
    metrics = re.search(r"metrics=\[(.*)\]", lines[0]).group(1)
    pairs = (m.split("=", 1) for m in metrics.split(", "))
    return {k: int(v) for k, v in pairs if v.isdigit()}


def physical_plan(ctx, query: str) -> str:
    rows = sql(ctx, "EXPLAIN " + query).to_pylist()
    return next(r["plan"] for r in rows if r["plan_type"] == "physical_plan")


def test_the_capsule(testdata):
    table = dar.Table(str(testdata / "kernel" / "table-with-dv-small"))
    # DataFusion Python 55 passes its session; older callers pass nothing.
    session = datafusion.SessionContext()
    for capsule in (
        table.__datafusion_table_provider__(),
        table.__datafusion_table_provider__(session),
    ):
        assert type(capsule).__name__ == "PyCapsule"
        assert "datafusion_table_provider" in repr(capsule)


def test_deletion_vectors(testdata):
    uri = str(testdata / "kernel" / "table-with-dv-small")
    ctx = context(t=dar.Table(uri))
    got = sql(ctx, "SELECT value FROM t ORDER BY value")
    # 10 rows written, 0 and 9 deleted by the deletion vector.
    assert got.column("value").to_pylist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert sorted_rows(got) == sorted_rows(dar.Table(uri).scan().to_table())
    got = sql(ctx, "SELECT value FROM t WHERE value > 4 OR value = 0 ORDER BY value")
    assert got.column("value").to_pylist() == [5, 6, 7, 8]
    expected = dar.Table(uri).scan(filter="value > 4 OR value = 0").to_table()
    assert sorted_rows(got) == sorted_rows(expected)


def test_column_mapping(testdata):
    uri = str(testdata / "kernel" / "cdf-column-mapping-name-mode")
    table = dar.Table(uri)
    assert table.metadata["configuration"]["delta.columnMapping.mode"] == "name"
    ctx = context(t=table)
    got = sql(ctx, "SELECT id, name, value FROM t ORDER BY id")
    assert got.to_pylist() == [
        {"id": 2, "name": "Bob", "value": 250.0},
        {"id": 3, "name": "Charlie", "value": 300.0},
        {"id": 4, "name": "David", "value": 400.0},
    ]
    assert sorted_rows(got) == sorted_rows(dar.Table(uri).scan().to_table())
    got = sql(ctx, "SELECT name FROM t WHERE value > 260 ORDER BY name")
    assert got.column("name").to_pylist() == ["Charlie", "David"]


def test_the_sample_table_and_the_version_it_was_opened_at():
    ctx = context(t=dar.Table(str(SAMPLE)))
    got = sql(ctx, "SELECT day, count(*) AS n FROM t GROUP BY day ORDER BY day")
    # 80, 80, 80, 70 trips written; 5, 2, 3 deleted by deletion vectors.
    assert [(str(r["day"]), r["n"]) for r in got.to_pylist()] == [
        ("2024-01-01", 75),
        ("2024-01-02", 78),
        ("2024-01-03", 77),
        ("2024-01-04", 70),
    ]
    # The provider reads the snapshot the Table holds (nothing reopened):
    # version 0 is the first commit's rows.
    first = dar.Table(str(SAMPLE), version=0)
    ctx = context(t=first)
    n = sql(ctx, "SELECT count(*) AS n FROM t").column("n").to_pylist()
    assert n == [first.scan().count()]
    assert n != [300]


def test_the_readme_example():
    ctx = context(trips=dar.Table(str(SAMPLE)))
    got = sql(
        ctx,
        "SELECT day, count(*) AS n, sum(fare) AS fares FROM trips WHERE trip_id > 100"
        " GROUP BY day ORDER BY day",
    )
    assert [(str(r["day"]), r["n"], str(r["fares"])) for r in got.to_pylist()] == [
        ("2024-01-02", 59, "1868.93"),
        ("2024-01-03", 77, "2492.87"),
        ("2024-01-04", 70, "2072.35"),
    ]
    q = "SELECT trip_id FROM trips WHERE day = DATE '2024-01-03' LIMIT 5"
    m = scan_metrics(ctx, q)
    assert (m["output_rows"], m["files_pruned"], m["files_read"], m["files_total"]) == (5, 3, 1, 4)


def test_a_filter_prunes_files(testdata):
    uri = str(testdata / "kernel" / "parsed-stats")
    ctx = context(t=dar.Table(uri))
    query = "SELECT id, name FROM t WHERE id = 100"
    assert sql(ctx, query).to_pylist() == [{"id": 100, "name": "name_100"}]
    m = scan_metrics(ctx, query)
    assert m["files_total"] == 6
    assert m["files_pruned"] == 5
    assert m["files_read"] == 1
    # The filter is dar's to apply (exactly): DataFusion keeps no FilterExec.
    assert "FilterExec" not in physical_plan(ctx, query)
    unfiltered = scan_metrics(ctx, "SELECT id, name FROM t")
    assert (unfiltered["files_pruned"], unfiltered["files_read"]) == (0, 6)


def test_partition_pruning_and_deletion_vectors():
    ctx = context(t=dar.Table(str(SAMPLE)))
    query = "SELECT trip_id FROM t WHERE day = DATE '2024-01-03'"
    assert sql(ctx, query).num_rows == 77
    m = scan_metrics(ctx, query)
    assert (m["files_total"], m["files_pruned"], m["files_read"]) == (4, 3, 1)
    assert m["rows_deleted_by_dv"] == 3


def test_a_limit_reads_fewer_files(testdata):
    uri = str(testdata / "kernel" / "parsed-stats")
    ctx = context(t=dar.Table(uri))
    got = sql(ctx, "SELECT id FROM t WHERE id > 3 LIMIT 2")
    assert got.num_rows == 2
    assert all(i > 3 for i in got.column("id").to_pylist())
    m = scan_metrics(ctx, "SELECT id FROM t LIMIT 2")
    assert m["files_total"] == 6
    assert m["files_read"] == 1
    assert m["output_rows"] == 2


def test_projection_returns_only_the_columns_asked_for():
    ctx = context(t=dar.Table(str(SAMPLE)))
    got = sql(ctx, "SELECT fare, trip_id FROM t WHERE trip_id < 3 ORDER BY trip_id")
    assert got.schema.names == ["fare", "trip_id"]
    expected = dar.Table(str(SAMPLE)).scan(columns=["trip_id", "fare"], filter="trip_id < 3")
    assert sorted_rows(got) == sorted_rows(expected.to_table())
    plans = sql(ctx, "EXPLAIN SELECT fare FROM t").column("plan").to_pylist()
    assert "TableScan: t projection=[fare]" in plans[0]


def test_count_is_answered_from_statistics(testdata):
    ctx = context(
        w=dar.Table(str(testdata / "kernel" / "table-without-dv-small")),
        d=dar.Table(str(testdata / "kernel" / "table-with-dv-small")),
        s=dar.Table(str(SAMPLE)),
    )
    assert sql(ctx, "SELECT count(*) AS n FROM w").column("n").to_pylist() == [10]
    # No deletion vector: the log's row counts are exact, no scan is planned.
    plan = physical_plan(ctx, "SELECT count(*) FROM w")
    assert "DeltaScanExec" not in plan and "10 as count(*)" in plan, plan
    # With one the log's count (10) is not the answer: the rows are counted.
    assert sql(ctx, "SELECT count(*) AS n FROM d").column("n").to_pylist() == [8]
    assert sql(ctx, "SELECT count(*) AS n FROM s").column("n").to_pylist() == [300]
    m = scan_metrics(ctx, "SELECT count(*) FROM s")
    # Counted from the log and the deletion vectors: no data file opened.
    assert (m["files_answered_from_log"], m["files_read"], m["output_rows"]) == (4, 0, 300)


def test_a_python_udf_in_a_filter_is_evaluated_by_datafusion(testdata):
    import pyarrow.compute as pc

    ctx = context(t=dar.Table(str(testdata / "kernel" / "table-with-dv-small")))
    double = datafusion.udf(
        lambda a: pc.multiply(a, 2), [pa.int64()], pa.int64(), "immutable", name="double_it"
    )
    ctx.register_udf(double)
    # dar does not know double_it: it declines that filter (DataFusion
    # applies it) and still applies the rest.
    query = "SELECT value FROM t WHERE double_it(value) > 10 AND value < 8 ORDER BY value"
    assert sql(ctx, query).column("value").to_pylist() == [6, 7]
    assert "FilterExec: double_it(" in physical_plan(ctx, query)
    assert scan_metrics(ctx, query)["rows_filtered"] == 1  # 8, by dar
    query = (
        "SELECT value FROM t WHERE (double_it(value) > 10 AND value > 1) OR value = 2"
        " ORDER BY value"
    )
    assert sql(ctx, query).column("value").to_pylist() == [2, 6, 7, 8]


def test_a_deleted_data_file_is_an_exception_naming_it(tmp_path):
    root = write_delta_table(
        tmp_path / "t",
        [("id", "long", True)],
        [
            ("a.parquet", pa.table({"id": pa.array([1, 2], pa.int64())})),
            ("b.parquet", pa.table({"id": pa.array([3], pa.int64())})),
        ],
    )
    ctx = context(t=dar.Table(str(root)))
    assert sql(ctx, "SELECT id FROM t ORDER BY id").column("id").to_pylist() == [1, 2, 3]
    os.remove(root / "b.parquet")
    with pytest.raises(Exception) as e:
        sql(ctx, "SELECT id FROM t")
    # An exception (not a panic), naming the file and what went wrong.
    assert type(e.value).__name__ != "PanicException"
    message = str(e.value)
    assert f"cannot read data file '{root / 'b.parquet'}': not found" in message, message
    assert "panic" not in message.lower()
    # The session still works.
    assert sql(ctx, "SELECT 1 AS one").column("one").to_pylist() == [1]


def test_a_bad_filter_value_is_an_exception(testdata):
    ctx = context(t=dar.Table(str(testdata / "kernel" / "table-with-dv-small")))
    with pytest.raises(Exception) as e:
        sql(ctx, "SELECT value FROM t WHERE no_such_column > 1")
    assert "no_such_column" in str(e.value)
