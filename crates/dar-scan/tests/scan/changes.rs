//! Change data feed: the kernel's Spark-written CDF tables row for row
//! (exact multisets), each refusal, and hand-written tables for the rules
//! (DV replacement, column mapping with partitions and a rename, a feed
//! disabled then enabled, a cleaned-up commit), pruning, projection and
//! tasks as data.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Int32Array, RecordBatch, StringArray};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use dar_scan::{
    ChangeBound, ErrorKind, ScanContext, ScanError, ScanPlan, ScanRuntime, ScanSpec, ScanTask,
};
use dar_testkit::HandTable;
use serde_json::{Value, json};

use super::common::*;

/// One string per row, `|`-separated in output column order, without
/// `_commit_timestamp` (file times change when the tables are copied);
/// sorted.
pub fn change_rows(batches: &[RecordBatch]) -> Vec<String> {
    let opts = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let schema = b.schema();
        let cols: Vec<usize> = (0..b.num_columns())
            .filter(|i| schema.field(*i).name() != "_commit_timestamp")
            .collect();
        let fmts: Vec<ArrayFormatter<'_>> = cols
            .iter()
            .map(|c| ArrayFormatter::try_new(b.column(*c).as_ref(), &opts).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            let cells: Vec<String> = fmts.iter().map(|f| f.value(r).to_string()).collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}

fn v(n: u64) -> ChangeBound {
    ChangeBound::Version(n)
}

async fn plan_of(path: &Path, start: u64, end: Option<u64>) -> Result<ScanPlan, ScanError> {
    open(path).await.changes(v(start), end.map(v)).build().await
}

async fn rows_of(path: &Path, start: u64, end: Option<u64>) -> Vec<String> {
    let plan = plan_of(path, start, end).await.unwrap();
    change_rows(&collect(&plan).await)
}

/// `ids` as rows `id|kind|version`.
fn ids(ids: impl IntoIterator<Item = i64>, kind: &str, version: u64) -> Vec<String> {
    ids.into_iter()
        .map(|i| format!("{i}|{kind}|{version}"))
        .collect()
}

fn sorted(mut rows: Vec<String>) -> Vec<String> {
    rows.sort();
    rows
}

/// (table, start, end, rows): deltalake's `load_cdf` (delta-rs) rows, which
/// agree with delta-kernel-rs's `kernel/tests/cdf.rs` for every range it pins.
const EXPECTED: &[(&str, u64, Option<u64>, &[&str])] = &[
    (
        "cdf-table-with-dv",
        0,
        None,
        &[
            "0|delete|1",
            "0|delete|3",
            "0|insert|0",
            "0|insert|2",
            "0|insert|5",
            "1|delete|3",
            "1|insert|0",
            "1|insert|4",
            "2|insert|0",
            "3|delete|5",
            "3|insert|0",
            "3|insert|6",
            "4|delete|3",
            "4|insert|0",
            "4|insert|4",
            "5|delete|3",
            "5|insert|0",
            "5|insert|5",
            "6|insert|0",
            "7|insert|0",
            "8|insert|0",
            "9|delete|1",
            "9|insert|0",
            "9|insert|2",
        ],
    ),
    (
        "cdf-table",
        0,
        None,
        &[
            "10|Borb|2023-12-25|insert|0",
            "1|Steve|2023-12-22|insert|0",
            "2|Bob|2023-12-22|update_postimage|1",
            "2|Bob|2023-12-23|insert|0",
            "2|Bob|2023-12-23|update_preimage|1",
            "3|Dave|2023-12-22|update_postimage|1",
            "3|Dave|2023-12-23|insert|0",
            "3|Dave|2023-12-23|update_preimage|1",
            "4|Kate|2023-12-22|update_postimage|1",
            "4|Kate|2023-12-23|insert|0",
            "4|Kate|2023-12-23|update_preimage|1",
            "5|Emily|2023-12-24|insert|0",
            "5|Emily|2023-12-24|update_preimage|2",
            "5|Emily|2023-12-29|update_postimage|2",
            "6|Carl|2023-12-24|insert|0",
            "6|Carl|2023-12-24|update_preimage|2",
            "6|Carl|2023-12-29|update_postimage|2",
            "7|Dennis|2023-12-24|insert|0",
            "7|Dennis|2023-12-24|update_preimage|2",
            "7|Dennis|2023-12-29|delete|3",
            "7|Dennis|2023-12-29|update_postimage|2",
            "8|Claire|2023-12-25|insert|0",
            "9|Ada|2023-12-25|insert|0",
        ],
    ),
    (
        "cdf-table-non-partitioned",
        0,
        None,
        &[
            "10|Borb|2024-04-17|99999999999999999|true|3.14|1|insert|0",
            "1|Alex|2024-04-14|1|true|3.14|1|insert|4",
            "1|Steve|2024-04-14|1|true|3.14|1|insert|0",
            "2|Alan|2024-04-15|1|true|3.14|1|insert|4",
            "2|Bob|2024-04-14|1|true|3.14|1|update_postimage|1",
            "2|Bob|2024-04-15|1|true|3.14|1|insert|0",
            "2|Bob|2024-04-15|1|true|3.14|1|update_preimage|1",
            "3|Dave|2024-04-14|2|true|3.14|1|update_postimage|1",
            "3|Dave|2024-04-15|2|true|3.14|1|insert|0",
            "3|Dave|2024-04-15|2|true|3.14|1|update_preimage|1",
            "4|Kate|2024-04-14|3|true|3.14|1|update_postimage|1",
            "4|Kate|2024-04-15|3|true|3.14|1|insert|0",
            "4|Kate|2024-04-15|3|true|3.14|1|update_preimage|1",
            "5|Emily|2024-04-14|4|true|3.14|1|update_postimage|2",
            "5|Emily|2024-04-16|4|true|3.14|1|insert|0",
            "5|Emily|2024-04-16|4|true|3.14|1|update_preimage|2",
            "6|Carl|2024-04-14|5|true|3.14|1|update_postimage|2",
            "6|Carl|2024-04-16|5|true|3.14|1|insert|0",
            "6|Carl|2024-04-16|5|true|3.14|1|update_preimage|2",
            "7|Dennis|2024-04-14|6|true|3.14|1|delete|3",
            "7|Dennis|2024-04-14|6|true|3.14|1|update_postimage|2",
            "7|Dennis|2024-04-16|6|true|3.14|1|insert|0",
            "7|Dennis|2024-04-16|6|true|3.14|1|update_preimage|2",
            "8|Claire|2024-04-17|7|true|3.14|1|insert|0",
            "9|Ada|2024-04-17|8|true|3.14|1|insert|0",
        ],
    ),
    (
        "cdf-table-with-cdc-and-dvs",
        0,
        None,
        &[
            "0|new|insert|25",
            "10|merge1-insert|insert|18",
            "11|merge1-insert|insert|18",
            "11|merge1-insert|update_preimage|20",
            "11||delete|22",
            "11||update_postimage|20",
            "12|merge2-insert|insert|22",
            "1|after-large-delete|insert|25",
            "1|initial|insert|0",
            "1|initial|update_preimage|9",
            "1|update1|delete|10",
            "1|update1|update_postimage|9",
            "2|insert1|insert|1",
            "2|insert1|update_preimage|9",
            "2|update1|update_postimage|9",
            "2|update1|update_preimage|12",
            "2|update2|delete|24",
            "2|update2|update_postimage|12",
            "2||insert|25",
            "3|insert1-delete1|delete|2",
            "3|insert1-delete1|insert|1",
            "3|insert1-delete1|insert|4",
            "3|insert1-delete1|update_preimage|9",
            "3|update1|delete|24",
            "3|update1|update_postimage|9",
            "4|insert1-delete2|delete|24",
            "4|insert1-delete2|delete|5",
            "4|insert1-delete2|insert|1",
            "4|insert1-delete2|insert|7",
            "5|insert1-delete2|delete|5",
            "5|insert1-delete2|insert|1",
            "5|insert2|delete|24",
            "5|insert2|insert|8",
            "6|insert3|delete|24",
            "6|insert3|insert|14",
            "7|insert3|delete|16",
            "7|insert3|insert|14",
            "8|insert4|delete|16",
            "8|insert4|insert|15",
            "9|insert4|insert|15",
            "9|insert4|update_preimage|18",
            "9|merge1-update|delete|24",
            "9|merge1-update|update_postimage|18",
        ],
    ),
];

/// The kernel's pinned ranges of the tables delta-rs cannot read (their
/// file names hold `%`), from `kernel/tests/cdf.rs`.
fn kernel_only() -> Vec<(&'static str, u64, Option<u64>, Vec<String>)> {
    let zero_to_nine = || ids(0..10, "insert", 0);
    let simple = |s: u64, e: u64| {
        let mut rows = Vec::new();
        if s == 0 {
            rows.extend(zero_to_nine());
        }
        if s <= 1 && e >= 1 {
            rows.extend(ids(0..10, "delete", 1));
        }
        if e >= 2 {
            rows.extend(ids(20..25, "insert", 2));
        }
        rows
    };
    let partitioned = [
        "0|old|0|insert|0",
        "1|old|1|insert|0",
        "2|old|0|insert|0",
        "3|old|1|insert|0",
        "4|old|0|insert|0",
        "5|old|1|insert|0",
        "3|old|1|delete|1",
        "1|old|1|update_preimage|1",
        "1|new|1|update_postimage|1",
        "0|old|0|delete|2",
        "2|old|0|delete|2",
        "4|old|0|delete|2",
    ];
    let backtick = [
        "2|10|{field: 1, field.one: 2}|insert|0",
        "4|10|{field: 1, field.one: 2}|insert|0",
        "1|10|{field: 1, field.one: 2}|insert|1",
        "3|10|{field: 1, field.one: 2}|insert|1",
        "5|10|{field: 1, field.one: 2}|insert|1",
    ];
    let all_deleted = || [zero_to_nine(), ids(0..10, "delete", 1)].concat();
    vec![
        ("cdf-table-simple", 0, Some(0), simple(0, 0)),
        ("cdf-table-simple", 1, Some(1), simple(1, 1)),
        ("cdf-table-simple", 2, Some(2), simple(2, 2)),
        ("cdf-table-simple", 0, Some(2), simple(0, 2)),
        (
            "cdf-table-update-ops",
            0,
            Some(2),
            [
                zero_to_nine(),
                ids(20..25, "update_pre", 1),
                ids(30..35, "update_post", 2),
            ]
            .concat(),
        ),
        ("cdf-table-data-change", 0, Some(1), zero_to_nine()),
        (
            "cdf-table-partitioned",
            0,
            Some(2),
            partitioned.iter().map(|s| s.to_string()).collect(),
        ),
        (
            "cdf-table-backtick-column-names",
            0,
            None,
            backtick.iter().map(|s| s.to_string()).collect(),
        ),
        ("cdf-table-delete-unconditional", 0, None, all_deleted()),
        (
            "cdf-table-delete-conditional-all-rows",
            0,
            None,
            all_deleted(),
        ),
        (
            "cdf-table-delete-conditional-two-rows",
            0,
            None,
            [zero_to_nine(), ids([2, 8], "delete", 1)].concat(),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_tables_give_exactly_their_changes() {
    let mut cases: Vec<(&str, u64, Option<u64>, Vec<String>)> = EXPECTED
        .iter()
        .map(|(n, s, e, r)| (*n, *s, *e, r.iter().map(|x| x.to_string()).collect()))
        .collect();
    cases.extend(kernel_only());
    for (name, start, end, expected) in cases {
        let Some(path) = table_path(&format!("kernel/{name}")) else {
            return;
        };
        assert_eq!(
            rows_of(&path, start, end).await,
            sorted(expected),
            "{name} {start}..{end:?}"
        );
    }
}

/// The three column-mapping tables, from version 1 (the feed is switched
/// on there): an update, an append and a delete, read by physical name or
/// field id (rows checked against the Parquet files with pyarrow).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn column_mapping_tables_and_the_feed_switched_on_later() {
    let name_rows = [
        "1|Alice|100.0|delete|4",
        "2|Bob|200.0|update_preimage|2",
        "2|Bob|250.0|update_postimage|2",
        "4|David|400.0|insert|3",
    ];
    let id_rows = [
        "2|Frank|250.0|update_preimage|2",
        "2|Frank|275.0|update_postimage|2",
        "3|Grace|350.0|delete|4",
        "4|Henry|450.0|insert|3",
    ];
    for (name, expected) in [
        ("cdf-column-mapping-name-mode", name_rows),
        ("cdf-column-mapping-name-mode-3-7", name_rows),
        ("cdf-column-mapping-id-mode", id_rows),
    ] {
        let Some(path) = table_path(&format!("kernel/{name}")) else {
            return;
        };
        assert_eq!(rows_of(&path, 1, None).await, expected, "{name}");
        // Version 0 has the feed off.
        let err = plan_of(&path, 0, None).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ProtocolUnsupported, "{err}");
        assert!(
            err.to_string().contains("not enabled at version 0"),
            "{name}: {err}"
        );
    }
}

/// `table-with-cdf`: the feed off at version 2 (and on again at 3), and a
/// column that becomes non-nullable at 4; kernel's valid and refused ranges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_with_cdf_refuses_what_kernel_refuses() {
    let Some(path) = table_path("kernel/table-with-cdf") else {
        return;
    };
    for (s, e) in [(0, 1), (0, 0), (1, 1)] {
        let plan = plan_of(&path, s, Some(e)).await.unwrap();
        assert!(!plan.tasks().is_empty() || s == 1, "{s}..{e}");
    }
    for (s, e) in [(0, 2), (1, 2), (2, 2), (2, 3)] {
        let err = plan_of(&path, s, Some(e)).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("change data feed is not enabled at version 2"),
            "{s}..{e}: {err}"
        );
    }
    let err = plan_of(&path, 3, Some(4)).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("at version 3, column 'id' becomes non-nullable by end version 4"),
        "{text}"
    );
    assert_eq!(err.kind(), ErrorKind::ProtocolUnsupported);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_out_of_the_history_are_refused_by_version() {
    let Some(path) = table_path("kernel/cdf-table-simple") else {
        return;
    };
    let err = plan_of(&path, 1, Some(0)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("start version 1 is after end version 0"),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let err = plan_of(&path, 3, Some(4)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("start version 3 is beyond the latest version 2"),
        "{err}"
    );
    let err = plan_of(&path, 0, Some(9)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("end version 9 is beyond the latest version 2"),
        "{err}"
    );
}

/// Timestamps: a start resolves to the first commit at or after it, an end
/// to the last commit at or before it; `_commit_timestamp` is the commit's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamps_resolve_to_commits() {
    let Some(path) = table_path("kernel/cdf-table-simple") else {
        return;
    };
    let table = open(&path).await;
    let all = collect(&table.changes(v(0), None).build().await.unwrap()).await;
    // Commit timestamp of each version, from the feed itself.
    let mut ts = std::collections::BTreeMap::new();
    for b in &all {
        let versions = b
            .column_by_name("_commit_version")
            .unwrap()
            .as_primitive::<Int64Type>();
        let times = b
            .column_by_name("_commit_timestamp")
            .unwrap()
            .as_primitive::<arrow_array::types::TimestampMicrosecondType>();
        assert_eq!(times.null_count(), 0);
        for i in 0..b.num_rows() {
            let prev = ts.insert(versions.value(i), times.value(i) / 1000);
            assert!(prev.is_none_or(|p| p == times.value(i) / 1000));
        }
    }
    assert_eq!(ts.len(), 3);
    let (t0, t1, t2) = (ts[&0], ts[&1], ts[&2]);
    assert!(t0 < t1 && t1 < t2, "monotonized: {ts:?}");
    let versions_of = |batches: Vec<RecordBatch>| {
        let mut v: Vec<i64> = batches
            .iter()
            .flat_map(|b| {
                b.column_by_name("_commit_version")
                    .unwrap()
                    .as_primitive::<Int64Type>()
                    .values()
                    .to_vec()
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let range = |s: i64, e: Option<i64>| {
        let table = table.clone();
        async move {
            let plan = table
                .changes(ChangeBound::TimestampMs(s), e.map(ChangeBound::TimestampMs))
                .build()
                .await?;
            Ok::<_, ScanError>(versions_of(collect(&plan).await))
        }
    };
    assert_eq!(range(t1, Some(t1)).await.unwrap(), [1]);
    assert_eq!(range(t0 + 1, Some(t2 - 1)).await.unwrap(), [1]);
    assert_eq!(range(t0 - 1000, None).await.unwrap(), [0, 1, 2]);
    let err = range(t2 + 1, None).await.unwrap_err();
    assert!(
        err.to_string().contains("is after the last commit"),
        "{err}"
    );
    let err = range(t0, Some(t0 - 1)).await.unwrap_err();
    assert!(
        err.to_string().contains("is before the first commit"),
        "{err}"
    );
}

/// The predicate prunes change files by partition values and stats, and
/// by `_commit_version` before any I/O; the projection keeps the three
/// change columns; tasks travel as bytes and run elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruning_projection_and_tasks_as_data() {
    let Some(path) = table_path("kernel/cdf-table") else {
        return;
    };
    let table = open(&path).await;
    let plan = table
        .changes(v(0), None)
        .with_columns(["id"])
        .with_predicate_sql("_commit_version = 2 AND _change_type = 'update_postimage'")
        .build()
        .await
        .unwrap();
    let batches = collect(&plan).await;
    assert_eq!(
        change_rows(&batches),
        [
            "5|update_postimage|2",
            "6|update_postimage|2",
            "7|update_postimage|2"
        ]
    );
    let schema = plan.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        ["id", "_change_type", "_commit_version", "_commit_timestamp"]
    );
    assert_eq!(schema.field(1).data_type(), &DataType::Utf8);
    assert_eq!(schema.field(2).data_type(), &DataType::Int64);
    assert_eq!(
        schema.field(3).data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    let m = plan.metrics().snapshot();
    // Only version 2's change files are opened.
    assert!(m.files_total > plan.tasks().len() as u64, "{m:?}");
    let opened = m.files_read;
    assert!(opened >= 1 && opened < m.files_total, "{m:?}");

    // Partition values prune change files (birthday is the partition).
    let plan = table
        .changes(v(0), None)
        .with_predicate_sql("birthday = DATE '2023-12-29'")
        .build()
        .await
        .unwrap();
    assert!(plan.metrics().snapshot().files_pruned > 0);
    assert_eq!(
        change_rows(&collect(&plan).await),
        [
            "5|Emily|2023-12-29|update_postimage|2",
            "6|Carl|2023-12-29|update_postimage|2",
            "7|Dennis|2023-12-29|delete|3",
            "7|Dennis|2023-12-29|update_postimage|2",
        ]
    );

    // Tasks as bytes, run with a context built from the spec's bytes.
    let plan = table.changes(v(1), Some(v(3))).build().await.unwrap();
    let spec = ScanSpec::from_bytes(&plan.context().spec().to_bytes().unwrap()).unwrap();
    let tasks: Vec<ScanTask> = plan
        .tasks()
        .iter()
        .map(|t| ScanTask::from_bytes(&t.to_bytes().unwrap()).unwrap())
        .collect();
    let runtime = ScanRuntime::open(spec.table_uri(), Default::default()).unwrap();
    let remote = ScanPlan::new(ScanContext::new(spec, runtime).unwrap(), tasks);
    assert_eq!(
        change_rows(&collect(&remote).await),
        change_rows(&collect(&plan).await)
    );
    // A limit stops the feed.
    let plan = table
        .changes(v(0), None)
        .with_limit(3)
        .build()
        .await
        .unwrap();
    assert_eq!(num_rows(&collect(&plan).await), 3);
}

// ---- hand-written tables ----

fn ids_batch(ids: &[i32]) -> RecordBatch {
    let schema = Schema::new(vec![Field::new("id", DataType::Int32, true)]);
    RecordBatch::try_new(
        std::sync::Arc::new(schema),
        vec![std::sync::Arc::new(Int32Array::from(ids.to_vec()))],
    )
    .unwrap()
}

fn cdf_on() -> Value {
    json!({"delta.enableChangeDataFeed": "true"})
}

fn id_field() -> Value {
    json!([HandTable::field("id", json!("integer"), json!({}))])
}

fn inline_dv(rows: &[u64]) -> Value {
    let dv = dar_dv::DvDescriptor::inline(&dar_dv::DeletedRows::from_iter(rows.iter().copied()))
        .unwrap();
    json!({
        "storageType": "i",
        "pathOrInlineDv": dv.path_or_inline_dv(),
        "sizeInBytes": dv.size_in_bytes(),
        "cardinality": dv.cardinality(),
    })
}

fn with_dv(path: &str, size: u64, dv: Option<&[u64]>) -> Value {
    let mut add = HandTable::add(path, size, json!({}), Some(json!({"numRecords": 10})));
    if let Some(rows) = dv {
        add["add"]["deletionVector"] = inline_dv(rows);
    }
    add
}

fn remove(path: &str, size: u64, dv: Option<&[u64]>) -> Value {
    let mut r = json!({"remove": {"path": path, "dataChange": true, "size": size,
        "partitionValues": {}, "deletionTimestamp": 0}});
    if let Some(rows) = dv {
        r["remove"]["deletionVector"] = inline_dv(rows);
    }
    r
}

/// A DV that grows, then is replaced by one that restores a row and
/// deletes another, then the file is removed: only the rows that change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_deletion_vectors_yield_only_the_rows_that_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let size = t
        .write_parquet("f.parquet", &ids_batch(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
        .unwrap();
    t.commit(&[
        HandTable::protocol_with(&["deletionVectors"]),
        HandTable::metadata(id_field(), &[], cdf_on()),
        with_dv("f.parquet", size, None),
    ])
    .unwrap();
    // v1: a first DV {2, 5}.
    t.commit(&[
        remove("f.parquet", size, None),
        with_dv("f.parquet", size, Some(&[2, 5])),
    ])
    .unwrap();
    // v2: it grows by 7.
    t.commit(&[
        remove("f.parquet", size, Some(&[2, 5])),
        with_dv("f.parquet", size, Some(&[2, 5, 7])),
    ])
    .unwrap();
    // v3: replaced: 2 restored, 9 deleted.
    t.commit(&[
        remove("f.parquet", size, Some(&[2, 5, 7])),
        with_dv("f.parquet", size, Some(&[5, 7, 9])),
    ])
    .unwrap();
    // v4: the same DV again (no change), v5: the file removed.
    t.commit(&[
        remove("f.parquet", size, Some(&[5, 7, 9])),
        with_dv("f.parquet", size, Some(&[5, 7, 9])),
    ])
    .unwrap();
    t.commit(&[remove("f.parquet", size, Some(&[5, 7, 9]))])
        .unwrap();
    let expected = [
        ids(0..10, "insert", 0),
        ids([2, 5], "delete", 1),
        ids([7], "delete", 2),
        ids([9], "delete", 3),
        ids([2], "insert", 3),
        ids([0, 1, 2, 3, 4, 6, 8], "delete", 5),
    ]
    .concat();
    assert_eq!(rows_of(dir.path(), 0, None).await, sorted(expected));
    // One version alone: only its rows.
    assert_eq!(
        rows_of(dir.path(), 3, Some(3)).await,
        sorted([ids([9], "delete", 3), ids([2], "insert", 3)].concat())
    );
    // The DV pair travels in the tasks.
    let plan = plan_of(dir.path(), 3, Some(3)).await.unwrap();
    assert_eq!(plan.tasks().len(), 2);
    assert!(plan.tasks().iter().all(|t| t.paired_dv.is_some()));
    // The change type of adds and removes prunes before any I/O.
    let plan = open(dir.path())
        .await
        .changes(v(0), None)
        .with_predicate_sql("_change_type = 'delete'")
        .build()
        .await
        .unwrap();
    let delete = dar_scan::Scalar::Utf8("delete".into());
    assert!(
        plan.tasks()
            .iter()
            .all(|t| t.partition_value("_change_type") == Some(&delete))
    );
    assert_eq!(plan.tasks().len(), 4, "{:?}", plan.metrics().snapshot());
    assert_eq!(
        change_rows(&collect(&plan).await),
        sorted(
            [
                ids([2, 5], "delete", 1),
                ids([7], "delete", 2),
                ids([9], "delete", 3),
                ids([0, 1, 2, 3, 4, 6, 8], "delete", 5),
            ]
            .concat()
        )
    );
}

/// Column mapping (name mode) with a partition column, a `cdc` commit, a
/// rename in the range, and removes that carry their partition values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn column_mapping_partitions_and_a_rename() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let mapped = |name: &str, id: i64, phys: &str, ty: &str| {
        HandTable::field(
            name,
            json!(ty),
            json!({"delta.columnMapping.id": id, "delta.columnMapping.physicalName": phys}),
        )
    };
    let fields = |v_name: &str| {
        json!([
            mapped(v_name, 1, "col-v", "integer"),
            mapped("p", 2, "col-p", "string")
        ])
    };
    let config = json!({"delta.enableChangeDataFeed": "true", "delta.columnMapping.mode": "name",
        "delta.columnMapping.maxColumnId": "2"});
    let data = |vals: &[i32]| {
        let schema = Schema::new(vec![Field::new("col-v", DataType::Int32, true)]);
        RecordBatch::try_new(
            std::sync::Arc::new(schema),
            vec![std::sync::Arc::new(Int32Array::from(vals.to_vec()))],
        )
        .unwrap()
    };
    let s1 = t
        .write_parquet("col-p=a/f1.parquet", &data(&[1, 2]))
        .unwrap();
    let proto = json!({"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}});
    t.commit(&[
        proto,
        HandTable::metadata(fields("v"), &["p"], config.clone()),
        HandTable::add("col-p=a/f1.parquet", s1, json!({"col-p": "a"}), None),
    ])
    .unwrap();
    // v1: an update through a cdc file (which stores `_change_type`).
    let cdc_schema = Schema::new(vec![
        Field::new("col-v", DataType::Int32, true),
        Field::new("_change_type", DataType::Utf8, true),
    ]);
    let cdc = RecordBatch::try_new(
        std::sync::Arc::new(cdc_schema),
        vec![
            std::sync::Arc::new(Int32Array::from(vec![2, 20])),
            std::sync::Arc::new(StringArray::from(vec![
                "update_preimage",
                "update_postimage",
            ])),
        ],
    )
    .unwrap();
    let cs = t
        .write_parquet("_change_data/p=a/c1.parquet", &cdc)
        .unwrap();
    let s2 = t
        .write_parquet("col-p=a/f2.parquet", &data(&[1, 20]))
        .unwrap();
    t.commit(&[
        json!({"remove": {"path": "col-p=a/f1.parquet", "dataChange": true, "partitionValues": {"col-p": "a"}, "size": s1}}),
        HandTable::add("col-p=a/f2.parquet", s2, json!({"col-p": "a"}), None),
        json!({"cdc": {"path": "_change_data/p=a/c1.parquet", "partitionValues": {"col-p": "a"}, "size": cs, "dataChange": false}}),
    ])
    .unwrap();
    // v2: `v` renamed `w` (same physical column).
    t.commit(&[HandTable::metadata(fields("w"), &["p"], config)])
        .unwrap();
    // v3: insert into partition b, v4: delete partition a.
    let s3 = t.write_parquet("col-p=b/f3.parquet", &data(&[3])).unwrap();
    t.commit(&[HandTable::add(
        "col-p=b/f3.parquet",
        s3,
        json!({"col-p": "b"}),
        None,
    )])
    .unwrap();
    t.commit(&[json!({"remove": {"path": "col-p=a/f2.parquet", "dataChange": true, "partitionValues": {"col-p": "a"}, "size": s2}})])
        .unwrap();
    let plan = plan_of(dir.path(), 0, None).await.unwrap();
    let names: Vec<String> = plan
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "w",
            "p",
            "_change_type",
            "_commit_version",
            "_commit_timestamp"
        ]
    );
    assert_eq!(
        change_rows(&collect(&plan).await),
        [
            "1|a|delete|4",
            "1|a|insert|0",
            "20|a|delete|4",
            "20|a|update_postimage|1",
            "2|a|insert|0",
            "2|a|update_preimage|1",
            "3|b|insert|3",
        ]
    );
    // A partition predicate prunes before any file is read.
    let plan = open(dir.path())
        .await
        .changes(v(0), None)
        .with_predicate_sql("p = 'b'")
        .build()
        .await
        .unwrap();
    assert_eq!(change_rows(&collect(&plan).await), ["3|b|insert|3"]);
    assert_eq!(plan.metrics().snapshot().files_read, 1);
    // A predicate on `_change_type` keeps the cdc file's own values.
    let plan = open(dir.path())
        .await
        .changes(v(0), None)
        .with_predicate_sql("_change_type = 'update_preimage' OR _change_type = 'insert'")
        .build()
        .await
        .unwrap();
    assert_eq!(
        change_rows(&collect(&plan).await),
        [
            "1|a|insert|0",
            "2|a|insert|0",
            "2|a|update_preimage|1",
            "3|b|insert|3"
        ]
    );
}

/// The feed off, then on, then off again: ranges that touch an off
/// version are refused naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_switched_off_is_refused_by_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let s = t.write_parquet("a.parquet", &ids_batch(&[1])).unwrap();
    let s2 = t.write_parquet("b.parquet", &ids_batch(&[2])).unwrap();
    let s3 = t.write_parquet("c.parquet", &ids_batch(&[3])).unwrap();
    t.commit(&[
        HandTable::protocol(),
        HandTable::metadata(id_field(), &[], json!({})),
        HandTable::add("a.parquet", s, json!({}), None),
    ])
    .unwrap();
    t.commit(&[HandTable::metadata(id_field(), &[], cdf_on())])
        .unwrap();
    t.commit(&[HandTable::add("b.parquet", s2, json!({}), None)])
        .unwrap();
    t.commit(&[HandTable::metadata(
        id_field(),
        &[],
        json!({"delta.enableChangeDataFeed": "false"}),
    )])
    .unwrap();
    t.commit(&[HandTable::add("c.parquet", s3, json!({}), None)])
        .unwrap();
    assert_eq!(rows_of(dir.path(), 1, Some(2)).await, ["2|insert|2"]);
    for (s, e, off) in [(0, Some(2), 0), (1, Some(3), 3), (2, None, 3), (4, None, 4)] {
        let err = plan_of(dir.path(), s, e).await.unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("change data feed is not enabled at version {off}")),
            "{s}..{e:?}: {err}"
        );
    }
}

