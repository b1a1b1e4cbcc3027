"""Statistics dar must not believe as written (issue 33, items 6, 7 and 10)
through the Python module: rows of filtered scans, `count()`, the file
listing, and aggregates in DataFusion Python (answered from exact
statistics when dar gives them), on tables whose statistics lie and on a
widened float column whose old bounds come from a checkpoint's
`stats_parsed`. The tables are written by hand, as dar-testkit's
`write_bad_stats_table` and `write_widened_float_table` write them."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dar

SANE = [1, 2, None]


def _stats(records, lo, hi, nulls):
    return {"numRecords": records, "minValues": {"x": lo}, "maxValues": {"x": hi}, "nullCount": {"x": nulls}}


# How one file's statistics lie: its values of x and its stats.
CASES = {
    "all null but values": ([7, 8, 9], _stats(3, 7, 9, 3)),
    "all null with false bounds": ([None, None], _stats(2, -50, 50, 2)),
    "null count above rows": ([4], _stats(1, 4, 4, 5)),
    "negative null count": ([3, None], _stats(2, 3, 3, -1)),
    "min above max": ([5], _stats(1, 9, 1, 0)),
    "negative numRecords": ([1, 2], _stats(-2, 50, 60, 0)),
}


def _metadata(fields, configuration=None):
    return {
        "metaData": {
            "id": "hand-written",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": json.dumps({"type": "struct", "fields": fields}),
            "partitionColumns": [],
            "configuration": configuration or {},
            "createdTime": 0,
        }
    }


def _add(root: Path, name: str, table: pa.Table, stats: dict) -> dict:
    pq.write_table(table, root / name)
    size = (root / name).stat().st_size
    return {
        "add": {
            "path": name,
            "partitionValues": {},
            "size": size,
            "modificationTime": 0,
            "dataChange": True,
            "stats": json.dumps(stats),
        }
    }


def _commit(root: Path, version: int, actions: list) -> None:
    log = root / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(a) + "\n" for a in actions)
    (log / f"{version:020}.json").write_text(text)


def write_bad_stats_table(root: Path, case: str) -> list:
    """A sane file and one whose stats lie; returns every value of x."""
    root.mkdir(parents=True, exist_ok=True)
    bad, stats = CASES[case]
    actions = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        _metadata([{"name": "x", "type": "long", "nullable": True, "metadata": {}}]),
        _add(root, "part-0.parquet", pa.table({"x": pa.array(SANE, pa.int64())}), _stats(3, 1, 2, 1)),
        _add(root, "part-1.parquet", pa.table({"x": pa.array(bad, pa.int64())}), stats),
    ]
    _commit(root, 0, actions)
    return SANE + bad


def test_statistics_that_lie_never_prune_nor_count(tmp_path):
    for case in sorted(CASES):
        root = tmp_path / case.replace(" ", "-")
        values = write_bad_stats_table(root, case)
        table = dar.Table(str(root))
        for v in {v for v in values if v is not None}:
            rows = table.scan(filter=f"x = {v}").to_table()
            assert rows.num_rows == values.count(v), (case, v)
        assert table.scan().count() == len(values), case


def test_a_negative_num_records_is_not_listed_as_a_count(tmp_path):
    write_bad_stats_table(tmp_path, "negative numRecords")
    files = dar.Table(str(tmp_path)).files()
    counts = dict(zip(files.column("path").to_pylist(), files.column("num_records").to_pylist()))
    assert counts == {"part-0.parquet": 3, "part-1.parquet": None}


def test_datafusion_aggregates_are_the_data_s(tmp_path):
    datafusion = pytest.importorskip("datafusion")
    for case in sorted(CASES):
        root = tmp_path / case.replace(" ", "-")
        values = write_bad_stats_table(root, case)
        ctx = datafusion.SessionContext()
        ctx.register_table("t", dar.Table(str(root)))
        query = "SELECT count(*) AS n, count(x) AS c, min(x) AS lo, max(x) AS hi FROM t"
        got = ctx.sql(query).to_pylist()
        present = [v for v in values if v is not None]
        want = {
            "n": len(values),
            "c": len(present),
            "lo": min(present) if present else None,
            "hi": max(present) if present else None,
        }
        assert got == [want], case


FLOATS = [[0.7, 1.5, None, 2.0], [-1.0, 0.1]]
DOUBLES = [0.1, 2.5]


def write_widened_float_table(root: Path) -> None:
    """x: float, two files; widened to double; a file of doubles; a
    checkpoint whose stats_parsed holds every bound as a double, the old
    files' read from the floats' text (0.7 above the float 0.699999988...,
    0.1 below 0.100000001...), as Delta-Spark writes it."""
    field = {"name": "x", "type": "float", "nullable": True, "metadata": {}}
    protocol = {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}
    adds = []
    for i, floats in enumerate(FLOATS):
        present = [f for f in floats if f is not None]
        stats = _stats(len(floats), min(present), max(present), len(floats) - len(present))
        adds.append(_add(root, f"part-{i}.parquet", pa.table({"x": pa.array(floats, pa.float32())}), stats))
    _commit(root, 0, [protocol, _metadata([field])] + adds)
    widened = dict(field, type="double")
    widened["metadata"] = {"delta.typeChanges": [{"fromType": "float", "toType": "double", "tableVersion": 1}]}
    features = ["typeWidening"]
    protocol = {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": features, "writerFeatures": features}}
    metadata = _metadata([widened], {"delta.enableTypeWidening": "true"})
    _commit(root, 1, [protocol, metadata])
    stats = _stats(len(DOUBLES), min(DOUBLES), max(DOUBLES), 0)
    adds.append(_add(root, "part-2.parquet", pa.table({"x": pa.array(DOUBLES, pa.float64())}), stats))
    _commit(root, 2, [adds[-1]])

    bounds = pa.struct([("x", pa.float64())])
    parsed = pa.struct(
        [
            ("numRecords", pa.int64()),
            ("minValues", bounds),
            ("maxValues", bounds),
            ("nullCount", pa.struct([("x", pa.int64())])),
        ]
    )
    add = pa.struct(
        [
            ("path", pa.string()),
            ("partitionValues", pa.map_(pa.string(), pa.string())),
            ("size", pa.int64()),
            ("modificationTime", pa.int64()),
            ("dataChange", pa.bool_()),
            ("stats_parsed", parsed),
        ]
    )
    schema = pa.schema(
        [
            ("protocol", pa.struct([
                ("minReaderVersion", pa.int32()),
                ("minWriterVersion", pa.int32()),
                ("readerFeatures", pa.list_(pa.string())),
                ("writerFeatures", pa.list_(pa.string())),
            ])),
            ("metaData", pa.struct([
                ("id", pa.string()),
                ("format", pa.struct([("provider", pa.string()), ("options", pa.map_(pa.string(), pa.string()))])),
                ("schemaString", pa.string()),
                ("partitionColumns", pa.list_(pa.string())),
                ("configuration", pa.map_(pa.string(), pa.string())),
                ("createdTime", pa.int64()),
            ])),
            ("add", add),
        ]
    )
    rows = [
        {"protocol": protocol["protocol"], "metaData": None, "add": None},
        {
            "protocol": None,
            "metaData": dict(metadata["metaData"], format={"provider": "parquet", "options": []}, configuration=list(metadata["metaData"]["configuration"].items())),
            "add": None,
        },
    ]
    for a in adds:
        a = dict(a["add"])
        a["stats_parsed"] = json.loads(a.pop("stats"))
        a["partitionValues"] = []
        rows.append({"protocol": None, "metaData": None, "add": a})
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), root / "_delta_log" / f"{2:020}.checkpoint.parquet")
    (root / "_delta_log" / "_last_checkpoint").write_text(json.dumps({"version": 2, "size": len(rows)}))


def test_widened_float_bounds_from_stats_parsed_keep_their_rows(tmp_path):
    write_widened_float_table(tmp_path)
    table = dar.Table(str(tmp_path))
    exact = {f: float(pa.scalar(f, pa.float32()).as_py()) for f in (0.7, 0.1)}
    for filter, rows in [
        (f"x = {exact[0.7]!r}", 1),
        (f"x = {exact[0.1]!r}", 1),
        (f"x IN ({exact[0.7]!r}, {exact[0.1]!r})", 2),
        ("x = 0.1", 1),
        ("x > 0.1", 5),
    ]:
        assert table.scan(filter=filter).to_table().num_rows == rows, filter
    datafusion = pytest.importorskip("datafusion")
    ctx = datafusion.SessionContext()
    ctx.register_table("t", table)
    got = ctx.sql(f"SELECT count(*) AS n FROM t WHERE x = {exact[0.7]!r}").to_pylist()
    assert got == [{"n": 1}]
