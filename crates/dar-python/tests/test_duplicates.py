"""Issue 33 item 11 through the Python module: a multi-part checkpoint that
repeats a file reads its rows once; a repeat with another size is a
`dar.CorruptDataError` naming the file, the same message as `dar scan`."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dar

from conftest import cli_error

STRINGS = pa.map_(pa.string(), pa.string())
CHECKPOINT = pa.schema(
    [
        ("protocol", pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32())])),
        (
            "metaData",
            pa.struct(
                [
                    ("id", pa.string()),
                    ("format", pa.struct([("provider", pa.string()), ("options", STRINGS)])),
                    ("schemaString", pa.string()),
                    ("partitionColumns", pa.list_(pa.string())),
                    ("configuration", STRINGS),
                    ("createdTime", pa.int64()),
                ]
            ),
        ),
        (
            "add",
            pa.struct(
                [
                    ("path", pa.string()),
                    ("partitionValues", STRINGS),
                    ("size", pa.int64()),
                    ("modificationTime", pa.int64()),
                    ("dataChange", pa.bool_()),
                    ("stats", pa.string()),
                ]
            ),
        ),
    ]
)


def _add(path: str, size: int, rows: int) -> dict:
    stats = json.dumps({"numRecords": rows})
    add = {"path": path, "partitionValues": [], "size": size, "modificationTime": 0, "dataChange": False, "stats": stats}
    return {"protocol": None, "metaData": None, "add": add}


def write_table(root: Path, repeat_size_delta: int) -> Path:
    """Files f0 (ids 1, 2) and f1 (id 3); a two-part checkpoint at version
    0 whose second part adds f0 again, its size changed by
    `repeat_size_delta`."""
    sizes = {}
    for name, ids in (("f0.parquet", [1, 2]), ("f1.parquet", [3])):
        pq.write_table(pa.table({"x": pa.array(ids, pa.int64())}), root / name)
        sizes[name] = (root / name).stat().st_size
    schema = json.dumps({"type": "struct", "fields": [{"name": "x", "type": "long", "nullable": True, "metadata": {}}]})
    head = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}, "metaData": None, "add": None},
        {
            "protocol": None,
            "metaData": {
                "id": "t",
                "format": {"provider": "parquet", "options": []},
                "schemaString": schema,
                "partitionColumns": [],
                "configuration": [],
                "createdTime": 0,
            },
            "add": None,
        },
    ]
    parts = [
        head + [_add("f0.parquet", sizes["f0.parquet"], 2)],
        [_add("f1.parquet", sizes["f1.parquet"], 1), _add("f0.parquet", sizes["f0.parquet"] + repeat_size_delta, 2)],
    ]
    log = root / "_delta_log"
    log.mkdir()
    for o, rows in enumerate(parts, start=1):
        name = f"{0:020}.checkpoint.{o:010}.{len(parts):010}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=CHECKPOINT), log / name)
    return root


def test_a_file_repeated_across_checkpoint_parts_is_read_once(tmp_path):
    t = write_table(tmp_path, 0)
    table = dar.Table(str(t))
    assert sorted(table.scan().to_table().column("x").to_pylist()) == [1, 2, 3]
    assert table.scan().count() == 3


def test_a_file_repeated_with_another_size_is_refused(tmp_path, dar_bin):
    t = write_table(tmp_path, 1)
    with pytest.raises(dar.CorruptDataError) as e:
        dar.Table(str(t)).scan().to_table()
    message = str(e.value)
    assert "conflicting actions" in message and "f0.parquet" in message, message
    assert message == cli_error(dar_bin, "scan", str(t), "--format", "null")