/// A table written by dar-testkit's writer in a local directory, with the
/// feed on.
async fn writer_table(
    dir: &Path,
    ict: bool,
) -> (
    dar_testkit::TableWriter,
    std::sync::Arc<arrow_schema::Schema>,
) {
    let store: std::sync::Arc<dyn object_store::ObjectStore> =
        std::sync::Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("part", DataType::Utf8, true),
    ]));
    let t = dar_testkit::TableWriter::builder(
        store,
        object_store::path::Path::from("t"),
        schema.clone(),
    )
    .with_partition_columns(["part"])
    .with_deletion_vectors(true)
    .with_in_commit_timestamps(ict)
    .with_change_data_feed(true)
    .with_kept_rows(true)
    .create()
    .await
    .unwrap();
    (t, schema)
}

fn id_part(schema: &std::sync::Arc<Schema>, ids: &[i64], part: &str) -> RecordBatch {
    RecordBatch::try_new(
        schema.clone(),
        vec![
            std::sync::Arc::new(arrow_array::Int64Array::from(ids.to_vec())),
            std::sync::Arc::new(StringArray::from(vec![part; ids.len()])),
        ],
    )
    .unwrap()
}

/// Commits removed by log cleanup (a checkpoint kept): a range that needs
/// one is refused naming it; one after the checkpoint reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleaned_up_commits_are_refused_by_version() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = writer_table(dir.path(), false).await;
    t.append(&id_part(&schema, &[1, 2], "a")).await.unwrap(); // v1
    t.append(&id_part(&schema, &[3], "b")).await.unwrap(); // v2
    t.checkpoint().await.unwrap();
    let v3 = t.append(&id_part(&schema, &[4], "a")).await.unwrap(); // v3
    let path = v3.added[0].path.clone();
    t.delete_rows(&path, &[0], dar_testkit::DvStorage::Inline)
        .await
        .unwrap(); // v4
    let root = dir.path().join("t");
    for v in [0, 1] {
        std::fs::remove_file(root.join(format!("_delta_log/{v:020}.json"))).unwrap();
    }
    assert_eq!(
        rows_of(&root, 2, None).await,
        ["3|b|insert|2", "4|a|delete|4", "4|a|insert|3"]
    );
    for start in [0, 1] {
        let err = plan_of(&root, start, None).await.unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "commit version {start} of the change range is missing"
            )),
            "{err}"
        );
        assert_eq!(err.kind(), ErrorKind::NotFound);
    }
}

