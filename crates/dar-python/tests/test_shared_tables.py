"""Every shared test table read through Python gives the rows the `dar`
command gives (the Rust scan that dar-scan's tests pin), or the same error;
DAT cases match Spark's expected rows at every version; a few tables are
spelled out exactly."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dar
from conftest import cli_error, cli_rows, sorted_rows

# (latest version, rows) of dar-scan's kernel pins (crates/dar-scan/tests/scan/kernel.rs).
KERNEL_PINS = {
    "app-txn-checkpoint": (1, 22),
    "app-txn-no-checkpoint": (1, 22),
    "basic-decimal-table": (0, 4),
    "basic_partitioned": (1, 6),
    "cdf-column-mapping-id-mode": (4, 3),
    "cdf-column-mapping-name-mode-3-7": (4, 3),
    "cdf-column-mapping-name-mode": (4, 3),
    "cdf-table-backtick-column-names": (1, 5),
    "cdf-table-data-change": (1, 10),
    "cdf-table-delete-conditional-all-rows": (1, 0),
    "cdf-table-delete-conditional-two-rows": (1, 8),
    "cdf-table-delete-unconditional": (1, 0),
    "cdf-table-non-partitioned": (4, 11),
    "cdf-table-partitioned": (2, 2),
    "cdf-table-simple": (2, 0),
    "cdf-table-update-ops": (2, 10),
    "cdf-table-with-cdc-and-dvs": (25, 5),
    "cdf-table-with-dv": (6, 10),
    "cdf-table": (3, 9),
    "compacted-log-files-table": (25, 5),
    "crc-full": (0, 0),
    "data-reader-timestamp_ntz": (1, 9),
    "external-table-different-nullability": (5, 7),
    "mixed-nulls": (0, 15),
    "parquet_row_group_skipping": (1, 5),
    "parsed-stats": (5, 600),
    "partition_cm/id": (0, 0),
    "partition_cm/name": (0, 0),
    "partition_cm/none": (0, 0),
    "partitioned_with_materialize_feature": (1, 6),
    "stats-writing-all-types/delta": (1, 4),
    "table-with-cdf": (4, 0),
    "table-with-dv-small": (1, 8),
    "table-without-dv-small": (0, 10),
    "timestamp-partitioned-table": (0, 1),
    "timestamp-truncation-stats": (2, 6),
    "type-widening": (2, 2),
    "unshredded-variant": (2, 102),
    "v1-multi-part-partitioned-struct-stats-only": (5, 5),
    "v1-multi-part-struct-stats-only": (5, 5),
    "v1-single-part-struct-stats-only": (5, 5),
    "v2-checkpoints-json-with-last-checkpoint": (0, 10),
    "v2-checkpoints-json-with-sidecars": (6, 1233),
    "v2-checkpoints-json-without-sidecars": (2, 11),
    "v2-checkpoints-parquet-with-last-checkpoint": (0, 10),
    "v2-checkpoints-parquet-with-sidecars": (6, 1233),
    "v2-checkpoints-parquet-without-sidecars": (2, 11),
    "v2-classic-checkpoint-json": (1, 20),
    "v2-classic-checkpoint-parquet": (1, 20),
    "v2-classic-parquet-struct-stats-only": (5, 5),
    "v2-json-sidecars-struct-stats-only": (5, 5),
    "v2-parquet-sidecars-struct-stats-only": (5, 5),
    "void-column": (0, 3),
    "with-short-dv": (0, 7),
}

# Predicates of dar-scan's row-by-row filter test, per kernel table.
PREDICATES = {
    "parsed-stats": ["age > 50", "id = 100", "salary < 62000 OR name = 'name_500'", "id BETWEEN 200 AND 250"],
    "basic_partitioned": ["letter = 'a'", "letter IS NULL", "letter != 'a' AND number > 2"],
    "mixed-nulls": ["part = 1", "n IS NULL", "n IS NOT NULL AND part = 0", "part IS NULL OR value = 'value-3'"],
    "timestamp-truncation-stats": ["ts_col = '1970-01-01T00:00:02Z'", "ts_col > '1970-01-01T00:00:02.0005Z'"],
    "parquet_row_group_skipping": ["numeric.ints.int64 > 1000", "chrono.date32 < '1971-01-05'", "bool IS NOT NULL"],
    "table-with-dv-small": ["value > 4", "value = 0"],
    "cdf-column-mapping-name-mode": ["name = 'Frank'", "value > 200"],
    "data-reader-timestamp_ntz": ["tsNtzPartition = '2013-07-05 17:01:00.123456'", "tsNtz IS NULL"],
    "basic-decimal-table": ["part > 0", "col1 < 0"],
    "type-widening": ["int_long > 5", "date_timestamp_ntz >= '2024-09-09 12:00:00'"],
}


def delta_tables(root: Path) -> list:
    """Every Delta table (a folder with a `_delta_log`) under `root`."""
    return sorted(p.parent for p in root.rglob("_delta_log") if p.is_dir())


def same_data(got: pa.Table, expected: pa.Table) -> None:
    """Equal column names, types and values in the same order (field metadata aside)."""
    assert got.schema.names == expected.schema.names
    assert got.schema.types == expected.schema.types
    assert got.num_rows == expected.num_rows
    assert got.equals(expected), "rows differ"


def leaves(t):
    """The leaf types of `t`, depth first (struct fields, list values, map
    keys and items), as strings; strings and binaries of every width as
    `string` and `binary`, their views as `string_view` and `binary_view`."""
    if pa.types.is_struct(t):
        return [x for f in t for x in leaves(f.type)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return leaves(t.value_type)
    if pa.types.is_map(t):
        return leaves(t.key_type) + leaves(t.item_type)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return ["string"]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return ["binary"]
    return [str(t)]


def same_as_views(classic, views, name):
    """`views` (a scan with `view_types=True`) holds the rows of `classic`,
    every string and binary as a view, at any depth."""
    as_views = {"string": "string_view", "binary": "binary_view"}
    for c, v in zip(classic.schema.types, views.schema.types):
        assert leaves(v) == [as_views.get(x, x) for x in leaves(c)], name
    assert views.cast(classic.schema).equals(classic), name


def test_every_table_reads_as_the_cli_reads_it(testdata, dar_bin):
    tables = delta_tables(testdata / "kernel")
    assert len(tables) >= len(KERNEL_PINS)
    checked = 0
    for path in tables:
        name = path.relative_to(testdata / "kernel").as_posix()
        cli = None
        try:
            cli = cli_rows(dar_bin, str(path))
        except AssertionError:
            pass
        if cli is None:
            # The CLI fails on this table (unsupported, or a log-only table
            # whose data files do not exist): Python fails the same way.
            message = cli_error(dar_bin, "scan", str(path), "--format", "null")
            with pytest.raises(dar.DarError) as e:
                dar.Table(str(path)).scan().to_table()
            assert str(e.value) == message, name
            continue
        table = dar.Table(str(path))
        got = table.scan().to_table()
        same_data(got, cli)
        assert table.scan().count() == got.num_rows, name
        same_as_views(got, table.scan(view_types=True).to_table(), name)
        if name in KERNEL_PINS:
            version, rows = KERNEL_PINS[name]
            assert table.version == version, name
            assert got.num_rows == rows, name
            checked += 1
    assert checked == len(KERNEL_PINS)


def test_filters_match_the_cli(testdata, dar_bin):
    for name, predicates in PREDICATES.items():
        path = str(testdata / "kernel" / name)
        table = dar.Table(path)
        for p in predicates:
            got = table.scan(filter=p).to_table()
            same_data(got, cli_rows(dar_bin, path, "--filter", p))
            assert table.scan(filter=p).count() == got.num_rows, f"{name}: {p}"


def test_deletion_vectors_and_column_mapping_exactly(testdata):
    kernel = testdata / "kernel"
    # The DV deletes rows 0 and 9 of values 0..=9.
    t = dar.Table(str(kernel / "table-with-dv-small")).scan().to_table()
    assert sorted(t.column("value").to_pylist()) == list(range(1, 9))
    # Inline DVs: ids 0, 1, 2 deleted from the first file.
    t = dar.Table(str(kernel / "with-short-dv")).scan(columns=["id"]).to_table()
    assert sorted(t.column("id").to_pylist()) == list(range(3, 10))
    bob = [
        {"id": 2, "name": "Bob", "value": 250.0},
        {"id": 3, "name": "Charlie", "value": 300.0},
        {"id": 4, "name": "David", "value": 400.0},
    ]
    for name in ["cdf-column-mapping-name-mode", "cdf-column-mapping-name-mode-3-7"]:
        t = dar.Table(str(kernel / name)).scan().to_table()
        assert sorted_rows(t) == sorted(bob, key=repr), name
    # Nested struct fields by physical name, projected as `a.b`.
    scan = dar.Table(str(kernel / "stats-writing-all-types/delta")).scan(
        columns=["nested_struct.inner_int", "string_col"]
    )
    t = scan.to_table()
    assert t.schema.names == ["nested_struct.inner_int", "string_col"]
    assert sorted(t.to_pylist(), key=repr) == sorted(
        [
            {"nested_struct.inner_int": 10, "string_col": "alpha"},
            {"nested_struct.inner_int": 30, "string_col": "beta"},
            {"nested_struct.inner_int": 50, "string_col": "gamma"},
            {"nested_struct.inner_int": None, "string_col": None},
        ],
        key=repr,
    )


def cast_like(expected: pa.Table, schema: pa.Schema) -> pa.Table:
    """`expected` with each column cast to the type of the same-named field of `schema`."""
    columns = []
    for name, column in zip(expected.column_names, expected.columns):
        target = schema.field(name).type
        columns.append(column if column.type == target or pa.types.is_null(target) else column.cast(target))
    return pa.table(columns, names=expected.column_names)


def test_dat_cases_match_spark_at_every_version(testdata):
    cases = sorted(p for p in (testdata / "dat").iterdir() if (p / "delta").is_dir())
    assert len(cases) >= 4
    for case in cases:
        versions = sorted(
            int(p.name[1:]) for p in (case / "expected").iterdir() if p.name[1:].isdigit()
        )
        assert versions, case
        for version, folder in [(v, f"v{v}") for v in versions] + [(None, "latest")]:
            table = dar.Table(str(case / "delta"), version=version)
            got = table.scan().to_table()
            expected = pq.read_table(case / "expected" / folder / "table_content.parquet")
            expected = cast_like(expected, got.schema)
            assert sorted_rows(got.select(expected.column_names)) == sorted_rows(expected), (
                f"{case.name} at {folder}"
            )
            assert set(got.column_names) == set(expected.column_names)
