"""N concurrent clients of one query, for `cargo xtask bench --serve`.

Usage: python serve_clients.py SPEC_JSON

SPEC_JSON: {"reader": "dar-serve" (ADBC Flight SQL client of a running
            `dar serve`) | "duckdb" (one connection with the table ATTACHed
            with PIN_SNAPSHOT, a cursor per client) | "delta-rs" (one shared
            DeltaTable, a QueryBuilder per client),
            "clients": N, "queries": Q (timed per client),
            "sql": the query over the table named "t" (peers) or "table"
            (dar-serve), "table": the served table's name,
            "server": "grpc://127.0.0.1:PORT" (dar-serve),
            "uri": the table's URI and "storage": {...} or null (peers),
            "rows": the rows every query must return}

Each client connects (a connection, cursor or QueryBuilder of its own), runs
the query once untimed (the warm query is what is measured: the table is
open, its caches filled), then all clients start together and each runs Q
queries back to back, every batch consumed. The last line on standard
error is `RESULT {"queries", "secs", "qps", "p50", "p95", "p99", "cpu_secs"}`
(latencies in seconds, over every timed query of every client; qps is all
timed queries over the wall time from the start to the last one's end;
cpu_secs is this client process's CPU from the start to the end, the
peers' engine included).
"""

import json
import os
import sys
import threading
import time

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import duckdb_attached, run_reporting  # noqa: E402


def dar_serve_client(spec):
    """A client factory: each call makes one client's query function."""
    import adbc_driver_flightsql.dbapi as flightsql

    def client():
        conn = flightsql.connect(spec["server"])
        cur = conn.cursor()

        def query():
            cur.execute(spec["sql"])
            return cur.fetch_arrow_table().num_rows

        return query, conn

    return client


def duckdb_client(spec):
    # Pinned: the snapshot is read once, as dar serve keeps its table open
    # (unpinned, DuckDB reads the log again for every query).
    con = duckdb_attached(spec, pin=True)

    def client():
        cur = con.cursor()

        def query():
            rows = 0
            for batch in cur.execute(spec["sql"]).fetch_record_batch(8192):
                rows += batch.num_rows
            return rows

        return query, cur

    return client


def delta_rs_client(spec):
    from deltalake import DeltaTable, QueryBuilder

    table = DeltaTable(spec["uri"], storage_options=spec.get("storage") or None)

    def client():
        qb = QueryBuilder().register("t", table)

        def query():
            rows = 0
            for batch in qb.execute(spec["sql"]):
                rows += pa.record_batch(batch).num_rows
            return rows

        return query, qb

    return client


CLIENTS = {"dar-serve": dar_serve_client, "duckdb": duckdb_client, "delta-rs": delta_rs_client}


def percentile(sorted_values, p):
    """The nearest-rank percentile (p in 0..100)."""
    k = max(0, min(len(sorted_values) - 1, int(round(p / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def main():
    spec = json.loads(sys.argv[1])
    n, q = int(spec["clients"]), int(spec["queries"])
    make = CLIENTS[spec["reader"]](spec)
    start = threading.Barrier(n + 1)
    latencies = [[] for _ in range(n)]
    # Each client's timed span (start, end): the run's wall time is from
    # the first start to the last end, whenever this thread gets to run.
    spans = [[0.0, 0.0] for _ in range(n)]
    errors = []
    keep = []

    def run(i):
        try:
            query, handle = make()
            keep.append(handle)
            got = query()
            if got != spec["rows"]:
                raise RuntimeError(f"{got} rows, expected {spec['rows']}")
        except Exception as e:  # reported after the others stop
            errors.append(f"{type(e).__name__}: {e}")
            start.abort()
            return
        try:
            start.wait()
        except threading.BrokenBarrierError:
            return
        spans[i][0] = time.perf_counter()
        for _ in range(q):
            t0 = time.perf_counter()
            got = query()
            latencies[i].append(time.perf_counter() - t0)
            if got != spec["rows"]:
                errors.append(f"{got} rows, expected {spec['rows']}")
                return
        spans[i][1] = time.perf_counter()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    try:
        start.wait()
    except threading.BrokenBarrierError:
        pass
    cpu0 = time.process_time()
    for t in threads:
        t.join()
    cpu = time.process_time() - cpu0
    if errors:
        raise RuntimeError(errors[0])
    secs = max(end for _, end in spans) - min(begin for begin, _ in spans)
    all_latencies = sorted(x for per in latencies for x in per)
    result = {
        "queries": len(all_latencies),
        "secs": secs,
        "qps": len(all_latencies) / secs,
        "p50": percentile(all_latencies, 50),
        "p95": percentile(all_latencies, 95),
        "p99": percentile(all_latencies, 99),
        "cpu_secs": cpu,
    }
    print("RESULT " + json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    run_reporting(main)
