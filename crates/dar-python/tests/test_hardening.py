"""The second hardening round through the Python module: hostile inputs give
a `dar.DarError` (never a crash of the interpreter), secrets stay out of
messages, and old statistics of widened columns keep their rows."""

import json
import os
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dar

from conftest import SAMPLE, cli_error, thrift_varint, thrift_zigzag


def deeply_nested_parquet(groups: int) -> bytes:
    """A Parquet file whose footer (Thrift compact protocol, written by hand)
    nests `groups` groups: the footer that overflowed readers' stacks."""
    f = bytearray(b"\x15") + thrift_zigzag(1)  # 1: version
    elements = groups + 1
    f += b"\x19" + (bytes([0xFC]) + thrift_varint(elements) if elements >= 15 else bytes([(elements << 4) | 12]))
    for i in range(elements):
        if i == elements - 1:
            f += b"\x15\x02\x25\x02\x18\x01x"  # INT32, OPTIONAL, name x
        elif i == 0:
            f += b"\x48\x06schema\x15" + thrift_zigzag(1)
        else:
            f += b"\x35\x02\x18\x01g\x15" + thrift_zigzag(1)
        f += b"\x00"
    f += b"\x16" + thrift_zigzag(0) + b"\x19\x0c\x00"
    return b"PAR1" + bytes(f) + struct.pack("<I", len(f)) + b"PAR1"


def write_log(root: Path, fields: list, adds: list, protocol=None, configuration=None) -> None:
    log = root / "_delta_log"
    log.mkdir(parents=True)
    actions = [
        {"protocol": protocol or {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "hand-written",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps({"type": "struct", "fields": fields}),
                "partitionColumns": [],
                "configuration": configuration or {},
                "createdTime": 0,
            }
        },
        *({"add": a} for a in adds),
    ]
    (log / "00000000000000000000.json").write_text("".join(json.dumps(a) + "\n" for a in actions))


def test_a_deeply_nested_footer_is_an_error_not_a_crash(tmp_path, dar_bin):
    data = deeply_nested_parquet(5000)
    (tmp_path / "part-0.parquet").write_bytes(data)
    write_log(
        tmp_path,
        [{"name": "g", "type": {"type": "struct", "fields": []}, "nullable": True, "metadata": {}}],
        [{"path": "part-0.parquet", "partitionValues": {}, "size": len(data), "modificationTime": 0, "dataChange": True}],
    )
    with pytest.raises(dar.CorruptDataError) as e:
        dar.Table(str(tmp_path)).scan().to_table()
    assert "part-0.parquet" in str(e.value) and "nests deeper" in str(e.value)
    assert str(e.value) == cli_error(dar_bin, "scan", str(tmp_path), "--format", "null")


def test_an_endpoint_that_does_not_parse_is_an_argument_error():
    with pytest.raises(dar.InvalidArgumentError) as e:
        dar.Table("s3://bucket/t", storage_options={"aws_endpoint": "http://127.0.0.1:99999"})
    assert "aws_endpoint" in str(e.value) and "99999" not in str(e.value)


def test_endpoint_credentials_never_reach_a_message():
    with pytest.raises(dar.StorageError) as e:
        dar.Table(
            "s3://bucket/t",
            storage_options={
                "aws_endpoint": "http://user:hunter2@127.0.0.1:1/?token=tok-9z",
                "aws_access_key_id": "AKIDEXAMPLE",
                "aws_secret_access_key": "SEKRET-5",
                "aws_allow_http": "true",
                "aws_region": "us-east-1",
            },
        )
    for secret in ("hunter2", "tok-9z", "SEKRET-5"):
        assert secret not in str(e.value), str(e.value)


def test_old_float_stats_of_a_widened_column_keep_their_row(tmp_path):
    table = pa.table({"x": pa.array([0.1], pa.float32())})
    pq.write_table(table, tmp_path / "part-0.parquet")
    size = (tmp_path / "part-0.parquet").stat().st_size
    stats = {"numRecords": 1, "minValues": {"x": 0.1}, "maxValues": {"x": 0.1}, "nullCount": {"x": 0}}
    write_log(
        tmp_path,
        [
            {
                "name": "x",
                "type": "double",
                "nullable": True,
                "metadata": {"delta.typeChanges": [{"fromType": "float", "toType": "double"}]},
            }
        ],
        [{"path": "part-0.parquet", "partitionValues": {}, "size": size, "modificationTime": 0, "dataChange": True, "stats": json.dumps(stats)}],
        protocol={
            "minReaderVersion": 3,
            "minWriterVersion": 7,
            "readerFeatures": ["typeWidening"],
            "writerFeatures": ["typeWidening"],
        },
    )
    exact = float(pa.scalar(0.1, pa.float32()).as_py())
    rows = dar.Table(str(tmp_path)).scan(filter=f"x = {exact!r}").to_table()
    assert rows.num_rows == 1
    assert rows.column("x").to_pylist() == [exact]


def test_a_cache_dir_inside_the_table_or_open_to_others_is_refused(tmp_path):
    """`cache_dir` keeps to a namespace of its own: a folder inside the
    table being read, or one other users can write, is an argument error
    naming it, and nothing is written into the table."""
    import shutil

    table = tmp_path / "t"
    shutil.copytree(SAMPLE, table)
    before = sorted(p.relative_to(table) for p in table.rglob("*"))
    for cache in [table, table / "_delta_log", table / "sub"]:
        with pytest.raises(dar.InvalidArgumentError, match="inside the table being read"):
            dar.Table(str(table), cache_dir=cache)
    assert sorted(p.relative_to(table) for p in table.rglob("*")) == before

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(dar.InvalidArgumentError, match="writable by everyone"):
        dar.Table(str(table), cache_dir=shared)
    assert not (shared / "dar-cache-v2").exists()

    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    (mine / "notes.txt").write_text("kept")
    t = dar.Table(str(table), cache_dir=mine, cache_dir_bytes=1)
    rows = t.scan().to_table()
    assert rows.num_rows > 0
    del t
    assert (mine / "notes.txt").read_text() == "kept"
    assert (mine / "dar-cache-v2" / "DAR-CACHE").is_file()


def test_cache_entries_replaced_by_fifos_links_or_sparse_files_are_never_read(tmp_path):
    """A cache entry replaced by a FIFO, a link to /dev/zero or a huge
    sparse file is skipped and fetched again: the scan neither hangs nor
    reads it, and returns the uncached rows."""
    import shutil

    table = tmp_path / "t"
    shutil.copytree(SAMPLE, table)
    uncached = dar.Table(str(table)).scan().to_table()
    for kind in ["fifo", "link", "sparse"]:
        cache = tmp_path / f"cache-{kind}"
        cache.mkdir(mode=0o700)
        t = dar.Table(str(table), cache_dir=cache)
        assert t.scan().to_table().equals(uncached)
        del t
        namespace = cache / "dar-cache-v2"
        entries = [p for p in namespace.rglob("*") if p.is_file() and p.parent != namespace]
        assert entries, kind
        for entry in entries:
            if kind == "fifo":
                entry.unlink()
                os.mkfifo(entry)
            elif kind == "link":
                entry.unlink()
                entry.symlink_to("/dev/zero")
            else:
                os.truncate(entry, 1 << 40)
        cached = dar.Table(str(table), cache_dir=cache).scan().to_table()
        assert cached.equals(uncached), kind