/// Updates as a writer with DVs and the feed writes them (dar-testkit's
/// `update_rows`: the old rows deleted through a grown DV, a new file,
/// and a `cdc` file with their pre- and postimages) yield the `cdc` rows
/// only. A DV that only grows (a delete) yields its new rows as deletes;
/// its insert side changes nothing, so that file is not opened for it, and
/// the rows a side leaves out are not counted as deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_through_cdc_files_and_grown_dvs() {
    use dar_testkit::DvStorage;
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = writer_table(dir.path(), false).await;
    let v1 = t
        .append(&id_part(&schema, &[0, 1, 2, 3, 4, 5], "a"))
        .await
        .unwrap();
    let path = v1.added[0].path.clone();
    t.delete_rows(&path, &[1], DvStorage::File).await.unwrap(); // v2
    let v3 = t
        .update_rows(
            &path,
            &[3, 4],
            &id_part(&schema, &[30, 40], "a"),
            DvStorage::File,
        )
        .await
        .unwrap();
    assert_eq!(
        v3.added.len(),
        2,
        "the file with its grown DV, and the new rows"
    );
    t.delete_rows(&path, &[5], DvStorage::Inline).await.unwrap(); // v4
    // Updating a deleted row, or without the new rows, is refused.
    assert!(
        t.update_rows(&path, &[1], &id_part(&schema, &[10], "a"), DvStorage::File)
            .await
            .is_err()
    );
    let root = dir.path().join("t");
    let mut expected: Vec<String> = (0..6).map(|i| format!("{i}|a|insert|1")).collect();
    expected.extend([
        "1|a|delete|2".to_string(),
        "3|a|update_preimage|3".into(),
        "4|a|update_preimage|3".into(),
        "30|a|update_postimage|3".into(),
        "40|a|update_postimage|3".into(),
        "5|a|delete|4".into(),
    ]);
    assert_eq!(rows_of(&root, 0, None).await, sorted(expected));
    // The update commit alone: its cdc file is its only task.
    let plan = plan_of(&root, 3, Some(3)).await.unwrap();
    assert_eq!(plan.tasks().len(), 1);
    assert!(plan.tasks()[0].object_path.contains("_change_data"));
    // The grown DV: two sides, one file read, nothing counted as deleted.
    for resolve in [false, true] {
        let mut plan = plan_of(&root, 4, Some(4)).await.unwrap();
        assert_eq!(plan.tasks().len(), 2);
        if resolve {
            plan = plan.resolve().await.unwrap();
            assert_eq!(plan.tasks().len(), 1, "the insert side is dropped");
        }
        assert_eq!(change_rows(&collect(&plan).await), ["5|a|delete|4"]);
        let m = plan.metrics().snapshot();
        // One file opened (a resolved plan opens it again to run it).
        assert_eq!(m.files_read, 1 + u64::from(resolve), "{m:?}");
        assert_eq!(m.rows_deleted_by_dv, 0, "{m:?}");
    }
    // The table itself reads as the writer says.
    let snapshot = t.snapshot_rows().unwrap();
    assert_eq!(snapshot.num_rows(), 4);
    let scanned = collect(&open(&root).await.scan().build().unwrap()).await;
    assert_eq!(scanned.iter().map(|b| b.num_rows()).sum::<usize>(), 4);
}

