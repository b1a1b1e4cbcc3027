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

/// A hand-written table of one long column `x` (rows 1, 2, 3 in one file)
/// with `protocol` as its protocol action.
fn hand_table(protocol: Value) -> tempfile::TempDir {
    use arrow_array::{Int64Array, RecordBatch};
    use dar_testkit::HandTable;
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let batch = RecordBatch::try_from_iter([(
        "x",
        std::sync::Arc::new(Int64Array::from(vec![1i64, 2, 3])) as _,
    )])
    .unwrap();
    let size = t.write_parquet("part-0.parquet", &batch).unwrap();
    t.commit(&[
        protocol,
        HandTable::metadata(
            serde_json::json!([HandTable::field(
                "x",
                serde_json::json!("long"),
                serde_json::json!({})
            )]),
            &[],
            serde_json::json!({}),
        ),
        HandTable::add(
            "part-0.parquet",
            size,
            serde_json::json!({}),
            Some(serde_json::json!({"numRecords": 3})),
        ),
    ])
    .unwrap();
    dir
}

fn protocol_v(rv: i32, wv: i32, readers: Option<&[&str]>, writers: Option<&[&str]>) -> Value {
    let mut p = serde_json::json!({"minReaderVersion": rv, "minWriterVersion": wv});
    if let Some(r) = readers {
        p["readerFeatures"] = serde_json::json!(r);
    }
    if let Some(w) = writers {
        p["writerFeatures"] = serde_json::json!(w);
    }
    serde_json::json!({ "protocol": p })
}

/// `(name, kind, source, dar)` of every feature in a `dar info --json` report.
fn features(v: &Value) -> Vec<(String, String, String, String)> {
    v["protocol"]["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert!(!f["meaning"].as_str().unwrap().is_empty(), "{f}");
            let s = |k: &str| f[k].as_str().unwrap().to_string();
            (s("name"), s("kind"), s("source"), s("dar"))
        })
        .collect()
}

fn t4(a: &str, b: &str, c: &str, d: &str) -> (String, String, String, String) {
    (a.into(), b.into(), c.into(), d.into())
}

/// What `dar info` says dar reads is what `dar scan` does: the verdict
/// "reads" goes with a scan of the table's 3 rows, every refusal with a
/// scan that fails naming the first feature (or version) the report names.
fn info_agrees_with_scan(dir: &std::path::Path) -> Value {
    let t = arg(dir);
    let v = info_json(&[&t]);
    let scan = dar()
        .args(["scan", &t, "--format", "null"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&scan.stderr).to_string();
    if v["protocol"]["dar_reads"] == true {
        assert!(scan.status.success(), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&scan.stdout).trim(), "3");
        assert_eq!(v["protocol"]["verdict"], "dar reads this table exactly");
        assert_eq!(v["protocol"]["refused"], serde_json::json!([]));
        assert_eq!(v["num_rows"], 3);
    } else {
        assert!(!scan.status.success(), "a refused table scanned");
        let verdict = v["protocol"]["verdict"].as_str().unwrap();
        assert!(
            verdict.starts_with("dar cannot read this table: "),
            "{verdict}"
        );
        match v["protocol"]["refused"][0].as_str() {
            Some(first) => {
                assert!(verdict.contains(first), "{verdict}");
                assert!(
                    stderr.contains(&format!("unsupported reader feature '{first}'")),
                    "{stderr}"
                );
            }
            None => assert!(stderr.contains("unsupported minReaderVersion"), "{stderr}"),
        }
        // Nothing is made up about a table dar does not read.
        assert_eq!(v["files"], Value::Null);
        assert_eq!(v["schema"], Value::Null);
        assert_eq!(v["num_rows"], Value::Null);
        assert_eq!(v["num_rows_unknown_because"], verdict);
        assert_eq!(v["id"], "hand-written");
    }
    v
}

