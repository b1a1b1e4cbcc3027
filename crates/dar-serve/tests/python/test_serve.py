"""`dar serve` through real clients: the ADBC Flight SQL driver from PyPI
(DBAPI cursor, fetch_arrow_table, prepared statements with parameters,
catalog calls), Polars and pandas over ADBC, and pyarrow.flight.

The server is the `dar` binary of this build (DAR_BIN, else
$CARGO_TARGET_DIR/debug/dar), started on 127.0.0.1:0 for each test module.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import adbc_driver_manager
import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.ipc
import pytest

REPO = Path(__file__).resolve().parents[4]
SAMPLE = REPO / "examples" / "data" / "sample"
TOKEN = "python-serve-token-0123456789"


def dar_bin() -> Path:
    env = os.environ.get("DAR_BIN")
    if env:
        return Path(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "debug" / "dar"
    if not path.exists():
        pytest.fail(f"{path} not found: run `cargo build -p dar-cli` or set DAR_BIN")
    return path


class Served:
    """A `dar serve` child process; its Flight SQL URI and admin address."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [str(dar_bin()), "serve", "--listen", "127.0.0.1:0",
             "--admin-listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.tables = []
        self.admin = None
        self.uri = None
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = line.strip()
            if line.startswith("table "):
                self.tables.append(line)
            elif line.startswith("admin on "):
                self.admin = line.removeprefix("admin on ")
            elif line.startswith("listening on "):
                self.uri = "grpc://" + line.removeprefix("listening on ")
                break
        if self.uri is None:
            self.process.kill()
            _, err = self.process.communicate()
            pytest.fail(f"dar serve did not start: {err}")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)

    def get(self, path: str) -> str:
        with urllib.request.urlopen(f"http://{self.admin}{path}", timeout=10) as r:
            return r.read().decode()


@pytest.fixture(scope="module")
def served():
    server = Served("--table", f"trips={SAMPLE}")
    yield server
    assert server.stop() == 0
    # One JSON line per query on standard error.
    logs = [json.loads(line) for line in server.process.stderr if line.startswith("{")]
    assert logs, "no query log lines"
    ok = [q for q in logs if q["outcome"] == "ok"]
    # Each line names the tables the query read, and only those.
    assert ok and all(
        q["tables"] == ([{"name": "trips", "version": 7}] if "trips" in q["sql"] else [])
        for q in ok
    )
    assert any(q["sql"] == "SELECT 1 AS one" for q in ok)
    assert all({"query", "rows", "ms", "requests", "bytes", "cache_hits", "sql"} <= q.keys() for q in logs)
    assert any(q["outcome"] == "error" and "refused" in q["error"] for q in logs)


def direct_scan() -> pa.Table:
    """The sample's rows as `dar scan` gives them (Arrow IPC)."""
    out = subprocess.run(
        [str(dar_bin()), "scan", str(SAMPLE), "--format", "arrow"],
        check=True, capture_output=True,
    ).stdout
    return pyarrow.ipc.open_stream(out).read_all()


def test_startup_prints_each_table_then_the_address(served):
    assert len(served.tables) == 1
    assert served.tables[0].startswith("table trips at version 7 (opened in ")
    assert served.uri.startswith("grpc://127.0.0.1:") and not served.uri.endswith(":0")


def test_dbapi_cursor_and_fetch_arrow_table_match_dar_scan(served):
    with flightsql.connect(served.uri) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) AS n FROM trips WHERE day = DATE '2024-01-03'")
        assert cur.fetchone() == (77,)
        cur.execute("SELECT * FROM trips")
        table = cur.fetch_arrow_table()
    expected = direct_scan()
    assert table.num_rows == expected.num_rows == 300
    assert table.column_names == expected.column_names
    key = [("trip_id", "ascending")]
    assert table.sort_by(key).to_pylist() == expected.sort_by(key).to_pylist()


def test_prepared_statements_take_parameters(served):
    with flightsql.connect(served.uri) as conn, conn.cursor() as cur:
        for day, expected in [(datetime.date(2024, 1, 3), 77), (datetime.date(2024, 1, 1), None)]:
            cur.execute("SELECT count(*) FROM trips WHERE day = ?", parameters=(day,))
            (n,) = cur.fetchone()
            if expected is not None:
                assert n == expected
            else:
                assert n > 0
        cur.execute(
            "SELECT trip_id FROM trips WHERE trip_id >= $1 AND trip_id < $2 ORDER BY trip_id",
            parameters=(10, 13),
        )
        ids = [r[0] for r in cur.fetchall()]
        assert ids == [i for i in range(10, 13) if i in set(direct_scan()["trip_id"].to_pylist())]


