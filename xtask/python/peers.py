"""One measured read by a peer Delta reader, for `cargo xtask bench`.

Usage: python peers.py SPEC_JSON

SPEC_JSON: {"reader": "delta-rs" | "polars" | "duckdb" | "daft" | "dar-polars" (dar's
            module as a lazy Polars frame, `dar.scan_polars`) | "dar-python"
            (`dar.Table` and `Table.scan`),
            "action": "scan" | "files" | "changes" (delta-rs's `load_cdf`,
            from version "changes_from"),
            "uri": table URI, "columns": [...], "filter": SQL text or null,
            "limit": int or null, "verify": bool, "storage": {...} or null}

The timer runs from opening the table to consuming the last Arrow batch
(imports and DuckDB's extension load are excluded). With "session": true
the table is opened once (not timed) and the query runs twice on it: the
result is the second query's, and `"first": {"secs", "cpu_secs"}` times the
first (deltalake: one DeltaTable and one QueryBuilder; DuckDB: the table
ATTACHed; Polars: one LazyFrame; dar: one `dar.Table`). With "verify", every
batch is also written as an Arrow IPC stream to standard output, so the
xtask checks the rows and their checksum; otherwise batches are dropped.
The last line on standard error is `RESULT {"rows": .., "secs": .., "cpu_secs": ..}`.
"""

import json
import os
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

BATCH_ROWS = 8192


def quoted(name):
    return '"' + name.replace('"', '""') + '"'


def select_sql(spec, source):
    cols = ", ".join(quoted(c) for c in spec["columns"])
    sql = f"SELECT {cols} FROM {source}"
    if spec.get("filter"):
        sql += f" WHERE {spec['filter']}"
    if spec.get("limit") is not None:
        sql += f" LIMIT {int(spec['limit'])}"
    return sql


def between(filter_text):
    """(column, lo, hi) of a filter `column BETWEEN lo AND hi` of integers."""
    column, rest = filter_text.split(" BETWEEN ")
    lo, hi = rest.split(" AND ")
    return column.strip(), int(lo), int(hi)


def read_delta_rs(spec):
    from deltalake import DeltaTable, QueryBuilder

    if spec.get("action") == "files":
        def files():
            table = DeltaTable(spec["uri"], storage_options=spec.get("storage") or None)
            actions = pa.table(table.get_add_actions(flatten=True))
            listing = pa.table({"num_records": actions.column("num_records").cast(pa.int64())})
            yield from listing.combine_chunks().to_batches()

        return files

    if spec.get("action") == "count":
        def count():
            # What opening and counting costs delta-rs: its add actions, summed.
            table = DeltaTable(spec["uri"], storage_options=spec.get("storage") or None)
            actions = pa.table(table.get_add_actions(flatten=True))
            records = pc.sum(actions.column("num_records").cast(pa.int64())).as_py() or 0
            if "deletionVector.cardinality" in actions.column_names:
                records -= pc.sum(actions.column("deletionVector.cardinality").cast(pa.int64())).as_py() or 0
            yield pa.record_batch({"files": pa.array([actions.num_rows], pa.int64()),
                                   "rows": pa.array([records], pa.int64())})

        return count

    if spec.get("action") == "plan":
        def plan():
            # What planning a selective scan costs delta-rs: its add actions
            # with their statistics, the files whose [min, max] of the
            # filter's column meets its range (`col BETWEEN lo AND hi`).
            column, lo, hi = between(spec["filter"])
            table = DeltaTable(spec["uri"], storage_options=spec.get("storage") or None)
            actions = pa.table(table.get_add_actions(flatten=True))
            low = actions.column(f"min.{column}")
            high = actions.column(f"max.{column}")
            # A file without statistics for the column is kept.
            keep = pc.or_kleene(
                pc.and_kleene(pc.greater_equal(high, lo), pc.less_equal(low, hi)),
                pc.or_(pc.is_null(low), pc.is_null(high)),
            )
            files = pc.sum(pc.cast(keep, pa.int64())).as_py() or 0
            yield pa.record_batch({"files": pa.array([files], pa.int64())})

        return plan

    if spec.get("action") == "changes":
        def changes():
            table = DeltaTable(spec["uri"], storage_options=spec.get("storage") or None)
            # The columns asked for and the three change columns, as dar
            # returns them (`columns` projects the change columns too).
            cdc_columns = ["_change_type", "_commit_version", "_commit_timestamp"]
            columns = spec["columns"] + [c for c in cdc_columns if c not in spec["columns"]]
            reader = table.load_cdf(starting_version=int(spec["changes_from"]), columns=columns,
                                    predicate=spec.get("filter"))
            yield from pa.RecordBatchReader.from_stream(reader)

        return changes

    def run():
        table = DeltaTable(spec["uri"], storage_options=spec.get("storage") or None)
        result = QueryBuilder().register("t", table).execute(select_sql(spec, "t"))
        for batch in result:
            yield pa.record_batch(batch)

    return run


