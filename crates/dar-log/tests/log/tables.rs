//! Every shared test table: version, protocol, schema field names, partition
//! columns and the exact active-file count. The counts were verified
//! independently of this crate by reconciling each `_delta_log` with a small
//! pyarrow script (commits + newest complete checkpoint + sidecars).

use crate::common::load;

pub(crate) struct T {
    pub(crate) name: &'static str,
    version: u64,
    reader: i32,
    writer: i32,
    features: Option<&'static [&'static str]>,
    partitions: &'static [&'static str],
    files: usize,
    fields: &'static [&'static str],
}

#[rustfmt::skip]
pub(crate) const TABLES: &[T] = &[
    T { name: "dat/basic_append", version: 1, reader: 1, writer: 2, features: None, partitions: &[], files: 2, fields: &["letter", "number", "a_float"] },
    T { name: "dat/basic_partitioned", version: 1, reader: 1, writer: 2, features: None, partitions: &["letter"], files: 6, fields: &["letter", "number", "a_float"] },
    T { name: "dat/multi_partitioned", version: 2, reader: 1, writer: 2, features: None, partitions: &["letter", "date", "data"], files: 2, fields: &["letter", "date", "data", "number"] },
    T { name: "dat/with_schema_change", version: 1, reader: 1, writer: 2, features: None, partitions: &[], files: 1, fields: &["num1", "num2"] },
    T { name: "kernel/app-txn-checkpoint", version: 1, reader: 1, writer: 2, features: None, partitions: &["modified"], files: 4, fields: &["id", "value", "modified"] },
    T { name: "kernel/app-txn-no-checkpoint", version: 1, reader: 1, writer: 2, features: None, partitions: &["modified"], files: 4, fields: &["id", "value", "modified"] },
    T { name: "kernel/app-txn-with-last-updated", version: 3, reader: 1, writer: 2, features: None, partitions: &[], files: 4, fields: &["a", "b"] },
    T { name: "kernel/basic-decimal-table", version: 0, reader: 1, writer: 2, features: None, partitions: &["part"], files: 4, fields: &["part", "col1", "col2", "col3"] },
    T { name: "kernel/basic_partitioned", version: 1, reader: 1, writer: 2, features: None, partitions: &["letter"], files: 6, fields: &["letter", "number", "a_float"] },
    T { name: "kernel/cdf-column-mapping-id-mode", version: 4, reader: 2, writer: 5, features: None, partitions: &[], files: 3, fields: &["id", "name", "value"] },
    T { name: "kernel/cdf-column-mapping-name-mode", version: 4, reader: 2, writer: 5, features: None, partitions: &[], files: 3, fields: &["id", "name", "value"] },
    T { name: "kernel/cdf-column-mapping-name-mode-3-7", version: 4, reader: 3, writer: 7, features: Some(&["columnMapping", "deletionVectors"]), partitions: &[], files: 3, fields: &["id", "name", "value"] },
    T { name: "kernel/cdf-table", version: 3, reader: 1, writer: 4, features: None, partitions: &["birthday"], files: 9, fields: &["id", "name", "birthday"] },
    T { name: "kernel/cdf-table-backtick-column-names", version: 1, reader: 1, writer: 7, features: None, partitions: &[], files: 4, fields: &["id.num", "id.num`s", "struct_col"] },
    T { name: "kernel/cdf-table-data-change", version: 1, reader: 1, writer: 7, features: None, partitions: &[], files: 1, fields: &["id"] },
    T { name: "kernel/cdf-table-delete-conditional-all-rows", version: 1, reader: 1, writer: 7, features: None, partitions: &[], files: 0, fields: &["id"] },
    T { name: "kernel/cdf-table-delete-conditional-two-rows", version: 1, reader: 1, writer: 7, features: None, partitions: &[], files: 3, fields: &["id"] },
    T { name: "kernel/cdf-table-delete-unconditional", version: 1, reader: 1, writer: 7, features: None, partitions: &[], files: 0, fields: &["id"] },
    T { name: "kernel/cdf-table-non-partitioned", version: 4, reader: 1, writer: 4, features: None, partitions: &[], files: 11, fields: &["id", "name", "birthday", "long_field", "boolean_field", "double_field", "smallint_field"] },
    T { name: "kernel/cdf-table-partitioned", version: 2, reader: 1, writer: 7, features: None, partitions: &["part"], files: 1, fields: &["id", "text", "part"] },
    T { name: "kernel/cdf-table-simple", version: 2, reader: 1, writer: 7, features: None, partitions: &[], files: 0, fields: &["id"] },
    T { name: "kernel/cdf-table-update-ops", version: 2, reader: 1, writer: 7, features: None, partitions: &[], files: 2, fields: &["id"] },
    T { name: "kernel/cdf-table-with-cdc-and-dvs", version: 25, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 2, fields: &["id", "comment"] },
    T { name: "kernel/cdf-table-with-dv", version: 6, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 1, fields: &["value"] },
    T { name: "kernel/compacted-log-files-table", version: 25, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 2, fields: &["id", "comment"] },
    T { name: "kernel/crc-full", version: 0, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 0, fields: &["id"] },
    T { name: "kernel/data-reader-timestamp_ntz", version: 1, reader: 3, writer: 7, features: Some(&["timestampNtz"]), partitions: &["tsNtzPartition"], files: 4, fields: &["id", "tsNtz", "tsNtzPartition"] },
    T { name: "kernel/external-table-different-nullability", version: 5, reader: 1, writer: 2, features: None, partitions: &[], files: 3, fields: &["i", "j", "k"] },
    T { name: "kernel/mixed-nulls", version: 0, reader: 1, writer: 2, features: None, partitions: &["part"], files: 3, fields: &["id", "part", "value", "n"] },
    T { name: "kernel/parquet_row_group_skipping", version: 1, reader: 3, writer: 7, features: Some(&["timestampNtz"]), partitions: &[], files: 1, fields: &["bool", "chrono", "numeric", "varlen", "missing"] },
    T { name: "kernel/parsed-stats", version: 5, reader: 1, writer: 2, features: None, partitions: &[], files: 6, fields: &["id", "name", "age", "salary", "ts_col"] },
    T { name: "kernel/partition_cm/id", version: 0, reader: 3, writer: 7, features: Some(&["columnMapping"]), partitions: &["category"], files: 0, fields: &["value", "category"] },
    T { name: "kernel/partition_cm/name", version: 0, reader: 3, writer: 7, features: Some(&["columnMapping"]), partitions: &["category"], files: 0, fields: &["value", "category"] },
    T { name: "kernel/partition_cm/none", version: 0, reader: 1, writer: 1, features: None, partitions: &["category"], files: 0, fields: &["value", "category"] },
    T { name: "kernel/partitioned_with_materialize_feature", version: 1, reader: 3, writer: 7, features: Some(&[]), partitions: &["letter"], files: 6, fields: &["letter", "number", "a_float"] },
    T { name: "kernel/table-with-cdf", version: 4, reader: 1, writer: 4, features: None, partitions: &[], files: 0, fields: &["part", "id"] },
    T { name: "kernel/table-with-dv-small", version: 1, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 1, fields: &["value"] },
    T { name: "kernel/table-without-dv-small", version: 0, reader: 1, writer: 2, features: None, partitions: &[], files: 1, fields: &["value"] },
    T { name: "kernel/timestamp-partitioned-table", version: 0, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &["time"], files: 1, fields: &["id", "x", "s", "time"] },
    T { name: "kernel/timestamp-truncation-stats", version: 2, reader: 1, writer: 2, features: None, partitions: &[], files: 3, fields: &["id", "ts_col"] },
    T { name: "kernel/type-widening", version: 2, reader: 3, writer: 7, features: Some(&["timestampNtz", "typeWidening-preview"]), partitions: &[], files: 2, fields: &["byte_long", "int_long", "float_double", "byte_double", "short_double", "int_double", "decimal_decimal_same_scale", "decimal_decimal_greater_scale", "byte_decimal", "short_decimal", "int_decimal", "long_decimal", "date_timestamp_ntz"] },
    T { name: "kernel/unshredded-variant", version: 2, reader: 3, writer: 7, features: Some(&["variantType-preview"]), partitions: &[], files: 4, fields: &["id", "v", "array_of_variants", "struct_of_variants", "map_of_variants", "array_of_struct_of_variants", "struct_of_array_of_variants"] },
    T { name: "kernel/v1-multi-part-partitioned-struct-stats-only", version: 5, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &["part"], files: 5, fields: &["id", "value", "part"] },
    T { name: "kernel/v1-multi-part-struct-stats-only", version: 5, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 5, fields: &["id", "value"] },
    T { name: "kernel/v1-single-part-struct-stats-only", version: 5, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 5, fields: &["id", "value"] },
    T { name: "kernel/v2-checkpoints-json-with-last-checkpoint", version: 0, reader: 3, writer: 7, features: Some(&["v2Checkpoint"]), partitions: &[], files: 2, fields: &["id"] },
    T { name: "kernel/v2-checkpoints-json-with-sidecars", version: 6, reader: 3, writer: 7, features: Some(&["v2Checkpoint"]), partitions: &[], files: 101, fields: &["id"] },
    T { name: "kernel/v2-checkpoints-json-without-sidecars", version: 2, reader: 3, writer: 7, features: Some(&["v2Checkpoint"]), partitions: &[], files: 3, fields: &["id"] },
    T { name: "kernel/v2-checkpoints-parquet-with-last-checkpoint", version: 0, reader: 3, writer: 7, features: Some(&["v2Checkpoint"]), partitions: &[], files: 2, fields: &["id"] },
    T { name: "kernel/v2-checkpoints-parquet-with-sidecars", version: 6, reader: 3, writer: 7, features: Some(&["v2Checkpoint"]), partitions: &[], files: 101, fields: &["id"] },
    T { name: "kernel/v2-checkpoints-parquet-without-sidecars", version: 2, reader: 3, writer: 7, features: Some(&["v2Checkpoint"]), partitions: &[], files: 3, fields: &["id"] },
    T { name: "kernel/v2-classic-checkpoint-json", version: 1, reader: 3, writer: 7, features: Some(&["v2Checkpoint"]), partitions: &[], files: 4, fields: &["id"] },
    T { name: "kernel/v2-classic-checkpoint-parquet", version: 1, reader: 3, writer: 7, features: Some(&["v2Checkpoint"]), partitions: &[], files: 4, fields: &["id"] },
    T { name: "kernel/v2-classic-parquet-struct-stats-only", version: 5, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 5, fields: &["id", "value"] },
    T { name: "kernel/v2-json-sidecars-struct-stats-only", version: 5, reader: 3, writer: 7, features: Some(&["deletionVectors", "v2Checkpoint"]), partitions: &[], files: 5, fields: &["id", "value"] },
    T { name: "kernel/v2-parquet-sidecars-struct-stats-only", version: 5, reader: 3, writer: 7, features: Some(&["deletionVectors", "v2Checkpoint"]), partitions: &[], files: 5, fields: &["id", "value"] },
    T { name: "kernel/void-column", version: 0, reader: 1, writer: 2, features: None, partitions: &[], files: 3, fields: &["id", "void_col"] },
    T { name: "kernel/with-short-dv", version: 0, reader: 3, writer: 7, features: Some(&["deletionVectors"]), partitions: &[], files: 2, fields: &["id", "value", "timestamp", "rand"] },
    T { name: "kernel/with_checkpoint_no_last_checkpoint", version: 3, reader: 1, writer: 2, features: None, partitions: &[], files: 1, fields: &["letter", "int", "date"] },
];

