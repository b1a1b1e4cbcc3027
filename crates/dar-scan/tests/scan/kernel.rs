//! Kernel tables (delta-kernel-rs test data): pinned results at the latest
//! version, exact rows for the small tables, errors for the unsupported.
//!
//! Row counts agree with delta-rs (the README's cross-check column) for
//! every table both read. Digests pin the full sorted row text; the tables
//! whose rows are spelled out below were checked against their Parquet
//! files (pyarrow) and logs by hand.

use std::path::Path;

use dar_prune::Predicate;
use futures::TryStreamExt;

use super::common::*;

/// (table, latest version, rows, FNV-1a of the sorted row text).
const PINS: &[(&str, u64, usize, u64)] = &[
    ("app-txn-checkpoint", 1, 22, 0xec504eb853d499fb),
    ("app-txn-no-checkpoint", 1, 22, 0xec504eb853d499fb),
    ("basic-decimal-table", 0, 4, 0x31778560ca6dc0dd),
    ("basic_partitioned", 1, 6, 0xa08fbd920c78b3bd),
    ("cdf-column-mapping-id-mode", 4, 3, 0xabeb2f5c3379375f),
    ("cdf-column-mapping-name-mode-3-7", 4, 3, 0x6332fcf92556c835),
    ("cdf-column-mapping-name-mode", 4, 3, 0x6332fcf92556c835),
    ("cdf-table-backtick-column-names", 1, 5, 0x3adddeee0366531a),
    ("cdf-table-data-change", 1, 10, 0xfd83bc064bbbbe22),
    (
        "cdf-table-delete-conditional-all-rows",
        1,
        0,
        0xcbf29ce484222325,
    ),
    (
        "cdf-table-delete-conditional-two-rows",
        1,
        8,
        0xc19855dc3ac02d96,
    ),
    ("cdf-table-delete-unconditional", 1, 0, 0xcbf29ce484222325),
    ("cdf-table-non-partitioned", 4, 11, 0xf36c3320575cb1ba),
    ("cdf-table-partitioned", 2, 2, 0x1864a15dfb25f41e),
    ("cdf-table-simple", 2, 0, 0xcbf29ce484222325),
    ("cdf-table-update-ops", 2, 10, 0xfd83bc064bbbbe22),
    ("cdf-table-with-cdc-and-dvs", 25, 5, 0x2b2e50ab5431e92f),
    ("cdf-table-with-dv", 6, 10, 0x9d40def388a1e22e),
    ("cdf-table", 3, 9, 0x7816c701c47de71f),
    ("compacted-log-files-table", 25, 5, 0x2b2e50ab5431e92f),
    ("crc-full", 0, 0, 0xcbf29ce484222325),
    ("data-reader-timestamp_ntz", 1, 9, 0x9610c3d252382bd1),
    (
        "external-table-different-nullability",
        5,
        7,
        0xc2f74827251b7545,
    ),
    ("mixed-nulls", 0, 15, 0xe248606b2742ac0a),
    ("parquet_row_group_skipping", 1, 5, 0x036ad1e9f8312583),
    ("parsed-stats", 5, 600, 0xf315fd5d9de6741c),
    ("partition_cm/id", 0, 0, 0xcbf29ce484222325),
    ("partition_cm/name", 0, 0, 0xcbf29ce484222325),
    ("partition_cm/none", 0, 0, 0xcbf29ce484222325),
    (
        "partitioned_with_materialize_feature",
        1,
        6,
        0xa08fbd920c78b3bd,
    ),
    ("stats-writing-all-types/delta", 1, 4, 0x892770434997f604),
    ("table-with-cdf", 4, 0, 0xcbf29ce484222325),
    ("table-with-dv-small", 1, 8, 0x540344e96f3fd685),
    ("table-without-dv-small", 0, 10, 0x9d40def388a1e22e),
    ("timestamp-partitioned-table", 0, 1, 0x1f899385d76e3fb6),
    ("timestamp-truncation-stats", 2, 6, 0xbda683fa9a549c38),
    ("type-widening", 2, 2, 0x8c5bf477d11bf641),
    ("unshredded-variant", 2, 102, 0xad61fd520d1b761f),
    (
        "v1-multi-part-partitioned-struct-stats-only",
        5,
        5,
        0x2de43005bd36798b,
    ),
    ("v1-multi-part-struct-stats-only", 5, 5, 0xe6bc2cb89422f96b),
    ("v1-single-part-struct-stats-only", 5, 5, 0xe6bc2cb89422f96b),
    (
        "v2-checkpoints-json-with-last-checkpoint",
        0,
        10,
        0xfd83bc064bbbbe22,
    ),
    (
        "v2-checkpoints-json-with-sidecars",
        6,
        1233,
        0x72b2709f1a8ffb7c,
    ),
    (
        "v2-checkpoints-json-without-sidecars",
        2,
        11,
        0x541612485efdb74a,
    ),
    (
        "v2-checkpoints-parquet-with-last-checkpoint",
        0,
        10,
        0xfd83bc064bbbbe22,
    ),
    (
        "v2-checkpoints-parquet-with-sidecars",
        6,
        1233,
        0x72b2709f1a8ffb7c,
    ),
    (
        "v2-checkpoints-parquet-without-sidecars",
        2,
        11,
        0x541612485efdb74a,
    ),
    ("v2-classic-checkpoint-json", 1, 20, 0xaf6c400d23d5a7bd),
    ("v2-classic-checkpoint-parquet", 1, 20, 0xaf6c400d23d5a7bd),
    (
        "v2-classic-parquet-struct-stats-only",
        5,
        5,
        0xe6bc2cb89422f96b,
    ),
    (
        "v2-json-sidecars-struct-stats-only",
        5,
        5,
        0xe6bc2cb89422f96b,
    ),
    (
        "v2-parquet-sidecars-struct-stats-only",
        5,
        5,
        0xe6bc2cb89422f96b,
    ),
    ("void-column", 0, 3, 0x8a5b670f4d9dedf4),
    ("with-short-dv", 0, 7, 0x3f88f50b1d5ac1b6),
];

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