/// On a table just opened, the feed reads each commit of its range once,
/// and of the log besides only `_last_checkpoint`, the listing and the
/// state before the start (here commits 0 to 4, no checkpoint): the table's snapshot stands for
/// the latest state instead of a second replay. A table opened at an
/// older version still gets the latest state from the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_on_an_open_table_reads_each_commit_once() {
    use dar_io::ObjectClass;
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = writer_table(dir.path(), false).await;
    for i in 0..20 {
        t.append(&id_part(&schema, &[i], "a")).await.unwrap();
    }
    let root = dir.path().join("t");
    // The missing `_last_checkpoint`, then commits 0..=4.
    let before_start = 1 + 5;
    for (table, replayed) in [
        (open(&root).await, before_start),
        (open_version(&root, 10).await, 21 + before_start),
    ] {
        let io = table.store().metrics().clone();
        let before = io.snapshot();
        let plan = table.changes(v(5), None).build().await.unwrap();
        assert_eq!(
            collect(&plan)
                .await
                .iter()
                .map(|b| b.num_rows())
                .sum::<usize>(),
            16
        );
        let log = io.snapshot().since(&before).class(ObjectClass::Log);
        // Commits 5..=20, once each, the state before 5, and the latest
        // state at an older open.
        assert_eq!(log.requests, 16 + replayed, "{log:?}");
    }
}