def polars_batches(frame, spec):
    """The filter, projection and limit of `spec` on a lazy frame, streamed."""
    import polars as pl

    if spec.get("filter"):
        frame = frame.filter(pl.sql_expr(spec["filter"]))
    frame = frame.select(spec["columns"])
    if spec.get("limit") is not None:
        frame = frame.head(int(spec["limit"]))
    for df in frame.collect_batches(chunk_size=BATCH_ROWS):
        for batch in df.to_arrow().to_batches():
            yield batch


def read_polars(spec):
    import polars as pl

    def run():
        frame = pl.scan_delta(spec["uri"], storage_options=spec.get("storage") or None)
        yield from polars_batches(frame, spec)

    return run


def read_dar_polars(spec):
    import dar
    # Imported before the timed span, as `read_polars` does: importing
    # Polars takes 0.1-0.25 s, which was counted against dar-polars alone.
    import polars  # noqa: F401

    def run():
        frame = dar.scan_polars(spec["uri"], storage_options=spec.get("storage") or None)
        yield from polars_batches(frame, spec)

    return run


def duckdb_connection(spec):
    """A DuckDB connection with the delta extension loaded (and S3
    credentials when the spec has storage options)."""
    import duckdb
    import duckdb_ext

    con = duckdb.connect()
    ext_dir = os.path.join(list(duckdb_ext.__path__)[0], "extensions")
    con.execute("SET autoinstall_known_extensions=false")
    con.execute("SET autoload_known_extensions=false")
    con.execute(f"SET extension_directory='{ext_dir}'")
    con.execute("LOAD delta")
    storage = spec.get("storage")
    if storage:
        con.execute("LOAD httpfs")
        endpoint = storage["aws_endpoint"].split("://", 1)[1]
        con.execute(
            "CREATE SECRET bench (TYPE S3, KEY_ID '{}', SECRET '{}', REGION '{}', "
            "ENDPOINT '{}', URL_STYLE 'path', USE_SSL false)".format(
                storage["aws_access_key_id"], storage["aws_secret_access_key"],
                storage["aws_region"], endpoint)
        )
    return con


def read_duckdb(spec):
    con = duckdb_connection(spec)

    def run():
        uri = spec["uri"].replace("'", "''")
        reader = con.execute(select_sql(spec, f"delta_scan('{uri}')")).fetch_record_batch(BATCH_ROWS)
        for batch in reader:
            yield batch

    return run


def read_daft(spec):
    import daft

    io_config = None
    storage = spec.get("storage")
    if storage:
        from daft.io import IOConfig, S3Config

        io_config = IOConfig(s3=S3Config(
            endpoint_url=storage["aws_endpoint"], region_name=storage["aws_region"],
            key_id=storage["aws_access_key_id"], access_key=storage["aws_secret_access_key"],
            use_ssl=False, force_virtual_addressing=False))

    def run():
        df = daft.read_deltalake(spec["uri"], io_config=io_config)
        if spec.get("filter"):
            df = df.where(daft.sql_expr(spec["filter"]))
        df = df.select(*spec["columns"])
        if spec.get("limit") is not None:
            df = df.limit(int(spec["limit"]))
        for batch in df.to_arrow_iter():
            yield batch

    return run


def session_delta_rs(spec):
    from deltalake import DeltaTable, QueryBuilder

    table = DeltaTable(spec["uri"], storage_options=spec.get("storage") or None)
    qb = QueryBuilder().register("t", table)

    def query():
        for batch in qb.execute(select_sql(spec, "t")):
            yield pa.record_batch(batch)

    return query


def session_polars(spec):
    import polars as pl

    frame = pl.scan_delta(spec["uri"], storage_options=spec.get("storage") or None)
    return lambda: polars_batches(frame, spec)