pub(crate) fn table_dir(name: &str) -> Option<std::path::PathBuf> {
    let dir = dar_testdata::table(name)?;
    Some(if name.starts_with("dat/") {
        dir.join("delta")
    } else {
        dir
    })
}

#[tokio::test]
async fn every_table_loads_with_exact_expectations() {
    for t in TABLES {
        let Some(dir) = table_dir(t.name) else { return };
        let s = load(&dir)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", t.name));
        assert_eq!(s.version(), t.version, "{}", t.name);
        let p = s.protocol();
        assert_eq!(
            (p.min_reader_version, p.min_writer_version),
            (t.reader, t.writer),
            "{}",
            t.name
        );
        let features: Option<Vec<&str>> = p
            .reader_features
            .as_ref()
            .map(|f| f.iter().map(String::as_str).collect());
        assert_eq!(features.as_deref(), t.features, "{}", t.name);
        assert_eq!(s.partition_columns(), t.partitions, "{}", t.name);
        let names: Vec<&str> = s.schema().fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, t.fields, "{}", t.name);
        assert_eq!(s.num_files(), t.files, "{}", t.name);
        let index = s.file_index().unwrap();
        assert_eq!(index.len(), t.files, "{}", t.name);
        let batch = index.to_record_batch().unwrap();
        assert_eq!(batch.num_rows(), t.files, "{}", t.name);
        // The Arrow schema covers every logical field.
        assert_eq!(
            s.arrow_schema().unwrap().fields().len(),
            t.fields.len(),
            "{}",
            t.name
        );
    }
}

