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


def write_ict_toggled_table(root) -> dict:
    """In-commit timestamps switched on at version 3 and off at 8, file
    times an hour later than the in-commit timestamps (as dar-testkit's
    `write_ict_toggled_table`); returns the commit timestamp (ms) each
    version must have: its file time for 0-2 and 8-9, its in-commit
    timestamp for 3-7."""
    import json
    import os

    import pyarrow.parquet as pq

    log = root / "_delta_log"
    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [{"name": "id", "type": "integer", "nullable": True, "metadata": {}}],
    }

    def metadata(config):
        return {
            "metaData": {
                "id": "hand-written",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": config,
                "createdTime": 0,
            }
        }

    cdf = {"delta.enableChangeDataFeed": "true"}
    expected = {}
    for v in range(10):
        file_time = 1_700_000_000_000 + 60_000 * v
        ict = file_time - 3_600_000
        on = 3 <= v < 8
        info = {"timestamp": file_time, "operation": "WRITE"}
        if on:
            info["inCommitTimestamp"] = ict
        actions = [{"commitInfo": info}]
        if v == 0:
            actions.append(
                {
                    "protocol": {
                        "minReaderVersion": 3,
                        "minWriterVersion": 7,
                        "readerFeatures": [],
                        "writerFeatures": ["inCommitTimestamp"],
                    }
                }
            )
            actions.append(metadata(cdf))
        elif v == 3:
            actions.append(
                metadata(
                    {
                        **cdf,
                        "delta.enableInCommitTimestamps": "true",
                        "delta.inCommitTimestampEnablementVersion": "3",
                        "delta.inCommitTimestampEnablementTimestamp": str(ict),
                    }
                )
            )
        elif v == 8:
            actions.append(metadata({**cdf, "delta.enableInCommitTimestamps": "false"}))
        name = f"v{v}.parquet"
        pq.write_table(pa.table({"id": pa.array([v], pa.int32())}), root / name)
        size = (root / name).stat().st_size
        actions.append(
            {"add": {"path": name, "partitionValues": {}, "size": size, "modificationTime": 0, "dataChange": True}}
        )
        commit = log / f"{v:020}.json"
        commit.write_text("".join(json.dumps(a) + "\n" for a in actions))
        os.utime(commit, ns=(file_time * 1_000_000, file_time * 1_000_000))
        expected[v] = ict if on else file_time
    return expected


def test_each_commit_has_its_own_kind_of_timestamp(tmp_path):
    """In-commit timestamps on at version 3 and off at 8: each commit's
    `_commit_timestamp` is the kind in force at that commit, whichever
    range reads it (the end version's setting decided them all before)."""
    expected = write_ict_toggled_table(tmp_path)
    t = dar.Table(tmp_path)
    for start, end in [(0, 9), (3, 8), (5, 9)]:
        rows = t.changes(start, end).to_table().to_pylist()
        got = sorted(
            (r["_commit_version"], int(r["_commit_timestamp"].timestamp() * 1000)) for r in rows
        )
        assert got == [(v, expected[v]) for v in range(start, end + 1)], (start, end)


def test_the_feed_reads_no_commit_the_open_read(testdata):
    """The commits the table's open read are kept: the feed's run reads no
    log file (as `dar changes` and the Rust API), and gives every row."""
    t = dar.Table(testdata / "kernel" / "cdf-table-simple")
    scan = t.changes(0)
    assert scan.to_table().num_rows == 25
    classes = scan.metrics()["io"]["classes"]
    assert classes.get("log", {"requests": 0})["requests"] == 0, classes
    assert classes["footer"]["requests"] >= 1, classes
