//! `dar files`: the JSON lines against the snapshot's file index.

use arrow_array::Array;
use serde_json::Value;

use crate::{arg, dar, sample};

async fn check_against_snapshot(table: &str) {
    let out = dar()
        .args(["files", table, "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let t = dar_scan::Table::open(table).await.unwrap();
    let index = t.snapshot().file_index().unwrap();
    assert_eq!(lines.len(), index.len(), "{table}: one line per file");
    for (i, line) in lines.iter().enumerate() {
        assert!(line.is_object());
        assert_eq!(line["path"], index.path.value(i), "{table}");
        assert_eq!(line["size"], index.size.value(i), "{table}");
        let records = &index.stats.num_records;
        if records.is_null(i) {
            assert!(line["num_records"].is_null());
        } else {
            assert_eq!(line["num_records"], records.value(i));
        }
        let pv = line["partition_values"].as_object().unwrap();
        assert_eq!(pv.len(), index.partition_columns.len());
        match index.deletion_vector(i).unwrap() {
            None => assert!(line["deletion_vector"].is_null(), "{table} file {i}"),
            Some(d) => {
                let dv = &line["deletion_vector"];
                assert_eq!(dv["storage_type"], d.storage_type().code().to_string());
                assert_eq!(dv["path_or_inline_dv"], d.path_or_inline_dv());
                assert_eq!(dv["offset"], serde_json::json!(d.offset()));
                assert_eq!(dv["size_in_bytes"], d.size_in_bytes());
                assert_eq!(dv["cardinality"], d.cardinality());
            }
        }
    }
}

#[tokio::test]
async fn json_lines_match_the_snapshot() {
    check_against_snapshot(&arg(&sample())).await;
    for name in [
        "kernel/table-with-dv-small",
        "kernel/with-short-dv",
        "kernel/basic-decimal-table",
        "dat/multi_partitioned/delta",
        "kernel/v2-checkpoints-json-with-sidecars",
    ] {
        let Some(t) = dar_testdata::table(name) else {
            return;
        };
        check_against_snapshot(&arg(&t)).await;
    }
}

#[test]
fn sample_files_exactly() {
    let out = dar()
        .args(["files", &arg(&sample()), "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut by_day: Vec<(String, i64, Option<i64>, Option<String>)> = lines
        .iter()
        .map(|l| {
            (
                l["partition_values"]["day"].as_str().unwrap().to_string(),
                l["num_records"].as_i64().unwrap(),
                l["deletion_vector"]["cardinality"].as_i64(),
                l["deletion_vector"]["storage_type"]
                    .as_str()
                    .map(str::to_string),
            )
        })
        .collect();
    by_day.sort();
    assert_eq!(
        by_day,
        [
            ("2024-01-01".into(), 80, Some(5), Some("u".into())),
            ("2024-01-02".into(), 80, Some(2), Some("u".into())),
            ("2024-01-03".into(), 80, Some(3), Some("i".into())),
            ("2024-01-04".into(), 70, None, None),
        ]
    );
    for l in &lines {
        let path = l["path"].as_str().unwrap();
        assert!(
            path.starts_with("day=2024-01-0"),
            "path as in the log: {path}"
        );
    }
}

#[test]
fn csv_and_table_list_every_file() {
    let s = arg(&sample());
    let csv = dar()
        .args(["files", &s, "--format", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "path,size,modification_time,num_records,day,dv_storage_type,dv_path_or_inline_dv,dv_offset,dv_size_in_bytes,dv_cardinality"
    );
    assert_eq!(csv.lines().count(), 5);
    let table = dar()
        .args(["files", &s])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(table).unwrap();
    assert_eq!(table.matches(".snappy.parquet").count(), 4);
    // Version 2: three files of version 1 and the second 01-01 file.
    let v2 = dar()
        .args(["files", &s, "--format", "json", "--version", "2"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(v2).unwrap().lines().count(), 4);
}

/// `--filter`: the files a scan with the predicate reads, pruned by
/// partition values and by the log's statistics; every format; the same
/// files as the library's plan; a bad filter is the scan's error.
#[tokio::test]
async fn filter_lists_the_files_a_scan_reads() {
    let s = arg(&sample());
    let t = dar_scan::Table::open(&s).await.unwrap();
    for (filter, files) in [
        // Partition value: the 01-04 file alone.
        ("day = DATE '2024-01-04' AND fare > 55", 1),
        // Statistics: trips 165-175 are in one file.
        ("trip_id BETWEEN 165 AND 175", 1),
        ("trip_id > 100000", 0),
        ("fare > 0 OR fare IS NULL", 4),
    ] {
        let out = dar()
            .args(["files", &s, "--format", "json", "--filter", filter])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let mut got: Vec<String> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["path"].as_str().unwrap().to_string()
            })
            .collect();
        got.sort();
        let plan = t.scan().with_predicate_sql(filter).build().unwrap();
        let mut want: Vec<String> = plan.tasks().iter().map(|k| k.log_path.clone()).collect();
        want.sort();
        assert_eq!(got, want, "{filter}");
        assert_eq!(got.len(), files, "{filter}");
        let csv = dar()
            .args(["files", &s, "--format", "csv", "--filter", filter])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        assert_eq!(String::from_utf8(csv).unwrap().lines().count(), files + 1);
    }
    let err = dar()
        .args(["files", &s, "--filter", "fare >"])
        .assert()
        .failure()
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(err.contains("fare >"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let err = dar()
        .args(["files", &s, "--filter", "nosuch = 1"])
        .assert()
        .failure()
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8(err).unwrap().contains("nosuch"));
}
