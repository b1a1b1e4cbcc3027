"""dar.Scan on the sample table: columns, filters, limits, batch sizes,
metrics, the Arrow C stream, and each way to consume it agreeing with the
`dar` command."""

import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dar
from conftest import SAMPLE, cli_rows, write_delta_table


@pytest.fixture(scope="module")
def table():
    return dar.Table(str(SAMPLE))


def test_quick_start_scan_matches_the_readme(table):
    scan = table.scan(
        columns=["trip_id", "pickup_ts", "vendor", "fare"],
        filter="trip_id BETWEEN 165 AND 175",
    )
    t = scan.to_table()
    assert t.column_names == ["trip_id", "pickup_ts", "vendor", "fare"]
    # Trips 171 to 173 are deleted by an inline deletion vector.
    assert t.column("trip_id").to_pylist() == [165, 166, 167, 168, 169, 170, 174, 175]
    m = scan.metrics()
    assert (m["files_total"], m["files_pruned"], m["files_read"]) == (4, 3, 1)
    # The file index's bytes, and the columns whose stats this plan parsed.
    assert m["index_bytes"] > 0 and m["stats_columns_parsed"] <= 1
    assert (m["row_groups_total"], m["row_groups_pruned"]) == (2, 1)
    assert (m["pages_total"], m["pages_pruned"], m["rows_skipped_by_pages"]) == (4, 2, 20)
    assert (m["rows_deleted_by_dv"], m["rows_filtered"], m["rows_output"]) == (3, 9, 8)
    assert m["io"]["classes"]["footer"]["requests"] == 1
    assert set(m["stage_seconds"]) >= {"footer", "decode", "deletion_vector"}


def test_every_way_to_consume_gives_the_cli_rows(table, dar_bin):
    args = ("--filter", "fare > 40 AND vendor LIKE 'M%'", "--columns", "trip_id,fare,payment.tip,day")
    expected = cli_rows(dar_bin, str(SAMPLE), *args)
    scan = table.scan(
        columns=["trip_id", "fare", "payment.tip", "day"], filter="fare > 40 AND vendor LIKE 'M%'"
    )
    assert scan.schema == expected.schema
    assert expected.num_rows > 0
    assert scan.to_table().equals(expected)
    assert scan.to_reader().read_all().equals(expected)
    assert pa.table(scan).equals(expected)
    assert pa.RecordBatchReader.from_stream(scan).read_all().equals(expected)
    assert scan.count() == expected.num_rows
    # Each consumption runs anew, with fresh metrics.
    scan.to_table()
    assert scan.metrics()["rows_output"] == expected.num_rows


def test_count_answers_from_the_log(table):
    scan = table.scan()
    assert scan.count() == 300
    m = scan.metrics()
    assert (m["files_answered_from_log"], m["files_read"]) == (4, 0)
    assert m["io"]["requests"] == 0


def test_limits_and_batch_sizes(table, dar_bin):
    assert table.scan(limit=7).to_table().num_rows == 7
    assert table.scan(limit=7).count() == 7
    assert table.scan(limit=0).to_table().num_rows == 0
    assert table.scan(limit=10_000).count() == 300
    assert table.scan(filter="trip_id > 100", limit=5).to_table().equals(
        cli_rows(dar_bin, str(SAMPLE), "--filter", "trip_id > 100", "--limit", "5")
    )
    reader = table.scan(batch_size=16).to_reader()
    sizes = [b.num_rows for b in reader]
    assert sum(sizes) == 300 and max(sizes) <= 16
    t = table.scan(batch_size=16).to_table()
    assert t.num_rows == 300 and max(len(c) for c in t.column(0).chunks) <= 16


def test_empty_projection_and_empty_results(table):
    t = table.scan(columns=[]).to_table()
    assert t.num_columns == 0 and t.num_rows == 300
    empty = table.scan(filter="trip_id < 0")
    assert empty.to_table().num_rows == 0
    assert empty.to_table().schema == table.schema
    assert empty.count() == 0
    assert pa.table(empty).num_rows == 0


def test_the_stream_can_be_taken_by_threads(table):
    """Scans run at once from several threads (the GIL is released while they work)."""
    results = {}

    def work(i):
        results[i] = table.scan(filter=f"trip_id > {i}").to_table().num_rows

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == {i: table.scan(filter=f"trip_id > {i}").count() for i in range(4)}


def test_repr(table):
    scan = table.scan(columns=["trip_id"], filter="fare > 1", limit=3)
    assert repr(scan) == f"dar.Scan('{table.uri}', columns=['trip_id'], filter='fare > 1', limit=3)"


def test_stats_for_filter_parses_its_columns_at_open_with_the_same_rows(testdata):
    # Without a checkpoint (the sample) and with one (kernel/parsed-stats):
    # the filter's column stats are parsed while the table opens, so its
    # scan parses none, and returns what a table opened plainly returns.
    for path, f, other in [
        (SAMPLE, "trip_id BETWEEN 165 AND 175", "fare > 40"),
        (testdata / "kernel" / "parsed-stats", "id > 3", "age > 30"),
    ]:
        known = dar.Table(str(path), stats_for_filter=f)
        scan = known.scan(filter=f)
        got = scan.to_table()
        assert got.num_rows > 0
        assert got.equals(dar.Table(str(path)).scan(filter=f).to_table())
        assert scan.metrics()["stats_columns_parsed"] == 0, path
        # Another column's stats are parsed when a filter first needs them.
        later = known.scan(filter=other)
        later.to_table()
        assert later.metrics()["stats_columns_parsed"] == 1, path


def test_stats_for_filter_that_does_not_parse_leaves_the_error_to_the_scan():
    known = dar.Table(str(SAMPLE), stats_for_filter="trip_id >")
    assert known.scan(filter="trip_id > 5").count() > 0
    with pytest.raises(dar.InvalidPredicateError):
        known.scan(filter="trip_id >").to_table()


def test_large_local_reads_reuse_buffers_and_give_the_cli_rows(tmp_path, dar_bin):
    """A table of files whose reads are large enough to pool (160 KB of
    uncompressed ids each): every scan gives the rows `dar scan` gives, and
    a second scan of the same open table reads into the first one's
    buffers."""
    rows = 20_000
    root = tmp_path / "t"
    root.mkdir()
    names = []
    for f in range(3):
        data = pa.table({"id": pa.array(range(f * rows, (f + 1) * rows), pa.int64())})
        names.append(f"part-{f}.parquet")
        pq.write_table(data, root / names[-1], compression="none", use_dictionary=False)
    write_delta_table(root, [("id", "long", False)], [(name, None) for name in names])

    expected = cli_rows(dar_bin, str(root))
    assert expected.num_rows == 3 * rows
    table = dar.Table(str(root))
    first = table.scan()
    assert sorted(first.to_table().column("id").to_pylist()) == list(range(3 * rows))
    assert first.metrics()["io"]["local_reads"] >= 3
    second = table.scan()
    got = second.to_table()
    assert sorted(got.column("id").to_pylist()) == sorted(expected.column("id").to_pylist())
    assert second.metrics()["io"]["local_buffers_reused"] >= 1, second.metrics()["io"]