def test_catalog_calls_describe_the_served_tables(served):
    with flightsql.connect(served.uri) as conn:
        objects = conn.adbc_get_objects().read_all().to_pylist()
        assert [c["catalog_name"] for c in objects] == ["dar"]
        schemas = objects[0]["catalog_db_schemas"]
        assert [s["db_schema_name"] for s in schemas] == ["public"]
        assert [t["table_name"] for t in schemas[0]["db_schema_tables"]] == ["trips"]
        schema = conn.adbc_get_table_schema("trips")
        assert schema.names == direct_scan().schema.names
        assert conn.adbc_get_table_types() == ["TABLE"]
        info = conn.adbc_get_info()
        assert info["vendor_name"] == "dar serve"


def test_polars_and_pandas_read_through_adbc(served):
    polars = pytest.importorskip("polars")
    pandas = pytest.importorskip("pandas")
    query = "SELECT day, count(*) AS trips FROM trips GROUP BY day ORDER BY day"
    with flightsql.connect(served.uri) as conn:
        frame = polars.read_database(query, connection=conn)
        assert frame["trips"].sum() == 300
        df = pandas.read_sql(query, conn)
        assert int(df["trips"].sum()) == 300


def test_writes_are_refused(served):
    with flightsql.connect(served.uri) as conn, conn.cursor() as cur:
        for sql in ["CREATE TABLE x AS SELECT 1", "INSERT INTO trips SELECT * FROM trips",
                    "COPY trips TO '/tmp/dar-serve-copy.csv'"]:
            with pytest.raises(adbc_driver_manager.Error, match="refused"):
                cur.execute(sql)
    assert not Path("/tmp/dar-serve-copy.csv").exists()


def test_pyarrow_flight_garbage_gets_errors_and_the_server_stays_up(served):
    client = flight.connect(served.uri)
    for ticket in [b"garbage", b"\x0a\x05trunc", b""]:
        with pytest.raises((flight.FlightError, pa.ArrowException)):
            client.do_get(flight.Ticket(ticket)).read_all()
    with pytest.raises((flight.FlightError, pa.ArrowException)):
        client.get_flight_info(flight.FlightDescriptor.for_command(b"\xff\x00"))
    actions = {a.type for a in client.list_actions()}
    assert "CreatePreparedStatement" in actions
    with flightsql.connect(served.uri) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM trips")
        assert cur.fetchone() == (300,)
        # A query reading no table (its log line names none).
        cur.execute("SELECT 1 AS one")
        assert cur.fetchone() == (1,)


def test_admin_endpoints(served):
    health = served.get("/health")
    assert '"name":"trips","version":7' in health
    metrics = served.get("/metrics")
    assert 'dar_serve_table_version{table="trips"} 7' in metrics
    assert 'dar_serve_queries_total{outcome="ok"}' in metrics


def test_a_token_is_required_when_set(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    server = Served("--table", f"trips={SAMPLE}", "--token-file", str(token_file))
    try:
        with flightsql.connect(server.uri) as conn, conn.cursor() as cur:
            with pytest.raises(adbc_driver_manager.Error, match="token"):
                cur.execute("SELECT 1")
        header = {"adbc.flight.sql.authorization_header": f"Bearer {TOKEN}"}
        with flightsql.connect(server.uri, db_kwargs=header) as conn, conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM trips")
            assert cur.fetchone() == (300,)
    finally:
        assert server.stop() == 0


def test_a_deltalake_commit_is_seen_within_the_refresh_interval(tmp_path):
    import deltalake  # in requirements-test.txt: CI fails, not skips, without it
    uri = str(tmp_path / "events")
    deltalake.write_deltalake(uri, pa.table({"id": pa.array(range(5), pa.int64())}))
    server = Served("--table", f"events={uri}", "--refresh-interval", "200ms")
    try:
        with flightsql.connect(server.uri) as conn, conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM events")
            assert cur.fetchone() == (5,)
            deltalake.write_deltalake(
                uri, pa.table({"id": pa.array(range(5, 12), pa.int64())}), mode="append"
            )
            committed = time.monotonic()
            while True:
                cur.execute("SELECT count(*) FROM events")
                if cur.fetchone() == (12,):
                    break
                assert time.monotonic() - committed < 3, "the commit was not seen"
                time.sleep(0.02)
            cur.execute("SELECT count(*) FROM delta_scan('events', 0)")
            assert cur.fetchone() == (5,)
    finally:
        assert server.stop() == 0
    # The log line of the time-travel query names the version it read.
    logs = [json.loads(line) for line in server.process.stderr if line.startswith("{")]
    travelled = [q for q in logs if "delta_scan('events', 0)" in q["sql"]]
    assert travelled and all(
        q["tables"] == [{"name": "events", "version": 0}] for q in travelled
    ), [(q["sql"], q["tables"]) for q in travelled]
    shutil.rmtree(uri, ignore_errors=True)
