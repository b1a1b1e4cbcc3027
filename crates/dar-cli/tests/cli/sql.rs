//! `dar sql`: queries over the sample table by name and through
//! `delta_scan`, every output format, `--explain`, errors, and an `s3://`
//! table on the in-process S3 server.

use assert_cmd::Command;
use dar_io::testing::S3Server;

use crate::{arg, dar, sample};

fn sql(args: &[&str]) -> String {
    let out = dar().arg("sql").args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn trips() -> String {
    format!("trips={}", arg(&sample()))
}

#[test]
fn named_table_as_a_text_table() {
    let out = sql(&[
        "SELECT day, count(*) AS trips FROM trips GROUP BY day ORDER BY day",
        "--table",
        &trips(),
    ]);
    assert_eq!(
        out,
        "\
+------------+-------+
| day        | trips |
+------------+-------+
| 2024-01-01 | 75    |
| 2024-01-02 | 78    |
| 2024-01-03 | 77    |
| 2024-01-04 | 70    |
+------------+-------+
"
    );
}

#[test]
fn the_readme_example() {
    let out = sql(&[
        "SELECT day, count(*) AS trips, round(avg(fare), 2) AS avg_fare FROM trips WHERE vendor LIKE 'Metro%' GROUP BY day ORDER BY day",
        "--table",
        &trips(),
    ]);
    assert_eq!(
        out,
        "\
+------------+-------+----------+
| day        | trips | avg_fare |
+------------+-------+----------+
| 2024-01-01 | 17    | 33.20    |
| 2024-01-02 | 24    | 30.45    |
| 2024-01-03 | 23    | 35.75    |
| 2024-01-04 | 15    | 22.88    |
+------------+-------+----------+
"
    );
}

#[test]
fn delta_scan_in_the_query_as_csv() {
    let q = format!(
        "SELECT trip_id, fare FROM delta_scan('{}') WHERE trip_id BETWEEN 165 AND 175 ORDER BY trip_id",
        arg(&sample())
    );
    let out = sql(&[&q, "--format", "csv"]);
    assert_eq!(
        out,
        "trip_id,fare\n165,42.97\n166,9.44\n167,23.97\n168,32.91\n169,37.73\n170,51.39\n174,31.58\n175,51.80\n"
    );
    // Time travel: version 1 had two days of 120 trips each.
    let q = format!(
        "SELECT count(*) AS n FROM delta_scan('{}', 1)",
        arg(&sample())
    );
    assert_eq!(sql(&[&q, "--format", "csv"]), "n\n240\n");
}

#[test]
fn json_null_arrow_and_parquet_outputs() {
    let q = "SELECT trip_id, vendor, payment FROM trips WHERE trip_id < 3 ORDER BY trip_id";
    let out = sql(&[q, "--table", &trips(), "--format", "json"]);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.starts_with("{\"trip_id\":1,\"vendor\":"), "{out}");
    assert_eq!(
        sql(&[
            "SELECT * FROM trips",
            "--table",
            &trips(),
            "--format",
            "null"
        ]),
        "300\n"
    );

    let arrow = dar()
        .args(["sql", q, "--table", &trips(), "--format", "arrow"])
        .assert()
        .success();
    let bytes = arrow.get_output().stdout.clone();
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 2);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.parquet");
    sql(&[
        q,
        "--table",
        &trips(),
        "--format",
        "parquet",
        "--output",
        &arg(&file),
    ]);
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(&file).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 2);
}

#[test]
fn explain_shows_what_each_scan_keeps() {
    let out = sql(&[
        "SELECT trip_id FROM trips WHERE trip_id BETWEEN 165 AND 175",
        "--table",
        &trips(),
        "--explain",
    ]);
    assert!(out.contains("DeltaScanExec: table="), "{out}");
    assert!(out.contains("files=1 of 4 (3 pruned"), "{out}");
    assert!(out.contains("row_groups=1 of 2, pages=2 of 4"), "{out}");
    assert!(!out.contains("FilterExec"), "{out}");
}

