//! `dar scan`: output formats against the library, counts, limits,
//! projections, broken pipes.

use std::fs::File;
use std::io::Read;
use std::process::Stdio;

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::{arg, assert_same_rows, dar, library_rows, sample};

fn read_parquet(path: &std::path::Path) -> Vec<RecordBatch> {
    ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

/// Runs `dar scan TABLE --format parquet --output F [extra]` and compares
/// the file with what the library returns.
async fn parquet_round_trip(table: &str, columns: Option<&[&str]>, filter: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.parquet");
    let mut cmd = dar();
    cmd.args(["scan", table, "--format", "parquet", "--output"])
        .arg(&out);
    if let Some(c) = columns {
        cmd.args(["--columns", &c.join(",")]);
    }
    if let Some(f) = filter {
        cmd.args(["--filter", f]);
    }
    match library_rows(table, columns, filter).await {
        Ok(want) => {
            cmd.assert().success().stdout("").stderr("");
            assert_same_rows(table, &read_parquet(&out), &want);
        }
        Err(e) => {
            // A table the library refuses must fail the CLI too, cleanly.
            let assert = cmd.assert().failure().code(1);
            let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
            assert!(err.starts_with("dar: error: "), "{table}: {err}");
            assert!(!err.contains("panicked"), "{table}: {err}");
            assert!(!out.exists(), "{table}: no partial output after {e}");
        }
    }
}

#[tokio::test]
async fn parquet_round_trips_the_sample() {
    let s = arg(&sample());
    parquet_round_trip(&s, None, None).await;
    parquet_round_trip(
        &s,
        Some(&["payment.tip", "trip_id", "day"]),
        Some("pickup_ts >= '2024-01-02T06:00:00Z' AND pickup_ts < '2024-01-02T07:00:00Z'"),
    )
    .await;
    parquet_round_trip(
        &s,
        Some(&["vendor"]),
        Some("day = '2024-01-04' OR fare > 50"),
    )
    .await;
}

#[tokio::test]
async fn parquet_round_trips_shared_tables() {
    for name in [
        "kernel/table-with-dv-small",
        "kernel/with-short-dv",
        "kernel/cdf-column-mapping-name-mode-3-7",
        "kernel/cdf-column-mapping-id-mode",
        "kernel/basic-decimal-table",
        "kernel/data-reader-timestamp_ntz",
        "kernel/type-widening",
        "kernel/parsed-stats",
        "kernel/v2-checkpoints-parquet-with-sidecars",
        "dat/multi_partitioned/delta",
        "dat/basic_partitioned/delta",
    ] {
        let Some(t) = dar_testdata::table(name) else {
            return;
        };
        parquet_round_trip(&arg(&t), None, None).await;
    }
}

#[tokio::test]
async fn arrow_stream_to_stdout_matches_library() {
    let s = arg(&sample());
    let out = dar()
        .args(["scan", &s, "--format", "arrow", "--columns", "trip_id,fare"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(out), None).unwrap();
    let got = reader.collect::<Result<Vec<_>, _>>().unwrap();
    let want = library_rows(&s, Some(&["trip_id", "fare"]), None)
        .await
        .unwrap();
    assert_same_rows("arrow", &got, &want);
}

fn stdout_of(args: &[&str]) -> String {
    String::from_utf8(
        dar()
            .args(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap()
}

#[test]
fn null_format_counts_rows() {
    let s = arg(&sample());
    // 310 rows written, 10 deleted by deletion vectors.
    assert_eq!(stdout_of(&["scan", &s, "--format", "null"]), "300\n");
    // Before the deletes of version 3.
    assert_eq!(
        stdout_of(&["scan", &s, "--format", "null", "--version", "2"]),
        "300\n"
    );
    assert_eq!(
        stdout_of(&["scan", &s, "--format", "null", "--version", "3"]),
        "295\n"
    );
    assert_eq!(
        stdout_of(&["scan", &s, "--format", "null", "--filter", "trip_id < 5"]),
        "3\n"
    );
    assert_eq!(
        stdout_of(&[
            "scan",
            &s,
            "--format",
            "null",
            "--filter",
            "day = '2024-01-04'"
        ]),
        "70\n"
    );
    if let Some(t) = dar_testdata::table("kernel/table-with-dv-small") {
        assert_eq!(stdout_of(&["scan", &arg(&t), "--format", "null"]), "8\n");
    }
}

#[test]
fn limit_caps_rows_in_every_format() {
    let s = arg(&sample());
    assert_eq!(
        stdout_of(&["scan", &s, "--format", "null", "--limit", "7"]),
        "7\n"
    );
    let json = stdout_of(&["scan", &s, "--format", "json", "--limit", "7"]);
    assert_eq!(json.lines().count(), 7);
    let csv = stdout_of(&["scan", &s, "--format", "csv", "--limit", "7"]);
    assert_eq!(csv.lines().count(), 8, "header + 7 rows");
    assert_eq!(
        stdout_of(&["scan", &s, "--format", "null", "--limit", "0"]),
        "0\n"
    );
}

#[test]
fn columns_keep_the_requested_order() {
    let s = arg(&sample());
    let csv = stdout_of(&[
        "scan",
        &s,
        "--format",
        "csv",
        "--columns",
        "fare, trip_id,payment.method",
        "--limit",
        "2",
    ]);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("fare,trip_id,payment.method"));
    assert_eq!(lines.next(), Some("20.58,1,card"));
    // Whole structs are flattened into dotted CSV columns.
    let csv = stdout_of(&[
        "scan",
        &s,
        "--format",
        "csv",
        "--columns",
        "payment",
        "--limit",
        "1",
    ]);
    assert_eq!(csv.lines().next(), Some("payment.method,payment.tip"));
    let table = stdout_of(&["scan", &s, "--columns", "day,trip_id", "--limit", "1"]);
    let header = table.lines().nth(1).unwrap();
    assert!(header.find("day").unwrap() < header.find("trip_id").unwrap());
}

#[test]
fn json_lines_are_one_object_per_row() {
    let s = arg(&sample());
    let json = stdout_of(&["scan", &s, "--format", "json", "--filter", "trip_id <= 3"]);
    let rows: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["trip_id"], 1);
    assert_eq!(rows[0]["payment"]["method"], "card");
    assert_eq!(rows[0]["day"], "2024-01-01");
    // Nulls are written, not dropped.
    assert!(rows[0].as_object().unwrap().contains_key("passengers"));
}

#[test]
fn stats_go_to_stderr() {
    let s = arg(&sample());
    let assert = dar()
        .args([
            "scan",
            &s,
            "--filter",
            "pickup_ts >= '2024-01-02T06:00:00Z' AND pickup_ts < '2024-01-02T07:00:00Z'",
            "--format",
            "null",
            "--stats",
        ])
        .assert()
        .success()
        .stdout("9\n");
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    for want in [
        "files:      4 in snapshot, 3 pruned by partition values and stats, 1 read",
        "row groups: 2 in files read, 1 pruned",
        "pages:      4 examined, 3 pruned (30 rows skipped)",
        "1 deleted by deletion vectors",
        "9 returned",
        "io (log):",
        "io (scan):",
        "time:       open",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}

#[test]
fn output_file_gets_the_rows_and_stdout_stays_empty() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.csv");
    dar()
        .args(["scan", &arg(&sample()), "--format", "csv", "--output"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 301);
}

#[test]
fn closed_stdout_exits_quietly() {
    let bin = assert_cmd::cargo::cargo_bin("dar");
    let mut child = std::process::Command::new(bin)
        .args(["scan", &arg(&sample()), "--format", "csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before dar writes anything (as `| head -0`).
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "status {status:?}, stderr {err}");
    assert_eq!(err, "");
}

/// `dar scan --filter` parses the filter's column stats while the table
/// opens, with the checkpoint's counts: the scan reads no checkpoint byte
/// again, and the report still counts the column as parsed for the scan.
#[test]
fn a_filtered_scan_decodes_its_stats_with_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    // 30 files of two ids each (`id` 0..60), checkpointed.
    let t = crate::write_checkpointed_id_table(dir.path(), 30, 2);
    let filter = "id >= 10 AND id < 14";
    let assert = dar()
        .args([
            "scan", &t, "--filter", filter, "--format", "null", "--stats",
        ])
        .assert()
        .success()
        .stdout("4\n");
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(err.contains("30 in snapshot, 28 pruned"), "{err}");
    assert!(
        err.contains("stats of 1 column parsed for this scan"),
        "{err}"
    );
    let scan_io = err.lines().find(|l| l.contains("io (scan):")).unwrap();
    assert!(!scan_io.contains("checkpoint"), "{scan_io}");
    let log_io = err.lines().find(|l| l.contains("io (log):")).unwrap();
    assert!(log_io.contains("checkpoint"), "{log_io}");
    let files = dar()
        .args(["files", &t, "--filter", filter, "--format", "csv"])
        .assert()
        .success();
    let listed = String::from_utf8(files.get_output().stdout.clone()).unwrap();
    assert_eq!(listed.lines().count(), 1 + 2, "{listed}");
}
