"""Table.changes: the change data feed of the kernel's CDF tables, exact
rows (as the Rust tests and `dar changes` give them), pyarrow and the
Arrow C stream, the change columns, and each refusal as its DarError."""

import datetime

import pyarrow as pa
import pytest

import dar
from conftest import run_dar


def change_rows(table: pa.Table) -> list:
    """Sorted tuples of every column but `_commit_timestamp`."""
    names = [n for n in table.column_names if n != "_commit_timestamp"]
    return sorted(tuple(r[n] for n in names) for r in table.select(names).to_pylist())


def test_cdf_table_exact_rows(testdata):
    t = dar.Table(testdata / "kernel" / "cdf-table-with-dv")
    got = change_rows(t.changes(0).to_table())
    views = t.changes(0, view_types=True).to_table()
    assert views.schema.field("_change_type").type == pa.string_view()
    assert change_rows(views.cast(t.changes(0).to_table().schema)) == got
    expected = (
        [(i, "insert", 0) for i in range(10)]
        + [(0, "delete", 1), (9, "delete", 1), (0, "insert", 2), (9, "insert", 2)]
        + [(i, "delete", 3) for i in (0, 1, 4, 5)]
        + [(1, "insert", 4), (4, "insert", 4), (3, "delete", 5), (0, "insert", 5)]
        + [(5, "insert", 5), (3, "insert", 6)]
    )
    assert got == sorted(expected)


def test_updates_from_cdc_files_and_the_change_columns(testdata):
    t = dar.Table(testdata / "kernel" / "cdf-table")
    scan = t.changes(2, 2, columns=["id"], filter="_change_type = 'update_postimage'")
    table = pa.table(scan)  # through __arrow_c_stream__
    assert table.column_names == ["id", "_change_type", "_commit_version", "_commit_timestamp"]
    assert table.schema.field("_commit_version").type == pa.int64()
    assert table.schema.field("_commit_timestamp").type == pa.timestamp("us", tz="UTC")
    assert change_rows(table) == [(5, "update_postimage", 2), (6, "update_postimage", 2), (7, "update_postimage", 2)]
    assert table.column("_commit_timestamp").null_count == 0
    assert scan.count() == 3


def test_timestamps_bound_the_range(testdata):
    t = dar.Table(testdata / "kernel" / "cdf-table-simple")
    times = {}
    for r in t.changes(0).to_table().to_pylist():
        times[r["_commit_version"]] = r["_commit_timestamp"]
    assert sorted(times) == [0, 1, 2]
    one = times[1]
    got = t.changes(one, one).to_table()
    assert set(got.column("_commit_version").to_pylist()) == {1}
    # An RFC 3339 string works as well as a datetime.
    text = one.astimezone(datetime.timezone.utc).isoformat()
    assert t.changes(text, text).count() == 10


def test_column_mapping_from_the_version_the_feed_starts(testdata):
    t = dar.Table(testdata / "kernel" / "cdf-column-mapping-name-mode")
    assert change_rows(t.changes(1).to_table()) == [
        (1, "Alice", 100.0, "delete", 4),
        (2, "Bob", 200.0, "update_preimage", 2),
        (2, "Bob", 250.0, "update_postimage", 2),
        (4, "David", 400.0, "insert", 3),
    ]


def test_refusals_are_dar_errors_naming_the_version(testdata):
    t = dar.Table(testdata / "kernel" / "table-with-cdf")
    with pytest.raises(dar.ProtocolUnsupportedError, match="not enabled at version 2"):
        t.changes(0, 2)
    with pytest.raises(dar.ProtocolUnsupportedError, match="column 'id' becomes non-nullable"):
        t.changes(3, 4)
    simple = dar.Table(testdata / "kernel" / "cdf-table-simple")
    with pytest.raises(dar.InvalidArgumentError, match="start version 3 is beyond the latest version 2"):
        simple.changes(3)
    with pytest.raises(dar.InvalidArgumentError, match="start version 1 is after end version 0"):
        simple.changes(1, 0)
    with pytest.raises(dar.InvalidArgumentError):
        simple.changes("yesterday")


def test_python_and_the_cli_agree(testdata, dar_bin):
    path = str(testdata / "kernel" / "cdf-table-with-cdc-and-dvs")
    out = run_dar(dar_bin, "changes", path, "--from", "0", "--format", "arrow")
    assert out.returncode == 0, out.stderr.decode()
    cli = pa.ipc.open_stream(out.stdout).read_all()
    py = dar.Table(path).changes(0).to_table()
    assert change_rows(py) == change_rows(cli)
    assert len(change_rows(py)) == 43