async fn count(table: &dar_scan::Table, predicate: Option<&str>) -> usize {
    let mut b = table.scan().with_columns(Vec::<String>::new());
    if let Some(p) = predicate {
        b = b.with_predicate_sql(p);
    }
    num_rows(&collect(&b.build().unwrap()).await)
}

#[tokio::test]
async fn every_kernel_table_is_pinned() {
    let Some(root) = table_path("kernel") else {
        return;
    };
    for (name, version, rows_expected, digest) in PINS {
        let t = open(&root.join(name)).await;
        assert_eq!(t.version(), *version, "{name}");
        let plan = t.scan().build().unwrap();
        let batches = collect(&plan).await;
        assert_eq!(num_rows(&batches), *rows_expected, "{name}: rows");
        assert_eq!(
            fnv(&rows(&batches).join("\n")),
            *digest,
            "{name}: row digest"
        );
        // A count answers from the log where it can, and agrees.
        assert_eq!(count(&t, None).await, *rows_expected, "{name}: count");
    }
}

async fn table_rows(name: &str, columns: Option<&[&str]>) -> Option<Vec<String>> {
    let path = table_path(&format!("kernel/{name}"))?;
    let t = open(&path).await;
    let mut b = t.scan();
    if let Some(c) = columns {
        b = b.with_columns(c.iter().copied());
    }
    Some(rows(&collect(&b.build().unwrap()).await))
}

#[tokio::test]
async fn dv_tables_return_only_surviving_rows() {
    let Some(r) = table_rows("table-with-dv-small", None).await else {
        return;
    };
    // The DV deletes rows 0 and 9 of values 0..=9.
    let expected: Vec<String> = (1..=8).map(|v| format!("value={v}")).collect();
    assert_eq!(r, expected);
    let r = table_rows("table-without-dv-small", None).await.unwrap();
    assert_eq!(r.len(), 10);
    // Inline DVs: ids 0, 1, 2 deleted from the first file.
    let r = table_rows("with-short-dv", Some(&["id"])).await.unwrap();
    let ids: Vec<String> = (3..=9).map(|v| format!("id={v}")).collect();
    assert_eq!(r, ids);
}