/// With in-commit timestamps on, `_commit_timestamp` is each commit's
/// `inCommitTimestamp`, and timestamp bounds resolve by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_commit_timestamps_are_the_commit_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = writer_table(dir.path(), true).await;
    t.append(&id_part(&schema, &[1], "a")).await.unwrap();
    t.append(&id_part(&schema, &[2], "a")).await.unwrap();
    let root = dir.path().join("t");
    let mut ict = Vec::new();
    for v in 0..=2u64 {
        let text = std::fs::read_to_string(root.join(format!("_delta_log/{v:020}.json"))).unwrap();
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        ict.push(first["commitInfo"]["inCommitTimestamp"].as_i64().unwrap());
    }
    let table = open(&root).await;
    let plan = table.changes(v(1), None).build().await.unwrap();
    let mut seen = Vec::new();
    for b in collect(&plan).await {
        let versions = b
            .column_by_name("_commit_version")
            .unwrap()
            .as_primitive::<Int64Type>();
        let times = b
            .column_by_name("_commit_timestamp")
            .unwrap()
            .as_primitive::<arrow_array::types::TimestampMicrosecondType>();
        for i in 0..b.num_rows() {
            seen.push((versions.value(i), times.value(i)));
        }
    }
    seen.sort();
    assert_eq!(seen, [(1, ict[1] * 1000), (2, ict[2] * 1000)]);
    let plan = table
        .changes(ChangeBound::TimestampMs(ict[2]), None)
        .build()
        .await
        .unwrap();
    assert_eq!(change_rows(&collect(&plan).await), ["2|a|insert|2"]);
}

