"""Shared fixtures: the repository, the shared test tables, the `dar` binary
(the reference the Python results are compared with) and the S3 helper.

Shared tables are found in $DAR_TESTDATA, else ../shared/testdata beside the
clone; without them the tests that need them skip loudly, unless
DAR_REQUIRE_TESTDATA=1, where they fail (as the Rust tests do).
"""

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc
import pytest

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "examples" / "data" / "sample"


def _target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))


def _built(env: str, relative: str, build: str) -> Path:
    path = Path(os.environ[env]) if env in os.environ else _target_dir() / "debug" / relative
    if not path.is_file():
        pytest.fail(f"{path} not found: run `{build}` first, or set {env}")
    return path


@pytest.fixture(scope="session")
def testdata() -> Path:
    root = Path(os.environ.get("DAR_TESTDATA", REPO.parent / "shared" / "testdata"))
    if not root.is_dir():
        message = f"shared test data not found at {root} (set DAR_TESTDATA)"
        if os.environ.get("DAR_REQUIRE_TESTDATA") == "1":
            pytest.fail(message + " and DAR_REQUIRE_TESTDATA=1")
        print(f"SKIPPED: {message}", file=sys.stderr)
        pytest.skip(message)
    return root


@pytest.fixture(scope="session")
def dar_bin() -> Path:
    return _built("DAR_BIN", "dar", "cargo build -p dar-cli")


@pytest.fixture(scope="session")
def s3_server_bin() -> Path:
    return _built(
        "DAR_S3_SERVER", "examples/s3_server", "cargo build -p dar-io --example s3_server"
    )


@pytest.fixture(scope="session")
def store_server_bin() -> Path:
    return _built(
        "DAR_STORE_SERVER", "examples/store_server", "cargo build -p dar-io --example store_server"
    )


def run_dar(dar_bin: Path, *args: str) -> subprocess.CompletedProcess:
    """Runs the `dar` command; stdout as bytes."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "AZURE_", "GOOGLE_", "AZURITE_"))
    }
    return subprocess.run([str(dar_bin), *args], capture_output=True, env=env, timeout=300)


def cli_rows(dar_bin: Path, table: str, *args: str) -> pa.Table:
    """The rows `dar scan --format arrow` writes for `table`."""
    out = run_dar(dar_bin, "scan", table, "--format", "arrow", *args)
    assert out.returncode == 0, out.stderr.decode()
    return pa.ipc.open_stream(out.stdout).read_all()


def cli_error(dar_bin: Path, *args: str) -> str:
    """The one-line message `dar` prints for a failing command."""
    out = run_dar(dar_bin, *args)
    assert out.returncode == 1, out
    err = out.stderr.decode()
    assert err.startswith("dar: error: ") and err.count("\n") == 1, err
    return err[len("dar: error: ") :].rstrip("\n")


def thrift_varint(n: int) -> bytes:
    """`n` as a Thrift compact-protocol varint (for hand-made Parquet footers)."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def thrift_zigzag(n: int) -> bytes:
    """`n` zigzag-encoded as a Thrift compact-protocol varint."""
    return thrift_varint((n << 1) ^ (n >> 63))


def sorted_rows(table: pa.Table) -> list:
    """The rows as dicts in a canonical order (row order is not part of a scan's contract)."""
    rows = table.to_pylist()
    return sorted(rows, key=repr)


def write_delta_table(root: Path, columns: list, files: list) -> Path:
    """Writes a small Delta table by hand: `columns` is the declared schema
    as (name, Delta type, nullable) triples, `files` the data files as
    (add path, pyarrow.Table or None) pairs. A path that is absolute or a
    URI is written to the log as it is; a relative one names a file
    written under `root` (None: no file is written)."""
    import json

    import pyarrow.parquet as pq

    log = root / "_delta_log"
    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [
            {"name": n, "type": t, "nullable": nullable, "metadata": {}}
            for n, t, nullable in columns
        ],
    }
    actions = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "00000000-0000-0000-0000-000000000001",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": {},
                "createdTime": 0,
            }
        },
    ]
    for path, data in files:
        local = Path(path) if Path(path).is_absolute() else root / path
        size = 0
        if data is not None:
            pq.write_table(data, local)
            size = local.stat().st_size
        elif local.is_file():
            size = local.stat().st_size
        actions.append(
            {
                "add": {
                    "path": path,
                    "partitionValues": {},
                    "size": size,
                    "modificationTime": 0,
                    "dataChange": True,
                }
            }
        )
    lines = "".join(json.dumps(a) + "\n" for a in actions)
    (log / "00000000000000000000.json").write_text(lines)
    return root
