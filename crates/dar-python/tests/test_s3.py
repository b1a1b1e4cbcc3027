"""s3:// tables through a real S3 protocol server on 127.0.0.1 (dar-io's
in-process s3s server, run by its `s3_server` example binary)."""

import subprocess

import pytest

import dar
from conftest import SAMPLE, write_delta_table


def start_server(s3_server_bin, root):
    """A server whose bucket `dar` holds `root` under `sample/`, and its
    storage options."""
    server = subprocess.Popen(
        [str(s3_server_bin), "dar", str(root), "sample"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    options = {}
    for line in server.stdout:
        line = line.strip()
        if line == "READY":
            break
        key, value = line.split("=", 1)
        options[key] = value
    assert options["aws_endpoint"].startswith("http://127.0.0.1:"), options
    return server, options


@pytest.fixture(scope="module")
def s3(s3_server_bin):
    """Storage options of a server whose bucket `dar` holds the sample under `sample/`."""
    server, options = start_server(s3_server_bin, SAMPLE)
    yield options
    server.stdin.close()
    server.wait(timeout=30)


def test_s3_table_reads_as_the_local_one(s3):
    local = dar.Table(str(SAMPLE))
    t = dar.Table("s3://dar/sample", storage_options=s3)
    assert t.uri.rstrip("/") == "s3://dar/sample"
    assert t.version == 7
    assert t.schema == local.schema
    assert t.files().column("size").to_pylist() == local.files().column("size").to_pylist()
    assert t.scan().to_table().equals(local.scan().to_table())
    f = "trip_id BETWEEN 165 AND 175"
    scan = t.scan(columns=["trip_id", "fare"], filter=f)
    assert scan.to_table().equals(local.scan(columns=["trip_id", "fare"], filter=f).to_table())
    m = scan.metrics()
    assert m["files_read"] == 1 and m["io"]["classes"]["footer"]["requests"] >= 1
    assert dar.Table("s3://dar/sample", version=1, storage_options=s3).scan().count() == 240


def test_s3_errors_never_carry_the_secret(s3):
    wrong = dict(s3, aws_secret_access_key="WRONG-SECRET-value-never-printed")
    with pytest.raises(dar.StorageError) as e:
        dar.Table("s3://dar/sample", storage_options=wrong)
    assert "WRONG-SECRET" not in str(e.value)
    assert s3["aws_secret_access_key"] not in str(e.value)
    with pytest.raises(dar.NotFoundError, match="not a Delta table"):
        dar.Table("s3://dar/missing", storage_options=s3)
    with pytest.raises(dar.InvalidArgumentError, match="unknown storage option 'no_such_option'"):
        dar.Table("s3://dar/sample", storage_options=dict(s3, no_such_option="x"))


def test_datafusion_sql_over_an_s3_table(s3):
    """The DataFusion Python provider reads the Table it is given, storage
    options and all (nothing is reopened without them)."""
    datafusion = pytest.importorskip("datafusion")
    ctx = datafusion.SessionContext()
    ctx.register_table("s3t", dar.Table("s3://dar/sample", storage_options=s3))
    ctx.register_table("local", dar.Table(str(SAMPLE)))
    q = "SELECT trip_id, fare FROM {} WHERE trip_id BETWEEN 165 AND 175 ORDER BY trip_id"
    got = ctx.sql(q.format("s3t")).to_arrow_table()
    assert got.num_rows == 8
    assert got.equals(ctx.sql(q.format("local")).to_arrow_table())
    assert ctx.sql("SELECT count(*) AS n FROM s3t").to_arrow_table().column("n").to_pylist() == [300]


def test_datafusion_scan_errors_name_the_file_not_the_secret(s3_server_bin, tmp_path):
    datafusion = pytest.importorskip("datafusion")
    import pyarrow as pa

    # The log adds missing.parquet, which the bucket does not hold.
    root = write_delta_table(
        tmp_path / "t",
        [("id", "long", True)],
        [("a.parquet", pa.table({"id": pa.array([1], pa.int64())})), ("missing.parquet", None)],
    )
    server, options = start_server(s3_server_bin, root)
    try:
        ctx = datafusion.SessionContext()
        ctx.register_table("t", dar.Table("s3://dar/sample", storage_options=options))
        with pytest.raises(Exception) as e:
            ctx.sql("SELECT id FROM t").to_arrow_table()
        message = str(e.value)
        assert "cannot read data file 's3://dar/sample/missing.parquet'" in message, message
        assert options["aws_secret_access_key"] not in message
        assert "panic" not in message.lower()
    finally:
        server.stdin.close()
        server.wait(timeout=30)


def test_a_repeated_scan_of_an_s3_table_is_served_from_its_cache(s3, tmp_path):
    """On object storage a Table keeps the bytes it fetched: a second scan
    makes no page request; with `data_cache_bytes=0` it fetches again, and
    a new Table over the same `cache_dir` reads footers and pages from it."""
    f = "trip_id BETWEEN 165 AND 175"
    t = dar.Table("s3://dar/sample", storage_options=s3)
    first = t.scan(columns=["trip_id", "fare"], filter=f)
    rows = first.to_table()
    assert first.metrics()["io"]["cache"]["misses"] > 0
    again = t.scan(columns=["trip_id", "fare"], filter=f)
    assert again.to_table().equals(rows)
    m = again.metrics()["io"]
    assert m["classes"]["page_data"]["requests"] == 0 and m["classes"]["footer"]["requests"] == 0, m
    assert m["cache"]["hits"] > 0 and m["cache"]["misses"] == 0, m

    off = dar.Table("s3://dar/sample", storage_options=s3, data_cache_bytes=0)
    off.scan(columns=["trip_id", "fare"], filter=f).to_table()
    second = off.scan(columns=["trip_id", "fare"], filter=f)
    second.to_table()
    assert second.metrics()["io"]["classes"]["page_data"]["requests"] > 0
    assert second.metrics()["io"]["cache"]["hits"] == 0

    cache = tmp_path / "cache"
    dar.Table("s3://dar/sample", storage_options=s3, cache_dir=cache).scan(
        columns=["trip_id", "fare"], filter=f
    ).to_table()
    later = dar.Table("s3://dar/sample", storage_options=s3, data_cache_bytes=0, cache_dir=cache)
    scan = later.scan(columns=["trip_id", "fare"], filter=f)
    assert scan.to_table().equals(rows)
    io = scan.metrics()["io"]
    # No footer or page byte fetched; the one request per file is the HEAD
    # that checks the file is the version the cache holds.
    assert io["classes"]["footer"]["bytes"] == 0 and io["classes"]["page_data"]["bytes"] == 0, io
    requests = io["classes"]["footer"]["requests"] + io["classes"]["page_data"]["requests"]
    assert requests == io["cache"]["validations"], io
    assert io["cache"]["disk_hits"] > 0, io
    with pytest.raises(dar.InvalidArgumentError, match="data_cache_bytes"):
        dar.Table("s3://dar/sample", storage_options=s3, data_cache_bytes=-1)