/// Runs `args`, asserts a one-line failure with status 1, returns it.
fn fails(args: &[&str]) -> String {
    let out = dar().arg("sql").args(args).assert().failure().code(1);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.starts_with("dar: error: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn bad_queries_are_one_line_errors() {
    let t = trips();
    let err = fails(&["SELEKT 1", "--table", &t]);
    assert!(err.contains("query failed: SQL error"), "{err}");
    let err = fails(&["SELECT * FROM nope", "--table", &t]);
    assert!(err.contains("nope") && err.contains("not found"), "{err}");
    let err = fails(&["SELECT fair FROM trips", "--table", &t]);
    assert!(err.contains("fair"), "{err}");
    let err = fails(&[
        "SELECT trip_id FROM trips WHERE vendor + 1 > now()",
        "--table",
        &t,
    ]);
    assert!(err.contains("query failed"), "{err}");
    let err = fails(&["SELECT 1", "--table", "no-equals-sign"]);
    assert!(
        err.contains("invalid --table: entry 1 is not NAME=URI"),
        "{err}"
    );
    let err = fails(&["SELECT * FROM delta_scan('/no/such/table')"]);
    assert!(err.contains("/no/such/table"), "{err}");
    let err = fails(&["SELECT 1", "--format", "parquet"]);
    assert!(err.contains("parquet needs --output"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_tables_by_name_and_by_delta_scan() {
    let server = S3Server::start().await.unwrap();
    server.create_bucket("sql-bucket").await.unwrap();
    server
        .upload_dir(&sample(), "sql-bucket", "sample")
        .unwrap();
    let mut cmd: Command = dar();
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    cmd.args([
        "sql",
        "SELECT count(*) AS n FROM trips UNION ALL SELECT count(*) FROM delta_scan('s3://sql-bucket/sample', 1)",
        "--table",
        "trips=s3://sql-bucket/sample",
        "--format",
        "csv",
    ]);
    for (k, v) in server.storage_options().iter() {
        cmd.args(["--storage-option", &format!("{k}={v}")]);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines, ["240", "300", "n"]);
}

/// `dar sql` reads: DDL, DML, `COPY` and `SET` are refused in one line, and
/// nothing is written (a `COPY` into the table's log would add a commit);
/// queries, `EXPLAIN` and `DESCRIBE` run.
#[test]
fn writes_and_catalog_changes_are_refused() {
    let copy = crate::sample_copy();
    let table = format!("trips={}", arg(copy.path()));
    let log = copy.path().join("_delta_log");
    let commits = || std::fs::read_dir(&log).unwrap().count();
    let before = commits();
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("x.json");
    let next = log.join("00000000000000000099.json");
    for (query, what) in [
        (
            format!(
                "COPY (SELECT * FROM trips) TO '{}' STORED AS JSON",
                next.display()
            ),
            "COPY refused",
        ),
        (
            format!("COPY (SELECT 1 AS a) TO '{}'", target.display()),
            "COPY refused",
        ),
        (
            "INSERT INTO trips SELECT * FROM trips".to_string(),
            "DML (Insert Into) refused",
        ),
        (
            "CREATE VIEW v AS SELECT 1".to_string(),
            "DDL (CreateView) refused",
        ),
        (
            format!(
                "CREATE EXTERNAL TABLE e STORED AS DELTA LOCATION '{}'",
                arg(copy.path())
            ),
            "DDL (CreateExternalTable) refused",
        ),
        (
            "SET datafusion.execution.batch_size = 1".to_string(),
            "statement (SetVariable) refused",
        ),
    ] {
        let err = fails(&[&query, "--table", &table]);
        assert!(
            err.contains(what) && err.contains("only reads tables"),
            "{query}: {err}"
        );
    }
    assert_eq!(commits(), before);
    assert!(!next.exists() && !target.exists());
    let described = sql(&["DESCRIBE trips", "--table", &table, "--format", "csv"]);
    assert!(described.contains("trip_id,Int64"), "{described}");
    let explained = sql(&["EXPLAIN SELECT count(*) FROM trips", "--table", &table]);
    assert!(explained.contains("physical_plan"), "{explained}");
}

/// Long and deep expressions get rows or one line, never a stack overflow
/// that kills the process.
#[test]
fn long_chains_run_and_deep_nesting_is_one_line() {
    let t = trips();
    let ors: Vec<String> = (0..4000).map(|i| format!("trip_id = {i}")).collect();
    let q = format!("SELECT count(*) AS n FROM trips WHERE {}", ors.join(" OR "));
    assert_eq!(sql(&[&q, "--table", &t, "--format", "csv"]), "n\n300\n");
    let out = sql(&[&q, "--table", &t, "--explain"]);
    assert!(out.contains("DeltaScanExec"), "{out}");
    let sum = vec!["1"; 4000].join("+");
    let err = fails(&[&format!("SELECT {sum} AS s")]);
    assert!(err.contains("deeper than 64 levels"), "{err}");
    let deep = format!(
        "SELECT count(*) FROM trips WHERE {}trip_id > 1{}",
        "(".repeat(3000),
        ")".repeat(3000)
    );
    let err = fails(&[&deep, "--table", &t]);
    assert!(err.contains("RecursionLimitExceeded"), "{err}");
    let nots = format!(
        "SELECT count(*) FROM trips WHERE {}trip_id > 1",
        "NOT ".repeat(3000)
    );
    let err = fails(&[&nots, "--table", &t]);
    assert!(err.contains("query failed: SQL error"), "{err}");
}

/// `--output` of a query that fails while running leaves the file that was
/// there as it was (rows go to a temporary file renamed at the end), and a
/// path inside a registered table is refused.
#[test]
fn output_file_changes_only_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.csv");
    std::fs::write(&file, "old\n").unwrap();
    let out = dar()
        .args([
            "sql",
            "SELECT CAST(CAST(trip_id AS VARCHAR) || 'x' AS INT) AS n FROM trips",
            "--table",
            &trips(),
            "--format",
            "csv",
            "--output",
            &arg(&file),
        ])
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("cast") || err.contains("Cast"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");

    sql(&[
        "SELECT count(*) AS n FROM trips",
        "--table",
        &trips(),
        "--format",
        "csv",
        "--output",
        &arg(&file),
    ]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "n\n300\n");

    let table = crate::sample_copy();
    let inside = table
        .path()
        .join("_delta_log")
        .join("00000000000000000099.json");
    let out = dar()
        .args([
            "sql",
            "SELECT 1",
            "--table",
            &format!("t={}", arg(table.path())),
            "--format",
            "json",
            "--output",
            &arg(&inside),
        ])
        .assert()
        .code(1);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("inside the table being read"), "{err}");
    assert!(!inside.exists());
}

/// The statistics of the columns a query's filters name decode with the
/// checkpoint's counts while its tables open (a table by `--table` and one
/// read by `delta_scan`): its plan parses none again, and prunes the same.
/// Without that, the plan parses `id`'s statistics (the counter reads 1).
#[test]
fn a_query_decodes_its_filter_columns_stats_with_the_checkpoint() {
    assert_filter_columns_stats_decoded_at_open(&[]);
}

/// [`a_query_decodes_its_filter_columns_stats_with_the_checkpoint`] with
/// `extra` arguments after each `dar sql` (`--workers`, say): the plan's
/// scan prunes 28 of 30 files and parses no statistics, and the query
/// counts the 4 matching rows.
pub(crate) fn assert_filter_columns_stats_decoded_at_open(extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    // 30 files of two ids each (`id` 0..60), checkpointed.
    let t = crate::write_checkpointed_id_table(dir.path(), 30, 2);
    let filter = "WHERE id >= 10 AND id < 14";
    let named = format!("t={t}");
    let through_function = format!("FROM delta_scan('{}')", t.replace('\'', "''"));
    for (from, table) in [
        ("FROM t", Some(named.as_str())),
        (through_function.as_str(), None),
    ] {
        let run = |query: &str, format: &[&str]| {
            let mut args = vec![query];
            if let Some(table) = table {
                args.extend(["--table", table]);
            }
            args.extend(format);
            args.extend(extra);
            sql(&args)
        };
        let plan = run(
            &format!("EXPLAIN ANALYZE SELECT count(*) AS n {from} {filter}"),
            &[],
        );
        let metric = |name: &str| {
            let at = plan
                .find(&format!("{name}="))
                .unwrap_or_else(|| panic!("{name}: {plan}"));
            let digits: String = plan[at + name.len() + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<u64>().unwrap()
        };
        assert_eq!(metric("files_total"), 30, "{from}: {plan}");
        assert_eq!(metric("files_pruned"), 28, "{from}: {plan}");
        assert_eq!(metric("stats_columns_parsed"), 0, "{from}: {plan}");
        let rows = run(
            &format!("SELECT count(*) AS n {from} {filter}"),
            &["--format", "csv"],
        );
        assert_eq!(rows, "n\n4\n", "{from}");
    }
}