def session_dar(spec):
    import dar

    table = dar.Table(spec["uri"], storage_options=spec.get("storage") or None)

    def query():
        # Strings as views, as deltalake's QueryBuilder and Polars hand
        # them out (pyarrow takes them).
        scan = table.scan(columns=spec["columns"], filter=spec.get("filter"), limit=spec.get("limit"),
                          view_types=True)
        yield from pa.RecordBatchReader.from_stream(scan)

    return query


def duckdb_attached(spec, pin=False):
    """A DuckDB connection with the table ATTACHed as `t` (with
    PIN_SNAPSHOT when `pin`: the snapshot read once, not per query)."""
    con = duckdb_connection(spec)
    uri = spec["uri"].replace("'", "''")
    options = "TYPE delta, PIN_SNAPSHOT" if pin else "TYPE delta"
    con.execute(f"ATTACH '{uri}' AS t ({options})")
    return con


def session_duckdb(spec):
    con = duckdb_attached(spec)

    def query():
        yield from con.execute(select_sql(spec, "t")).fetch_record_batch(BATCH_ROWS)

    return query


SESSIONS = {"delta-rs": session_delta_rs, "polars": session_polars, "duckdb": session_duckdb,
            "dar-python": session_dar}


def read_dar_python(spec):
    query = None

    def run():
        # Opened inside the timed span, as every reader's table.
        nonlocal query
        query = session_dar(spec)
        yield from query()

    return run


READERS = {"delta-rs": read_delta_rs, "polars": read_polars, "duckdb": read_duckdb, "daft": read_daft,
           "dar-polars": read_dar_polars, "dar-python": read_dar_python}


def main():
    spec = json.loads(sys.argv[1])
    if spec.get("action") == "plan" and spec["reader"] != "delta-rs":
        raise NotImplementedError(f"{spec['reader']} has no API that plans a Delta scan's files")
    if spec.get("action") == "count" and spec["reader"] != "delta-rs":
        raise NotImplementedError(f"{spec['reader']} has no API that counts a Delta table from its log")
    if spec.get("action") == "files" and spec["reader"] != "delta-rs":
        raise NotImplementedError(f"{spec['reader']} has no API that lists a Delta table's files")
    if spec.get("action") == "changes" and spec["reader"] != "delta-rs":
        raise NotImplementedError(f"{spec['reader']} has no API that reads a change data feed")
    if spec["uri"].startswith(("az://", "gs://")) and spec["reader"] in ("duckdb", "daft"):
        # delta-rs and Polars take object_store's options, as dar does;
        # DuckDB's azure extension is not among the pinned peers, and
        # neither reader is given an emulator endpoint here.
        raise NotImplementedError(f"the bench has no Azure or GCS emulator configuration for {spec['reader']}")
    first = None
    if spec.get("session"):
        if spec["reader"] not in SESSIONS:
            raise NotImplementedError(f"{spec['reader']} has no session mode in the bench")
        run = SESSIONS[spec["reader"]](spec)
        cpu0, t0 = time.process_time(), time.perf_counter()
        for _ in run():
            pass
        first = {"secs": time.perf_counter() - t0, "cpu_secs": time.process_time() - cpu0}
    else:
        run = READERS[spec["reader"]](spec)
    writer = None
    rows = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    for batch in run():
        rows += batch.num_rows
        if spec.get("verify"):
            if writer is None:
                writer = pa.ipc.new_stream(sys.stdout.buffer, batch.schema)
            writer.write_batch(batch)
    secs, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if writer is not None:
        writer.close()
    sys.stdout.flush()
    result = {"rows": rows, "secs": secs, "cpu_secs": cpu}
    if first is not None:
        result["first"] = first
    print("RESULT " + json.dumps(result), file=sys.stderr)


def run_reporting(main):
    """Runs `main`, then exits: 3 with one `ERROR ...` line on standard
    error (the text the xtask reports the reader failing with) if it
    raised, else 0."""
    try:
        main()
    except Exception as e:
        print("ERROR " + (type(e).__name__ + ": " + str(e)).replace("\n", " ")[:2000], file=sys.stderr)
        sys.stderr.flush()
        os._exit(3)
    # Every batch is consumed and reported: skip the interpreter's teardown,
    # where a reader's background threads can crash the process (Daft over
    # S3 was seen to die from a signal after its result).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    run_reporting(main)