#[tokio::test]
async fn column_mapping_tables_use_logical_names() {
    let emma = [
        "id=1, name=Emma, value=150.0",
        "id=2, name=Frank, value=275.0",
        "id=4, name=Henry, value=450.0",
    ];
    let bob = [
        "id=2, name=Bob, value=250.0",
        "id=3, name=Charlie, value=300.0",
        "id=4, name=David, value=400.0",
    ];
    for (name, expected) in [
        ("cdf-column-mapping-id-mode", emma),
        ("cdf-column-mapping-name-mode", bob),
        ("cdf-column-mapping-name-mode-3-7", bob),
    ] {
        let Some(r) = table_rows(name, None).await else {
            return;
        };
        assert_eq!(r, expected, "{name}");
    }
    // Nested struct fields by physical name, projected as `a.b`.
    let Some(path) = table_path("kernel/stats-writing-all-types/delta") else {
        return;
    };
    let t = open(&path).await;
    let plan = t
        .scan()
        .with_columns(["nested_struct.inner_int", "string_col"])
        .build()
        .unwrap();
    assert_eq!(plan.schema().field(0).name(), "nested_struct.inner_int");
    let r = rows(&collect(&plan).await);
    assert_eq!(
        r,
        vec![
            "nested_struct.inner_int=10, string_col=alpha",
            "nested_struct.inner_int=30, string_col=beta",
            "nested_struct.inner_int=50, string_col=gamma",
            "nested_struct.inner_int=NULL, string_col=NULL",
        ]
    );
}

#[tokio::test]
async fn type_widening_returns_widened_types() {
    let Some(path) = table_path("kernel/type-widening") else {
        return;
    };
    let t = open(&path).await;
    let batches = collect(&t.scan().build().unwrap()).await;
    let schema = batches[0].schema();
    use arrow_schema::{DataType, TimeUnit};
    assert_eq!(
        schema.field_with_name("byte_long").unwrap().data_type(),
        &DataType::Int64
    );
    assert_eq!(
        schema.field_with_name("float_double").unwrap().data_type(),
        &DataType::Float64
    );
    assert_eq!(
        schema.field_with_name("int_decimal").unwrap().data_type(),
        &DataType::Decimal128(11, 1)
    );
    assert_eq!(
        schema
            .field_with_name("date_timestamp_ntz")
            .unwrap()
            .data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, None)
    );
    assert_eq!(
        rows(&batches),
        vec![
            "byte_decimal=1.0, byte_double=5.0, byte_long=1, date_timestamp_ntz=2024-09-09T00:00:00, decimal_decimal_greater_scale=67.89000, decimal_decimal_same_scale=123.45, float_double=3.4000000953674316, int_decimal=3.0, int_double=7.0, int_long=2, long_decimal=4.0, short_decimal=2.0, short_double=6.0",
            "byte_decimal=123.4, byte_double=1.234567890123, byte_long=9223372036854775807, date_timestamp_ntz=2024-09-09T12:34:56.123456, decimal_decimal_greater_scale=12345678901.23456, decimal_decimal_same_scale=12345678901234.56, float_double=1.234567890123, int_decimal=1234567890.1, int_double=1.234567890123, int_long=9223372036854775807, long_decimal=123456789012345678.9, short_decimal=12345.6, short_double=1.234567890123",
        ]
    );
}

#[tokio::test]
async fn timestamp_ntz_void_and_variant() {
    let Some(r) = table_rows("data-reader-timestamp_ntz", None).await else {
        return;
    };
    assert_eq!(r.len(), 9);
    assert_eq!(
        r[0],
        "id=0, tsNtz=2021-11-18T02:30:00.123456, tsNtzPartition=2021-11-18T02:30:00.123456"
    );
    assert_eq!(r[8], "id=8, tsNtz=NULL, tsNtzPartition=NULL");
    let r = table_rows("void-column", None).await.unwrap();
    assert_eq!(
        r,
        vec![
            "id=1, void_col=NULL",
            "id=2, void_col=NULL",
            "id=3, void_col=NULL"
        ]
    );
    let path = table_path("kernel/unshredded-variant").unwrap();
    let t = open(&path).await;
    let v = t.schema().field_with_name("v").unwrap();
    assert_eq!(
        v.data_type(),
        &arrow_schema::DataType::Struct(arrow_schema::Fields::from(vec![
            arrow_schema::Field::new("metadata", arrow_schema::DataType::Binary, true),
            arrow_schema::Field::new("value", arrow_schema::DataType::Binary, true),
        ]))
    );
    let batches = collect(&t.scan().with_columns(["id", "v"]).build().unwrap()).await;
    assert_eq!(num_rows(&batches), 102);
}

