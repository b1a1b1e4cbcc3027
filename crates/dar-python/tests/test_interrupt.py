"""Ctrl-C cancels a running scan, whichever way it is consumed; other
Python threads run while a scan works (the GIL is released).

Each case runs in a child process that sends itself SIGINT as soon as the
scan has output its first rows, of a table written here (2,000,000 rows,
read 64 rows a batch: seconds of work in a debug build, a few tenths of a
second in release, against the millisecond the signal takes to land), and
reports how the scan ended.
"""

import json
import os
import subprocess
import sys
import threading
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dar

FILES, ROWS_PER_FILE = 4, 500_000

CHILD = r"""
import json, os, signal, sys, threading, time
import polars as pl
import pyarrow as pa
import dar

path, mode = sys.argv[1], sys.argv[2]
scan = dar.Table(path).scan(batch_size=64, filter="id >= 0" if mode == "count" else None)

def interrupt():
    # Once the scan is under way (rows are out), whatever the build's speed.
    deadline = time.monotonic() + 60
    while scan.metrics()["rows_output"] == 0 and time.monotonic() < deadline:
        time.sleep(0.0005)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
outcome = {}
started = time.monotonic()
try:
    try:
        if mode == "to_table":
            scan.to_table()
        elif mode == "count":
            scan.count()
        elif mode == "reader":
            scan.to_reader().read_all()
        elif mode == "stream":
            pa.table(scan)
        elif mode == "polars":
            pl.DataFrame(scan)
        outcome["result"] = "finished"
    except KeyboardInterrupt:
        outcome["result"] = "KeyboardInterrupt"
    except Exception as e:
        # A C-stream consumer may raise its own error first; the interrupt
        # is re-armed and fires at once, maybe before this line.
        outcome["result"] = type(e).__name__
        outcome["message"] = str(e)
        time.sleep(5)
except KeyboardInterrupt as k:
    outcome["then"] = "KeyboardInterrupt"
    if "result" not in outcome and k.__context__ is not None:
        outcome["result"] = type(k.__context__).__name__
        outcome["message"] = str(k.__context__)
outcome["rows_output"] = scan.metrics()["rows_output"]
outcome["seconds"] = time.monotonic() - started
print(json.dumps(outcome))
"""


@pytest.fixture(scope="module")
def big_table(tmp_path_factory):
    """A plain Delta table of FILES Parquet files, ids 0.. in order."""
    root = tmp_path_factory.mktemp("big")
    (root / "_delta_log").mkdir()
    schema = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "text", "type": "string", "nullable": True, "metadata": {}},
        ],
    }
    actions = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": str(uuid.uuid4()),
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": {},
            }
        },
    ]
    for i in range(FILES):
        ids = pa.array(range(i * ROWS_PER_FILE, (i + 1) * ROWS_PER_FILE), pa.int64())
        name = f"part-{i:05d}.parquet"
        pq.write_table(pa.table({"id": ids, "text": ids.cast(pa.string())}), root / name)
        actions.append(
            {
                "add": {
                    "path": name,
                    "partitionValues": {},
                    "size": (root / name).stat().st_size,
                    "modificationTime": 0,
                    "dataChange": True,
                    "stats": json.dumps({"numRecords": ROWS_PER_FILE}),
                }
            }
        )
    (root / "_delta_log" / "00000000000000000000.json").write_text(
        "\n".join(json.dumps(a) for a in actions) + "\n"
    )
    return root


@pytest.mark.parametrize("mode", ["to_table", "count", "reader", "stream", "polars"])
def test_ctrl_c_cancels_the_scan(big_table, mode):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(big_table), mode],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    outcome = json.loads(out.stdout)
    assert outcome["rows_output"] < FILES * ROWS_PER_FILE, outcome
    if outcome["result"] != "KeyboardInterrupt":
        # Through the C stream: the consumer's error says why, then Python
        # raises the KeyboardInterrupt.
        assert "cancelled (KeyboardInterrupt)" in outcome.get("message", ""), outcome
        assert outcome.get("then") == "KeyboardInterrupt", outcome


def test_other_threads_run_while_a_scan_works(big_table):
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    thread = threading.Thread(target=tick)
    # 64 rows a batch: tenths of a second even in release, hundreds of ticks.
    scan = dar.Table(str(big_table)).scan(columns=["id"], batch_size=64)
    thread.start()
    try:
        start = time.monotonic()
        rows = scan.to_table().num_rows
        end = time.monotonic()
    finally:
        done.set()
        thread.join()
    assert rows == FILES * ROWS_PER_FILE
    during = [t for t in ticks if start < t < end]
    # The ticker ran while the scan worked (with the GIL held throughout it
    # could not run at all until the scan returned).
    assert len(during) >= 3, (len(during), end - start)