/// Type widening inside the range: an `integer` column widened to `long`
/// reads the old files' rows as longs; a later narrowing is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widened_types_read_and_narrowing_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let small = t.write_parquet("a.parquet", &ids_batch(&[1, 2])).unwrap();
    let long_batch = RecordBatch::try_new(
        std::sync::Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)])),
        vec![std::sync::Arc::new(arrow_array::Int64Array::from(vec![
            5_000_000_000i64,
        ]))],
    )
    .unwrap();
    let big = t.write_parquet("b.parquet", &long_batch).unwrap();
    let config = json!({"delta.enableChangeDataFeed": "true", "delta.enableTypeWidening": "true"});
    t.commit(&[
        HandTable::protocol_with(&["typeWidening"]),
        HandTable::metadata(id_field(), &[], config.clone()),
        HandTable::add("a.parquet", small, json!({}), None),
    ])
    .unwrap();
    let widened = json!([HandTable::field(
        "id",
        json!("long"),
        json!({"delta.typeChanges": [{"fromType": "integer", "toType": "long"}]})
    )]);
    t.commit(&[HandTable::metadata(widened, &[], config.clone())])
        .unwrap();
    t.commit(&[HandTable::add("b.parquet", big, json!({}), None)])
        .unwrap();
    let plan = plan_of(dir.path(), 0, None).await.unwrap();
    assert_eq!(plan.schema().field(0).data_type(), &DataType::Int64);
    assert_eq!(
        change_rows(&collect(&plan).await),
        ["1|insert|0", "2|insert|0", "5000000000|insert|2"]
    );
    // Back to integer: version 0's and 1's data cannot be read as it.
    t.commit(&[HandTable::metadata(id_field(), &[], config)])
        .unwrap();
    let err = plan_of(dir.path(), 0, None).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("column 'id' changes type from Long to Integer"),
        "{err}"
    );
}