#[tokio::test]
async fn unsupported_tables_fail_clearly() {
    let Some(path) = table_path("kernel/table-with-geo") else {
        return;
    };
    let err = dar_scan::Table::open(path.to_str().unwrap())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("geospatial"), "{err}");
    let path = table_path("kernel/crc-malformed").unwrap();
    let err = dar_scan::Table::open(path.to_str().unwrap())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not a Delta table"), "{err}");
}

#[tokio::test]
async fn log_only_tables_count_from_the_log_and_fail_on_data() {
    for (name, rows_expected) in [
        ("app-txn-with-last-updated", 8),
        ("with_checkpoint_no_last_checkpoint", 5),
    ] {
        let Some(path) = table_path(&format!("kernel/{name}")) else {
            return;
        };
        let t = open(&path).await;
        let plan = t.scan().with_columns(Vec::<String>::new()).build().unwrap();
        assert_eq!(num_rows(&collect(&plan).await), rows_expected, "{name}");
        let m = plan.metrics().snapshot();
        assert_eq!(m.files_read, 0, "{name}: no data file read for a count");
        assert_eq!(m.io.class(dar_io::ObjectClass::Footer).requests, 0);
        // Reading rows needs the (absent) data files: an error naming one.
        let err = t
            .scan()
            .build()
            .unwrap()
            .execute()
            .try_collect::<Vec<_>>()
            .await
            .unwrap_err();
        assert!(matches!(err, dar_scan::ScanError::Io { .. }), "{err}");
        assert!(err.to_string().contains(".parquet"), "{err}");
    }
}

/// Scanning with `predicate` equals filtering the full scan row by row.
async fn check_predicate(path: &Path, predicate: &str) -> usize {
    let t = open(path).await;
    let full = collect(&t.scan().build().unwrap()).await;
    let p = Predicate::parse(predicate, t.schema()).unwrap();
    let expected: Vec<_> = full.iter().map(|b| p.filter(b).unwrap()).collect();
    let plan = t.scan().with_predicate_sql(predicate).build().unwrap();
    let got = collect(&plan).await;
    assert_eq!(
        rows(&got),
        rows(&expected),
        "{} WHERE {predicate}",
        path.display()
    );
    assert_eq!(count(&t, Some(predicate)).await, num_rows(&expected));
    num_rows(&got)
}

#[tokio::test]
async fn predicates_match_row_by_row_filtering() {
    let cases: &[(&str, &[&str])] = &[
        // (parsed-stats declares `ts_col` stats that its files do not have, so
        // only its real columns are compared row by row.)
        (
            "parsed-stats",
            &[
                "age > 50",
                "id = 100",
                "salary < 62000 OR name = 'name_500'",
                "id BETWEEN 200 AND 250",
            ],
        ),
        (
            "basic_partitioned",
            &[
                "letter = 'a'",
                "letter IS NULL",
                "letter != 'a' AND number > 2",
            ],
        ),
        (
            "mixed-nulls",
            &[
                "part = 1",
                "n IS NULL",
                "n IS NOT NULL AND part = 0",
                "part IS NULL OR value = 'value-3'",
            ],
        ),
        (
            "timestamp-truncation-stats",
            &[
                "ts_col = '1970-01-01T00:00:02Z'",
                "ts_col > '1970-01-01T00:00:02.0005Z'",
            ],
        ),
        (
            "parquet_row_group_skipping",
            &[
                "numeric.ints.int64 > 1000",
                "chrono.date32 < '1971-01-05'",
                "bool IS NOT NULL",
            ],
        ),
        ("table-with-dv-small", &["value > 4", "value = 0"]),
        (
            "cdf-column-mapping-name-mode",
            &["name = 'Frank'", "value > 200"],
        ),
        (
            "data-reader-timestamp_ntz",
            &[
                "tsNtzPartition = '2013-07-05 17:01:00.123456'",
                "tsNtz IS NULL",
            ],
        ),
        ("basic-decimal-table", &["part > 0", "col1 < 0"]),
        (
            "type-widening",
            &[
                "int_long > 5",
                "date_timestamp_ntz >= '2024-09-09 12:00:00'",
            ],
        ),
    ];
    for (table, predicates) in cases {
        let Some(path) = table_path(&format!("kernel/{table}")) else {
            return;
        };
        for p in *predicates {
            check_predicate(&path, p).await;
        }
    }
}