#[test]
fn every_feature_dar_reads_is_reported_and_scanned() {
    for feature in dar_log::protocol::supported_reader_features() {
        let dir = hand_table(protocol_v(3, 7, Some(&[feature]), Some(&[feature])));
        let v = info_agrees_with_scan(dir.path());
        assert_eq!(v["protocol"]["dar_reads"], true, "{feature}");
        assert_eq!(
            features(&v),
            [t4(feature, "reader-writer", "readerFeatures", "reads")],
            "{feature}"
        );
        assert_eq!(v["protocol"]["features"][0]["required_by_readers"], true);
    }
}

#[test]
fn features_dar_refuses_are_reported_and_refused() {
    for feature in [
        "catalogManaged",
        "variantShredding",
        "variantShredding-preview",
        "geospatial",
        "someFutureReaderFeature",
    ] {
        let dir = hand_table(protocol_v(
            3,
            7,
            Some(&["deletionVectors", feature]),
            Some(&["deletionVectors", feature, "appendOnly"]),
        ));
        let v = info_agrees_with_scan(dir.path());
        assert_eq!(v["protocol"]["dar_reads"], false, "{feature}");
        assert_eq!(v["protocol"]["refused"], serde_json::json!([feature]));
        assert_eq!(
            v["protocol"]["verdict"],
            format!("dar cannot read this table: reader feature {feature}")
        );
        let kind = if feature == "someFutureReaderFeature" {
            "unknown"
        } else {
            "reader-writer"
        };
        assert_eq!(
            features(&v),
            [
                t4(
                    "deletionVectors",
                    "reader-writer",
                    "readerFeatures",
                    "reads"
                ),
                t4(feature, kind, "readerFeatures", "refused"),
                t4("appendOnly", "writer", "writerFeatures", "not needed"),
            ]
        );
        // The text form says the same, feature by feature.
        let text = dar().args(["info", &arg(dir.path())]).assert().success();
        let text = String::from_utf8(text.get_output().stdout.clone()).unwrap();
        assert!(
            text.contains(&format!(
                "verdict:           dar cannot read this table: reader feature {feature}"
            )),
            "{text}"
        );
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{feature} ")))
            .unwrap_or_else(|| panic!("no line for {feature}:\n{text}"));
        assert!(line.contains("refused") && line.contains(kind), "{line}");
        assert!(text.contains("schema, files:     not read"), "{text}");
    }
    // Two refusals are both named.
    let dir = hand_table(protocol_v(
        3,
        7,
        Some(&["geospatial", "catalogManaged"]),
        Some(&["geospatial", "catalogManaged"]),
    ));
    let v = info_agrees_with_scan(dir.path());
    assert_eq!(
        v["protocol"]["verdict"],
        "dar cannot read this table: reader features geospatial, catalogManaged"
    );
}

#[test]
fn writer_features_and_legacy_versions_never_block() {
    // An unknown name that only writers list, and a reader-writer feature
    // dar does not read that readers are not asked for.
    let dir = hand_table(protocol_v(
        3,
        7,
        Some(&[]),
        Some(&["someFutureWriterFeature", "catalogManaged", "rowTracking"]),
    ));
    let v = info_agrees_with_scan(dir.path());
    assert_eq!(
        features(&v),
        [
            t4(
                "someFutureWriterFeature",
                "unknown",
                "writerFeatures",
                "not needed"
            ),
            t4(
                "catalogManaged",
                "reader-writer",
                "writerFeatures",
                "not needed"
            ),
            t4("rowTracking", "writer", "writerFeatures", "not needed"),
        ]
    );
    let dir = hand_table(protocol_v(1, 1, None, None));
    let v = info_agrees_with_scan(dir.path());
    assert!(features(&v).is_empty());
    let text = dar().args(["info", &arg(dir.path())]).assert().success();
    let text = String::from_utf8(text.get_output().stdout.clone()).unwrap();
    assert!(text.contains("features:          none"), "{text}");
    assert!(
        text.contains("verdict:           dar reads this table exactly"),
        "{text}"
    );
    // Legacy writer 4: the five writer features it implies.
    let dir = hand_table(protocol_v(1, 4, None, None));
    let v = info_agrees_with_scan(dir.path());
    let w4 = |n: &str| t4(n, "writer", "minWriterVersion 4", "not needed");
    assert_eq!(
        features(&v),
        [
            w4("appendOnly"),
            w4("invariants"),
            w4("checkConstraints"),
            w4("changeDataFeed"),
            w4("generatedColumns")
        ]
    );
    // Reader 2 implies columnMapping (which dar reads), writer 5 lists it too.
    let dir = hand_table(protocol_v(2, 5, None, None));
    let v = info_agrees_with_scan(dir.path());
    let f = features(&v);
    assert_eq!(
        f[0],
        t4(
            "columnMapping",
            "reader-writer",
            "minReaderVersion 2",
            "reads"
        )
    );
    assert_eq!(f.len(), 6, "{f:?}");
}

