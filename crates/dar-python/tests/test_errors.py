"""Bad input raises a dar.DarError subclass whose message is the `dar`
command's one-line message, whichever way the scan is consumed."""

import shutil

import pyarrow as pa
import pytest

import dar
from conftest import SAMPLE, cli_error

S = str(SAMPLE)


def test_hierarchy():
    for cls in [
        dar.NotFoundError,
        dar.ProtocolUnsupportedError,
        dar.InvalidPredicateError,
        dar.InvalidArgumentError,
        dar.StorageError,
        dar.CorruptDataError,
    ]:
        assert issubclass(cls, dar.DarError)
    assert issubclass(dar.DarError, Exception)


@pytest.mark.parametrize(
    "cls, call, cli_args",
    [
        (dar.NotFoundError, lambda: dar.Table("/no/such/table"), ["info", "/no/such/table"]),
        (dar.NotFoundError, lambda: dar.Table(S, version=99), ["info", S, "--version", "99"]),
        (
            dar.NotFoundError,
            lambda: dar.Table(S, timestamp="2000-01-01T00:00:00Z"),
            ["info", S, "--timestamp", "2000-01-01T00:00:00Z"],
        ),
        (
            dar.InvalidArgumentError,
            lambda: dar.Table(S, timestamp="yesterday"),
            ["info", S, "--timestamp", "yesterday"],
        ),
        (
            dar.InvalidArgumentError,
            lambda: dar.Table(S).scan(columns=["trip_id", "fair"]),
            ["scan", S, "--columns", "trip_id,fair"],
        ),
        (
            dar.InvalidPredicateError,
            lambda: dar.Table(S).scan(filter="fare > > 20"),
            ["scan", S, "--filter", "fare > > 20"],
        ),
        (
            dar.InvalidPredicateError,
            lambda: dar.Table(S).scan(filter="no_such_column = 1"),
            ["scan", S, "--filter", "no_such_column = 1"],
        ),
        (
            dar.InvalidArgumentError,
            lambda: dar.Table("ftp://host/table"),
            ["info", "ftp://host/table"],
        ),
    ],
)
def test_same_class_and_message_as_the_cli(dar_bin, cls, call, cli_args):
    with pytest.raises(cls) as e:
        call()
    assert str(e.value) == cli_error(dar_bin, *cli_args)
    assert "\n" not in str(e.value)


def test_bad_python_arguments():
    with pytest.raises(dar.InvalidArgumentError, match="invalid --limit: -1 is negative"):
        dar.Table(S).scan(limit=-1)
    with pytest.raises(dar.InvalidArgumentError, match="invalid --version: -1 is negative"):
        dar.Table(S, version=-1)
    with pytest.raises(dar.InvalidArgumentError, match="cannot be given together"):
        dar.Table(S, version=1, timestamp=0)
    with pytest.raises(dar.InvalidArgumentError, match="expected milliseconds"):
        dar.Table(S, timestamp=1.5)
    with pytest.raises(dar.InvalidArgumentError, match="batch_size"):
        dar.Table(S).scan(batch_size=0)


def test_unsupported_and_broken_tables(testdata, dar_bin):
    geo = str(testdata / "kernel" / "table-with-geo")
    with pytest.raises(dar.ProtocolUnsupportedError) as e:
        dar.Table(geo)
    assert str(e.value) == cli_error(dar_bin, "info", geo)
    assert "geospatial" in str(e.value)
    crc = str(testdata / "kernel" / "crc-malformed")
    with pytest.raises(dar.NotFoundError, match="not a Delta table"):
        dar.Table(crc)


def test_read_errors_whichever_way_the_scan_is_consumed(testdata, dar_bin):
    # A log-only table: its data files do not exist. The count is answered
    # from the log; reading rows fails naming the missing file.
    path = str(testdata / "kernel" / "app-txn-with-last-updated")
    message = cli_error(dar_bin, "scan", path, "--format", "null")
    assert ".parquet" in message
    table = dar.Table(path)
    assert table.scan().count() == 8
    with pytest.raises(dar.StorageError) as e:
        table.scan().to_table()
    assert str(e.value) == message
    reader = table.scan().to_reader()
    with pytest.raises(dar.StorageError) as e:
        reader.read_all()
    assert str(e.value) == message
    # Through the C stream the consumer raises its own error, with the message.
    with pytest.raises(pa.ArrowException) as e:
        pa.table(table.scan())
    assert message in str(e.value)


def test_corrupt_log(tmp_path, dar_bin):
    table = tmp_path / "sample"
    shutil.copytree(SAMPLE, table)
    with open(table / "_delta_log" / "00000000000000000007.json", "a") as f:
        f.write('{"add": {"path": \n')
    with pytest.raises(dar.CorruptDataError) as e:
        dar.Table(str(table))
    assert str(e.value) == cli_error(dar_bin, "info", str(table))
    assert "00000000000000000007.json" in str(e.value)


def test_corrupt_data_file(tmp_path, dar_bin):
    table = tmp_path / "sample"
    shutil.copytree(SAMPLE, table)
    data = next(table.glob("day=2024-01-04/*.parquet"))
    body = data.read_bytes()
    data.write_bytes(body[:100] + b"\0" * (len(body) - 100))
    t = dar.Table(str(table))
    with pytest.raises(dar.DarError) as e:
        t.scan().to_table()
    assert str(e.value) == cli_error(dar_bin, "scan", str(table), "--format", "null")
    assert data.name in str(e.value)
    assert type(e.value) is dar.CorruptDataError
