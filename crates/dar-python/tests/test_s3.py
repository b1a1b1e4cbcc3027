"""s3:// tables through a real S3 protocol server on 127.0.0.1 (dar-io's
in-process s3s server, run by its `s3_server` example binary)."""

import subprocess

import pytest

import dar
from conftest import SAMPLE


@pytest.fixture(scope="module")
def s3(s3_server_bin):
    """Storage options of a server whose bucket `dar` holds the sample under `sample/`."""
    server = subprocess.Popen(
        [str(s3_server_bin), "dar", str(SAMPLE), "sample"],
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