#[tokio::test]
async fn every_table_directory_is_covered() {
    let Some(root) = dar_testdata::root() else {
        return;
    };
    let mut expected: Vec<String> = TABLES.iter().map(|t| t.name.to_string()).collect();
    expected.extend([
        "kernel/crc-malformed".to_string(),
        "kernel/table-with-geo".to_string(),
    ]);
    for group in ["dat", "kernel", "kernel/partition_cm"] {
        for e in std::fs::read_dir(root.join(group)).unwrap() {
            let p = e.unwrap().path();
            let log = if group == "dat" {
                p.join("delta/_delta_log")
            } else {
                p.join("_delta_log")
            };
            if log.is_dir() {
                let name = p.strip_prefix(&root).unwrap().display().to_string();
                assert!(expected.contains(&name), "table {name} has no expectations");
            }
        }
    }
}

#[tokio::test]
async fn geospatial_table_fails_naming_the_feature() {
    let Some(dir) = table_dir("kernel/table-with-geo") else {
        return;
    };
    let err = load(&dir).await.unwrap_err();
    assert!(
        matches!(&err, dar_log::LogError::UnsupportedFeature { feature, version: 0 } if feature == "geospatial"),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "unsupported reader feature 'geospatial' at version 0"
    );
}

#[tokio::test]
async fn crc_malformed_fails_clearly() {
    // Only `.crc` files and no commit: not loadable, and the error says why.
    let Some(dir) = table_dir("kernel/crc-malformed") else {
        return;
    };
    let err = load(&dir).await.unwrap_err();
    assert!(matches!(err, dar_log::LogError::NoLog { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("no commits or checkpoints under _delta_log"),
        "{err}"
    );
}

#[tokio::test]
async fn txns_domains_and_dvs() {
    let Some(dir) = table_dir("kernel/app-txn-checkpoint") else {
        return;
    };
    let s = load(&dir).await.unwrap();
    // The txns live in the checkpoint at version 1.
    let mut apps: Vec<(&str, i64)> = s
        .txns()
        .iter()
        .map(|(k, t)| (k.as_str(), t.version))
        .collect();
    apps.sort();
    assert_eq!(apps, [("my-app", 3), ("my-app2", 2)]);
    assert_eq!(s.app_version("my-app"), Some(3));
    let Some(dir) = table_dir("kernel/app-txn-no-checkpoint") else {
        return;
    };
    let s = load(&dir).await.unwrap();
    assert_eq!(s.app_version("my-app"), Some(3));
    assert_eq!(s.app_version("my-app2"), Some(2));
    let Some(dir) = table_dir("kernel/table-with-dv-small") else {
        return;
    };
    let s = load(&dir).await.unwrap();
    let index = s.file_index().unwrap();
    let dv = index.deletion_vector(0).unwrap().unwrap();
    assert_eq!(dv.storage_type(), dar_dv::StorageType::UuidRelative);
    assert_eq!(dv.path_or_inline_dv(), "vBn[lx{q8@P<9BNH/isA");
    assert_eq!(
        (dv.offset(), dv.size_in_bytes(), dv.cardinality()),
        (Some(1), 36, 2)
    );
}

#[tokio::test]
async fn every_version_of_every_table_loads() {
    // Time travel by version: every version whose commits survive (all
    // these tables keep commit 0, so all of them) rebuilds, checkpoints or
    // not, and the latest version equals the default load.
    for t in TABLES {
        let Some(dir) = table_dir(t.name) else { return };
        for v in 0..=t.version {
            let s = crate::common::builder(&dir)
                .with_version(v)
                .build()
                .await
                .unwrap_or_else(|e| panic!("{} v{v}: {e}", t.name));
            assert_eq!(s.version(), v, "{}", t.name);
            if v == t.version {
                assert_eq!(s.num_files(), t.files, "{}", t.name);
            }
        }
        let err = crate::common::builder(&dir)
            .with_version(t.version + 1)
            .build()
            .await
            .unwrap_err();
        assert!(
            matches!(err, dar_log::LogError::VersionNotFound { .. }),
            "{}: {err}",
            t.name
        );
    }
}
