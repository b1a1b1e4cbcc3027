//! `dar info`: the JSON report's fields and the text form.

use serde_json::Value;

use crate::{arg, dar, sample};

fn info_json(args: &[&str]) -> Value {
    let out = dar()
        .arg("info")
        .args(args)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), 1, "one JSON object");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn sample_info_json() {
    let s = arg(&sample());
    let v = info_json(&[&s]);
    assert_eq!(v["version"], 7);
    assert_eq!(v["protocol"]["min_reader_version"], 3);
    assert_eq!(v["protocol"]["min_writer_version"], 7);
    assert_eq!(
        v["protocol"]["reader_features"],
        serde_json::json!(["deletionVectors"])
    );
    assert_eq!(v["partition_columns"], serde_json::json!(["day"]));
    assert_eq!(v["column_mapping_mode"], "none");
    assert_eq!(v["files"], 4);
    assert_eq!(v["num_records"], 310);
    assert_eq!(v["deleted_rows"], 10);
    assert_eq!(v["num_rows"], 300);
    assert_eq!(v["num_rows_exact"], true);
    assert_eq!(v["properties"]["delta.enableDeletionVectors"], "true");
    let sizes: u64 = std::fs::read_dir(sample())
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_dir() && e.file_name() != "_delta_log")
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| f.metadata().unwrap().len())
        .sum();
    // Every data file on disk is active except the one removed at version 7.
    assert!(v["total_bytes"].as_u64().unwrap() < sizes);
    let paths: Vec<&str> = v["schema"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "trip_id",
            "pickup_ts",
            "vendor",
            "passengers",
            "distance_km",
            "fare",
            "payment",
            "payment.method",
            "payment.tip",
            "day"
        ]
    );
    assert_eq!(v["schema"][5]["type"], "decimal(8,2)");
    assert!(v["schema"][0].get("physical_name").is_none());

    let v3 = info_json(&[&s, "--version", "3"]);
    assert_eq!(v3["version"], 3);
    assert_eq!(v3["files"], 4);
    assert_eq!(v3["num_rows"], 295);
}

#[test]
fn text_form_names_the_essentials() {
    let out = dar()
        .args(["info", &arg(&sample())])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for want in [
        "version:           7",
        "reader 3 (features: deletionVectors)",
        "partition columns: day",
        "  payment.tip     decimal(6,2)  null",
        "delta.enableDeletionVectors = true",
        "files:             4 (",
        "rows:              300 (exact: 310 in numRecords, 10 deleted by deletion vectors)",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

#[test]
fn column_mapping_shows_physical_names() {
    let Some(t) = dar_testdata::table("kernel/cdf-column-mapping-id-mode") else {
        return;
    };
    let v = info_json(&[&arg(&t)]);
    assert_eq!(v["column_mapping_mode"], "id");
    for c in v["schema"].as_array().unwrap() {
        let physical = c["physical_name"].as_str().unwrap();
        assert!(physical.starts_with("col-"), "{c}");
        assert!(c["field_id"].as_i64().is_some(), "{c}");
    }
}

#[test]
fn rows_are_estimated_when_a_file_has_no_num_records() {
    // Version 5 adds the 01-04 file (70 rows); drop its stats.
    let t = crate::sample_copy();
    let commit = t.path().join("_delta_log/00000000000000000005.json");
    let text = std::fs::read_to_string(&commit).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(add) = v.get_mut("add").and_then(Value::as_object_mut) {
                add.remove("stats");
            }
            v.to_string()
        })
        .collect();
    std::fs::write(&commit, edited.join("\n") + "\n").unwrap();
    let v = info_json(&[&arg(t.path())]);
    assert_eq!(v["num_rows_exact"], false);
    assert_eq!(v["files_without_num_records"], 1);
    assert_eq!(v["num_records"], 240);
    // 240 known rows in the other three files' bytes, scaled to the fourth.
    let rows = v["num_rows"].as_u64().unwrap();
    assert!((280..=330).contains(&rows), "{rows}");
    let text = dar()
        .args(["info", &arg(t.path())])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains(
            "(estimated: 1 of 4 files have no numRecords; 10 deleted by deletion vectors)"
        ),
        "{text}"
    );
}

#[test]
fn timestamps_select_versions() {
    // `commit_timestamp` is the timestamp time travel assigns to the
    // version: here the log files' modification times, monotonized by
    // dar-log (versions 3 and 4, and 6 and 7, share a millisecond on disk).
    // Loading by it, as RFC 3339 or as epoch milliseconds, finds the same
    // version again for every version.
    let s = arg(&sample());
    let mut previous = i64::MIN;
    for v in 0..=7u64 {
        let report = info_json(&[&s, "--version", &v.to_string()]);
        let t = report["commit_timestamp"].as_str().unwrap();
        assert_eq!(info_json(&[&s, "--timestamp", t])["version"], v, "{t}");
        let ms = chrono::DateTime::parse_from_rfc3339(t)
            .unwrap()
            .timestamp_millis();
        assert!(ms > previous, "v{v} at {t} is not after its predecessor");
        previous = ms;
        assert_eq!(
            info_json(&[&s, "--timestamp", &ms.to_string()])["version"],
            v,
            "{ms}"
        );
    }
    // Outside the history is an error, as in Spark.
    dar()
        .args(["info", &s, "--timestamp", "2999-01-01T00:00:00Z"])
        .assert()
        .failure()
        .code(1)
        .stderr(predicates::str::contains("after the table history"));
}

#[test]
fn exact_row_counts_match_a_full_scan() {
    let mut tables = vec![sample()];
    for name in [
        "kernel/table-with-dv-small",
        "kernel/with-short-dv",
        "kernel/cdf-column-mapping-name-mode-3-7",
        "kernel/parsed-stats",
        "dat/multi_partitioned/delta",
    ] {
        let Some(t) = dar_testdata::table(name) else {
            return;
        };
        tables.push(t);
    }
    for t in tables {
        let t = arg(&t);
        let v = info_json(&[&t]);
        assert_eq!(v["num_rows_exact"], true, "{t}");
        let counted = dar()
            .args(["scan", &t, "--format", "null"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let counted: u64 = String::from_utf8(counted).unwrap().trim().parse().unwrap();
        assert_eq!(v["num_rows"].as_u64(), Some(counted), "{t}");
    }
}
