"""Issue 33, item 8 through the Python module: a Parquet footer claiming
2^31-1 row groups, or a schema group claiming 2^31-1 children, is a
`dar.CorruptDataError` naming the file (the message `dar` prints), never a
crash of the interpreter. parquet sized vectors by those claims and the
process died of SIGABRT, so each read runs in a child interpreter bounded
to 8 GiB of address space: an abort there is a signal on any machine."""

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_error, thrift_varint, thrift_zigzag

CLAIM_MAX = 2**31 - 1

# The read, in a child interpreter bounded to 8 GiB: exit 0 printing the
# message of a CorruptDataError, 3 when the scan read, a signal on abort.
CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
import dar
try:
    dar.Table(sys.argv[1]).scan().to_table()
except dar.CorruptDataError as e:
    print(str(e))
    sys.exit(0)
sys.exit(3)
"""


def claiming_parquet(row_groups: int = 0, root_children: int = 1) -> bytes:
    """A Parquet file (no rows, one INT32 column `x`) whose footer, written
    by hand in Thrift's compact protocol, claims `row_groups` row groups
    (holding none) and a root of `root_children` children."""
    f = bytearray(b"\x15") + thrift_zigzag(1)  # 1: version
    f += b"\x19\x2c"  # 2: schema, a list of 2 structs
    f += b"\x48\x06schema\x15" + thrift_zigzag(root_children) + b"\x00"  # root
    f += b"\x15\x02\x25\x02\x18\x01x\x00"  # INT32, OPTIONAL, name x
    f += b"\x16" + thrift_zigzag(0)  # 3: num_rows
    f += b"\x19" + (b"\xfc" + thrift_varint(row_groups) if row_groups >= 15 else bytes([(row_groups << 4) | 12]))
    f += b"\x00"
    return b"PAR1" + bytes(f) + struct.pack("<I", len(f)) + b"PAR1"


def write_table(root: Path, data: bytes) -> None:
    (root / "part-0.parquet").write_bytes(data)
    log = root / "_delta_log"
    log.mkdir()
    schema = {"type": "struct", "fields": [{"name": "x", "type": "integer", "nullable": True, "metadata": {}}]}
    actions = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "hand-written",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": {},
                "createdTime": 0,
            }
        },
        {"add": {"path": "part-0.parquet", "partitionValues": {}, "size": len(data), "modificationTime": 0, "dataChange": True}},
    ]
    (log / "00000000000000000000.json").write_text("".join(json.dumps(a) + "\n" for a in actions))


@pytest.mark.parametrize(
    "claims",
    [{"row_groups": CLAIM_MAX}, {"root_children": CLAIM_MAX}],
    ids=["row groups", "schema children"],
)
def test_a_claimed_length_is_an_error_not_a_crash(tmp_path, dar_bin, claims):
    # The same footer claiming what it holds reads (no rows).
    honest = tmp_path / "honest"
    honest.mkdir()
    write_table(honest, claiming_parquet())
    out = subprocess.run([sys.executable, "-c", CHILD, str(honest)], capture_output=True, text=True)
    assert out.returncode == 3, out.stderr

    hostile = tmp_path / "hostile"
    hostile.mkdir()
    write_table(hostile, claiming_parquet(**claims))
    out = subprocess.run([sys.executable, "-c", CHILD, str(hostile)], capture_output=True, text=True)
    assert out.returncode == 0, f"exit {out.returncode} (negative: killed by that signal): {out.stderr}"
    message = out.stdout.strip()
    assert "part-0.parquet" in message and "claims" in message, message
    assert message == cli_error(dar_bin, "scan", str(hostile), "--format", "null")