/// Over S3 (the in-process server), with cdc files, DV pairs and column
/// mapping: the same rows as from the local copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_reads_over_s3_as_locally() {
    use dar_io::testing::S3Server;
    let server = S3Server::start().await.unwrap();
    server.create_bucket("cdf").await.unwrap();
    for (name, start) in [
        ("cdf-table-with-cdc-and-dvs", 0),
        ("cdf-table", 0),
        ("cdf-column-mapping-id-mode", 1),
    ] {
        let Some(path) = table_path(&format!("kernel/{name}")) else {
            return;
        };
        server.upload_dir(&path, "cdf", name).unwrap();
        let store = dar_io::TableStore::builder(format!("s3://cdf/{name}"))
            .with_env(Vec::new())
            .with_options(server.storage_options())
            .build()
            .unwrap();
        let remote = dar_scan::Table::from_store(store, dar_scan::TableOptions::new())
            .await
            .unwrap();
        let plan = remote.changes(v(start), None).build().await.unwrap();
        let got = change_rows(&collect(&plan).await);
        assert_eq!(got, rows_of(&path, start, None).await, "{name}");
        assert!(!got.is_empty());
        assert!(plan.metrics().snapshot().io.requests() > 0);
    }
}

/// Commit files are read concurrently, as many in flight as the scan has
/// files in flight (a slow store shows it: reads overlap beyond eight).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_are_read_concurrently() {
    use std::sync::Arc;
    use std::time::Duration;

    use dar_io::testing::{FaultStore, RecordingStore};
    use object_store::ObjectStore;
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path().join("t")).unwrap();
    let size = t.write_parquet("a.parquet", &ids_batch(&[1])).unwrap();
    t.commit(&[
        HandTable::protocol(),
        HandTable::metadata(id_field(), &[], cdf_on()),
        HandTable::add("a.parquet", size, json!({}), None),
    ])
    .unwrap();
    for _ in 0..63 {
        t.commit(&[HandTable::add("a.parquet", size, json!({}), None)])
            .unwrap();
    }
    let local = object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    let slow = Arc::new(RecordingStore::new(local));
    let gate = Arc::new(FaultStore::new(Arc::clone(&slow)));
    let store = dar_io::TableStore::builder("memory://t")
        .with_store(Arc::clone(&gate) as Arc<dyn ObjectStore>)
        .build()
        .unwrap();
    let table = dar_scan::Table::from_store(store, dar_scan::TableOptions::new())
        .await
        .unwrap();
    slow.set_delay(Duration::from_millis(30));
    let opened = gate.max_in_flight();
    let plan = table
        .changes(v(0), None)
        .with_concurrency(32)
        .build()
        .await
        .unwrap();
    assert_eq!(plan.tasks().len(), 64);
    // Opening reads 8 commits ahead (plus a listing and the checkpoint
    // hint); the feed reads as many as the scan's 32 files in flight.
    assert!(
        gate.max_in_flight() >= 16,
        "commit reads in flight: {} (after opening: {opened})",
        gate.max_in_flight()
    );
}
