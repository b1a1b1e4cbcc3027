"""scan(filter=...) means what SQL means, as `dar scan --filter` does:
-0.0 = 0.0 and NaN above every value (in data, statistics and partition
values), numbers compared by value across numeric types (`n > 2.5` on an
integer column, `fare < 10.005` on a decimal(8, 2) column)."""

import json
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dar
from conftest import cli_rows

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("x", pa.float64()),
        ("n", pa.int32()),
        ("fare", pa.decimal128(8, 2)),
    ]
)

# (ids, x, n, fare, partition value of p, stats bounds of x)
FILES = [
    ([1, 2], [-0.0, -0.0], [1, 2], ["10.00", "10.01"], "-0.0", (-0.0, -0.0)),
    ([3, 4, 5], [0.0, -0.0, float("nan")], [3, 4, 5], ["9.99", "10.05", "20.00"], "0.0", (-0.0, 0.0)),
    ([6, 7], [-1.5, 2.5], [-3, 100], ["-0.01", "0.00"], "NaN", (-1.5, 2.5)),
]

CASES = [
    ("x = 0", [1, 2, 3, 4]),
    ("x = -0.0", [1, 2, 3, 4]),
    ("x < 0", [6]),
    ("x > 0", [5, 7]),
    ("x <> 0", [5, 6, 7]),
    ("x IN (0, 2.5)", [1, 2, 3, 4, 7]),
    ("p = 0", [1, 2, 3, 4, 5]),
    ("p < 0", []),
    ("p > 0", [6, 7]),
    ("x = CAST('NaN' AS DOUBLE)", [5]),
    ("n > 2.5", [3, 4, 5, 7]),
    ("n = 2.5", []),
    ("n IN (2, 2.5)", [2]),
    ("NOT (n IN (2.5))", [1, 2, 3, 4, 5, 6, 7]),
    ("fare < 10.005", [1, 3, 6, 7]),
    ("fare > 10.005", [2, 4, 5]),
]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    root = tmp_path_factory.mktemp("semantics")
    (root / "_delta_log").mkdir()
    fields = [
        {"name": name, "type": kind, "nullable": True, "metadata": {}}
        for name, kind in [
            ("id", "long"),
            ("x", "double"),
            ("n", "integer"),
            ("fare", "decimal(8,2)"),
            ("p", "double"),
        ]
    ]
    actions = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "python-hand-written",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps({"type": "struct", "fields": fields}),
                "partitionColumns": ["p"],
                "configuration": {},
                "createdTime": 0,
            }
        },
    ]
    for i, (ids, x, n, fare, p, (lo, hi)) in enumerate(FILES):
        data = pa.table(
            [ids, x, n, [Decimal(f) for f in fare]], schema=SCHEMA
        )
        path = f"part-{i}.parquet"
        pq.write_table(data, root / path)
        stats = {
            "numRecords": len(ids),
            "minValues": {"x": lo},
            "maxValues": {"x": hi},
            "nullCount": {"x": 0},
        }
        actions.append(
            {
                "add": {
                    "path": path,
                    "partitionValues": {"p": p},
                    "size": (root / path).stat().st_size,
                    "modificationTime": 0,
                    "dataChange": True,
                    "stats": json.dumps(stats),
                }
            }
        )
    commit = root / "_delta_log" / f"{0:020}.json"
    commit.write_text("".join(json.dumps(a) + "\n" for a in actions))
    return root


@pytest.mark.parametrize("filter,ids", CASES)
def test_filters_mean_what_sql_means(table, dar_bin, filter, ids):
    scan = dar.Table(str(table)).scan(columns=["id"], filter=filter)
    assert sorted(scan.to_table().column("id").to_pylist()) == ids
    cli = cli_rows(dar_bin, str(table), "--columns", "id", "--filter", filter)
    assert sorted(cli.column("id").to_pylist()) == ids