#[test]
fn a_reader_version_dar_does_not_know_is_the_verdict() {
    let dir = hand_table(protocol_v(4, 7, None, Some(&["deletionVectors"])));
    let v = info_agrees_with_scan(dir.path());
    assert_eq!(
        v["protocol"]["verdict"],
        "dar cannot read this table: minReaderVersion 4 (dar reads 1 to 3)"
    );
    assert_eq!(v["protocol"]["min_reader_version"], 4);
}

#[test]
fn shared_tables_say_what_dar_reads() {
    let Some(geo) = dar_testdata::table("kernel/table-with-geo") else {
        return;
    };
    let v = info_json(&[&arg(&geo)]);
    assert_eq!(v["version"], 0);
    assert_eq!(v["id"], "table-with-geo");
    assert_eq!(v["protocol"]["dar_reads"], false);
    assert_eq!(
        v["protocol"]["verdict"],
        "dar cannot read this table: reader feature geospatial"
    );
    assert_eq!(
        features(&v),
        [t4(
            "geospatial",
            "reader-writer",
            "readerFeatures",
            "refused"
        )]
    );
    let text = dar().args(["info", &arg(&geo)]).assert().success();
    let text = String::from_utf8(text.get_output().stdout.clone()).unwrap();
    assert!(text.contains("geometry or geography"), "{text}");

    for (name, want) in [
        (
            "kernel/unshredded-variant",
            vec![
                t4(
                    "variantType-preview",
                    "reader-writer",
                    "readerFeatures",
                    "reads",
                ),
                t4("appendOnly", "writer", "writerFeatures", "not needed"),
                t4("invariants", "writer", "writerFeatures", "not needed"),
            ],
        ),
        (
            "kernel/table-with-dv-small",
            vec![t4(
                "deletionVectors",
                "reader-writer",
                "readerFeatures",
                "reads",
            )],
        ),
        (
            "kernel/cdf-column-mapping-id-mode",
            vec![
                t4(
                    "columnMapping",
                    "reader-writer",
                    "minReaderVersion 2",
                    "reads",
                ),
                t4("appendOnly", "writer", "minWriterVersion 5", "not needed"),
                t4("invariants", "writer", "minWriterVersion 5", "not needed"),
                t4(
                    "checkConstraints",
                    "writer",
                    "minWriterVersion 5",
                    "not needed",
                ),
                t4(
                    "changeDataFeed",
                    "writer",
                    "minWriterVersion 5",
                    "not needed",
                ),
                t4(
                    "generatedColumns",
                    "writer",
                    "minWriterVersion 5",
                    "not needed",
                ),
            ],
        ),
    ] {
        let Some(t) = dar_testdata::table(name) else {
            return;
        };
        let v = info_json(&[&arg(&t)]);
        assert_eq!(features(&v), want, "{name}");
        assert_eq!(
            v["protocol"]["verdict"], "dar reads this table exactly",
            "{name}"
        );
        assert!(v["files"].as_u64().unwrap() > 0, "{name}");
    }
}
