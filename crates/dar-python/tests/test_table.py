"""dar.Table on the committed sample table: properties, files, time travel
(by version and by timestamp), refresh."""

import datetime
import os
import shutil

import pyarrow as pa
import pytest

import dar
from conftest import SAMPLE, run_dar, sorted_rows


def test_properties_of_the_sample():
    t = dar.Table(str(SAMPLE))
    assert t.version == 7
    assert t.uri.startswith("file:///") and t.uri.endswith("examples/data/sample/")
    assert repr(t) == f"dar.Table('{t.uri}', version=7)"
    assert t.partition_columns == ["day"]
    assert isinstance(t.schema, pa.Schema)
    assert t.schema.names == [
        "trip_id", "pickup_ts", "vendor", "passengers", "distance_km", "fare", "payment", "day",
    ]
    assert t.schema.field("fare").type == pa.decimal128(8, 2)
    assert t.schema.field("pickup_ts").type == pa.timestamp("us", tz="UTC")
    assert t.schema.field("payment").type == pa.struct(
        [("method", pa.string()), ("tip", pa.decimal128(6, 2))]
    )
    p = t.protocol
    assert (
        p["min_reader_version"],
        p["min_writer_version"],
        p["reader_features"],
        p["writer_features"],
        p["verdict"],
    ) == (3, 7, ["deletionVectors"], ["deletionVectors"], "dar reads this table exactly")
    m = t.metadata
    assert m["id"] == "d3226ffd-1f80-4897-bb97-7bafe187f266"
    assert m["partition_columns"] == ["day"]
    assert m["format_provider"] == "parquet"
    assert m["configuration"] == {
        "delta.checkpointInterval": "4",
        "delta.enableDeletionVectors": "true",
    }
    assert m["created_time"] == 1704067200000
    # A path object works as well as a string.
    assert dar.Table(SAMPLE).version == 7


def test_files_have_the_columns_of_dar_files(dar_bin):
    t = dar.Table(str(SAMPLE))
    files = t.files()
    assert files.column_names == ["path", "size", "num_records", "day", "deleted_rows", "dv"]
    assert files.num_rows == 4
    assert sum(files.column("num_records").to_pylist()) == 310
    assert sum(v or 0 for v in files.column("deleted_rows").to_pylist()) == 10
    assert files.schema.field("day").type == pa.date32()
    full = t.files(full=True)
    # The same columns, in the same order, as `dar files --format csv`.
    out = run_dar(dar_bin, "files", str(SAMPLE), "--format", "csv")
    assert out.returncode == 0
    header = out.stdout.decode().splitlines()[0].split(",")
    assert full.column_names == header
    assert full.column("path").to_pylist() == files.column("path").to_pylist()
    assert full.column("dv_cardinality").to_pylist() == files.column("deleted_rows").to_pylist()


def test_time_travel_by_version():
    # Row counts per version, as in docs/cli.md (`dar scan --format null --version N`).
    for version, rows in [(1, 240), (2, 300), (3, 295), (7, 300)]:
        t = dar.Table(str(SAMPLE), version=version)
        assert t.version == version
        assert t.scan().count() == rows
        assert t.scan().to_table().num_rows == rows


def sample_copy(tmp_path, versions=None):
    """A copy of the sample whose commit N was modified at 1_700_000_000 + N*1000 s
    (commit times are file times); with `versions`, only those commits."""
    table = tmp_path / "sample"
    shutil.copytree(SAMPLE, table)
    log = table / "_delta_log"
    if versions is not None:
        for f in log.iterdir():
            if not (f.suffix == ".json" and int(f.stem) in versions):
                f.unlink()
    for f in log.glob("*.json"):
        t = 1_700_000_000 + int(f.stem) * 1000
        os.utime(f, (t, t))
    return table


def test_time_travel_by_timestamp(tmp_path):
    table = str(sample_copy(tmp_path))
    v3 = (1_700_000_000 + 3000) * 1000
    for ts in [v3, v3 + 999, str(v3), "2023-11-14T23:03:20Z",
               datetime.datetime.fromtimestamp(v3 / 1000, tz=datetime.timezone.utc)]:
        t = dar.Table(table, timestamp=ts)
        assert t.version == 3, ts
        assert t.scan().count() == 295
    assert dar.Table(table, timestamp=v3 - 1).version == 2
    with pytest.raises(dar.NotFoundError, match="is before the table history"):
        dar.Table(table, timestamp=1_000)


def test_refresh_moves_to_the_newest_version(tmp_path):
    table = sample_copy(tmp_path, versions={0, 1})
    t = dar.Table(str(table))
    assert t.version == 1
    scan = t.scan()
    for f in (SAMPLE / "_delta_log").iterdir():
        shutil.copy(f, table / "_delta_log" / f.name)
    t.refresh()
    assert t.version == 7
    assert t.scan().count() == 300
    # A scan described before the refresh keeps reading its version.
    assert scan.count() == 240 and scan.to_table().num_rows == 240
    assert dar.Table(str(table), version=1).scan().count() == 240


def test_stats_of_a_local_checkpoint_are_read_again_only_from_the_file_first_read(tmp_path):
    # A local checkpoint's stats are let go after the open and read again
    # when a filter needs a column's: from the same file only. Once it was
    # replaced (even by its own bytes), its files have no statistics for
    # columns not parsed yet: every filter keeps them, rows stay exact.
    table = tmp_path / "sample"
    shutil.copytree(SAMPLE, table)
    t = dar.Table(str(table))
    fresh = dar.Table(str(SAMPLE))
    ids = "trip_id BETWEEN 165 AND 175"
    scan = t.scan(filter=ids)
    assert scan.to_table().equals(fresh.scan(filter=ids).to_table())
    pruned = scan.metrics()["files_pruned"]
    assert pruned > 0 and scan.metrics()["stats_files_unavailable"] == 0
    checkpoint = table / "_delta_log" / "00000000000000000004.checkpoint.parquet"
    copy = checkpoint.with_suffix(".copy")
    shutil.copy(checkpoint, copy)
    os.replace(copy, checkpoint)
    fares = "fare > 40"
    expected = fresh.scan(filter=fares)
    rows = expected.to_table()
    assert rows.num_rows > 0
    stale = t.scan(filter=fares)
    assert sorted_rows(stale.to_table()) == sorted_rows(rows)
    m = stale.metrics()
    assert m["stats_files_unavailable"] > 0
    assert m["files_pruned"] <= expected.metrics()["files_pruned"]
    # The stats parsed before still prune; a table opened anew reads the new file.
    assert t.scan(filter=ids).metrics()["files_pruned"] == pruned
    anew = dar.Table(str(table)).scan(filter=fares)
    assert sorted_rows(anew.to_table()) == sorted_rows(rows)
    assert anew.metrics()["stats_files_unavailable"] == 0
