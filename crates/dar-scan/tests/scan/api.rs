//! The scan API: projection, limit, counts, tasks as data, metrics,
//! options, time travel and refresh.

use dar_io::ObjectClass;
use dar_scan::{ScanError, ScanTask, Table};
use futures::{StreamExt, TryStreamExt};

use dar_testdata::copy_dir;

use super::common::*;

#[tokio::test]
async fn projection_in_caller_order_with_nested_fields() {
    let Some(path) = table_path("kernel/stats-writing-all-types/delta") else {
        return;
    };
    let t = open(&path).await;
    let plan = t
        .scan()
        .with_columns(["string_col", "nested_struct.inner_string", "byte_col"])
        .build()
        .unwrap();
    let names: Vec<_> = plan
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        ["string_col", "nested_struct.inner_string", "byte_col"]
    );
    let batches = collect(&plan).await;
    assert_eq!(batches[0].schema().fields().len(), 3);
    assert_eq!(num_rows(&batches), 4);
    let err = t.scan().with_columns(["nope"]).build().unwrap_err();
    assert!(matches!(err, ScanError::UnknownColumn { .. }), "{err}");
    let err = t.scan().with_columns(["string_col.x"]).build().unwrap_err();
    assert!(matches!(err, ScanError::UnknownColumn { .. }), "{err}");
}

#[tokio::test]
async fn limit_stops_after_the_first_file() {
    let Some(path) = table_path("kernel/v2-checkpoints-json-with-sidecars") else {
        return;
    };
    let t = open(&path).await;
    assert!(t.snapshot().num_files() > 10);
    let plan = t.scan().with_limit(1).build().unwrap();
    let batches = collect(&plan).await;
    assert_eq!(num_rows(&batches), 1);
    let m = plan.metrics().snapshot();
    assert_eq!(m.files_read, 1, "{m:?}");
    assert_eq!(m.rows_output, 1);
    // Local files: one footer request, one page request at most.
    assert!(m.io.class(ObjectClass::Footer).requests <= 1, "{m:?}");
    // A limit larger than a file spans files; LIMIT 0 reads nothing.
    let plan = t.scan().with_limit(700).build().unwrap();
    assert_eq!(num_rows(&collect(&plan).await), 700);
    let plan = t.scan().with_limit(0).build().unwrap();
    assert_eq!(num_rows(&collect(&plan).await), 0);
    assert_eq!(plan.metrics().snapshot().files_read, 0);
}

#[tokio::test]
async fn count_is_answered_from_the_log() {
    let Some(path) = table_path("kernel/table-with-dv-small") else {
        return;
    };
    let t = open(&path).await;
    let plan = t.scan().with_columns(Vec::<String>::new()).build().unwrap();
    let batches = collect(&plan).await;
    assert_eq!(num_rows(&batches), 8);
    assert_eq!(batches[0].num_columns(), 0);
    let m = plan.metrics().snapshot();
    assert_eq!((m.files_read, m.files_answered_from_log), (0, 1));
    assert_eq!(m.io.requests(), 0, "no request at all: {m:?}");
    // With a predicate the data is read.
    let plan = t
        .scan()
        .with_columns(Vec::<String>::new())
        .with_predicate_sql("value < 5")
        .build()
        .unwrap();
    assert_eq!(num_rows(&collect(&plan).await), 4);
    assert_eq!(plan.metrics().snapshot().files_read, 1);

    // A predicate on partition columns only is decided per file from its
    // partition values; the rows are counted from the log.
    let Some(path) = table_path("kernel/basic_partitioned") else {
        return;
    };
    let t = open(&path).await;
    let full = collect(&t.scan().build().unwrap()).await;
    let expected = rows(&full)
        .iter()
        .filter(|r| r.contains("letter=a,"))
        .count();
    assert!(expected > 0);
    let plan = t
        .scan()
        .with_columns(Vec::<String>::new())
        .with_predicate_sql("letter = 'a' OR letter = 'zz'")
        .build()
        .unwrap();
    assert_eq!(num_rows(&collect(&plan).await), expected);
    let m = plan.metrics().snapshot();
    assert_eq!(m.files_read, 0, "{m:?}");
}

#[tokio::test]
async fn tasks_are_plain_data_that_execute_anywhere() {
    let Some(path) = table_path("kernel/basic_partitioned") else {
        return;
    };
    let t = open(&path).await;
    let plan = t.scan().with_predicate_sql("number > 1").build().unwrap();
    let expected = rows(&collect(&plan).await);
    let json = serde_json::to_string(plan.tasks()).unwrap();
    let tasks: Vec<ScanTask> = serde_json::from_str(&json).unwrap();
    assert_eq!(tasks, plan.tasks());
    // Execute each task separately, in reverse, with a fresh context.
    let ctx_plan = t.scan().with_predicate_sql("number > 1").build().unwrap();
    let mut got = Vec::new();
    for task in tasks.iter().rev() {
        got.extend(
            task.execute(ctx_plan.context())
                .try_collect::<Vec<_>>()
                .await
                .unwrap(),
        );
    }
    assert_eq!(rows(&got), expected);
    // Resolved tasks carry their row groups and still give the same rows.
    let resolved = plan.clone().resolve().await.unwrap();
    assert!(resolved.tasks().iter().all(|t| t.access.is_some()));
    let json = serde_json::to_string(resolved.tasks()).unwrap();
    assert!(json.contains("row_groups"));
    assert_eq!(rows(&collect(&resolved).await), expected);
}

#[tokio::test]
async fn unordered_small_batches_and_concurrency_give_the_same_rows() {
    let Some(path) = table_path("kernel/parsed-stats") else {
        return;
    };
    let t = open(&path).await;
    let expected = rows(&collect(&t.scan().build().unwrap()).await);
    let plan = t
        .scan()
        .with_ordered(false)
        .with_concurrency(3)
        .with_batch_size(7)
        .build()
        .unwrap();
    let batches = collect(&plan).await;
    assert!(batches.iter().all(|b| b.num_rows() <= 7));
    assert_eq!(rows(&batches), expected);
    let err = t.scan().with_batch_size(0).build().unwrap_err();
    assert!(matches!(
        err,
        ScanError::InvalidOption {
            option: "batch_size",
            ..
        }
    ));
    let err = t.scan().with_predicate_sql("nope = 1").build().unwrap_err();
    assert!(matches!(err, ScanError::Predicate { .. }), "{err}");
    let err = t.scan().with_predicate_sql("id = 'x'").build().unwrap_err();
    assert!(matches!(err, ScanError::Predicate { .. }), "{err}");
}

#[tokio::test]
async fn pruning_is_measured() {
    let Some(path) = table_path("kernel/parsed-stats") else {
        return;
    };
    let t = open(&path).await;
    let plan = t
        .scan()
        .with_predicate(dar_scan::col("id").eq(dar_scan::lit(150i64)))
        .build()
        .unwrap();
    assert!(plan.tasks().len() < t.snapshot().num_files());
    let batches = collect(&plan).await;
    assert_eq!(num_rows(&batches), 1);
    let m = plan.metrics().snapshot();
    assert!(m.files_pruned > 0, "{m:?}");
    assert_eq!(m.files_total, t.snapshot().num_files() as u64);
    assert_eq!(m.rows_output, 1);
    assert!(m.time(dar_scan::Stage::Decode) > std::time::Duration::ZERO);

    let Some(path) = table_path("kernel/parquet_row_group_skipping") else {
        return;
    };
    let t = open(&path).await;
    let plan = t
        .scan()
        .with_predicate_sql("numeric.ints.int64 > 2000000000")
        .build()
        .unwrap();
    let n = num_rows(&collect(&plan).await);
    let m = plan.metrics().snapshot();
    assert!(m.row_groups_pruned > 0 || m.files_pruned > 0, "{m:?}");
    assert_eq!(n, 0);
    let plan = t
        .scan()
        .with_predicate_sql("numeric.ints.int64 > 1000000002")
        .build()
        .unwrap();
    assert_eq!(num_rows(&collect(&plan).await), 2);
    assert_eq!(plan.metrics().snapshot().rows_filtered, 3);
}

#[tokio::test]
async fn time_travel_and_refresh() {
    let Some(path) = table_path("kernel/basic_partitioned") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&path, dir.path());
    let latest = dir.path().join("_delta_log/00000000000000000001.json");
    let saved = std::fs::read(&latest).unwrap();
    std::fs::remove_file(&latest).unwrap();
    let mut t = Table::open(dir.path().to_str().unwrap()).await.unwrap();
    assert_eq!(t.version(), 0);
    let v0 = num_rows(&collect(&t.scan().build().unwrap()).await);
    std::fs::write(&latest, saved).unwrap();
    t.refresh().await.unwrap();
    assert_eq!(t.version(), 1);
    assert_eq!(num_rows(&collect(&t.scan().build().unwrap()).await), 6);
    let old = open_version(dir.path(), 0).await;
    assert_eq!(num_rows(&collect(&old.scan().build().unwrap()).await), v0);
    // The stream is a normal futures stream (pull one batch).
    let mut s = old.scan().build().unwrap().execute();
    assert!(s.next().await.unwrap().unwrap().num_rows() > 0);
}

#[tokio::test]
async fn selective_reads_fetch_only_matching_pages() {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use dar_testkit::{ParquetOptions, TableWriter};
    use object_store::ObjectStore;
    use object_store::memory::InMemory;

    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("payload", DataType::Utf8, true),
    ]));
    let mut w = TableWriter::builder(
        Arc::clone(&store),
        object_store::path::Path::from("t"),
        schema.clone(),
    )
    .with_parquet_options(
        ParquetOptions::default()
            .with_row_group_rows(1_000)
            .with_page_rows(100)
            .with_page_index(true)
            .with_dictionary(false),
    )
    .create()
    .await
    .unwrap();
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..4_000)),
            Arc::new(StringArray::from_iter_values((0..4_000).map(|i| {
                format!(
                    "{:016x}{:016x}",
                    (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    (i as u64 + 7).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
                )
            }))),
        ],
    )
    .unwrap();
    w.append(&batch).await.unwrap();
    let table_store = dar_io::TableStore::builder("memory://t")
        .with_store(store)
        .build()
        .unwrap();
    let t = Table::from_store(table_store, dar_scan::TableOptions::new())
        .await
        .unwrap();

    let full = t.scan().build().unwrap();
    assert_eq!(num_rows(&collect(&full).await), 4_000);
    let full_bytes = full.metrics().snapshot().io.bytes();

    let plan = t
        .scan()
        .with_predicate_sql("id BETWEEN 1510 AND 1520")
        .build()
        .unwrap();
    assert_eq!(
        column_of(&collect(&plan).await, "id"),
        (1510..=1520).map(|i| i.to_string()).collect::<Vec<_>>()
    );
    let m = plan.metrics().snapshot();
    assert_eq!(m.row_groups_total, 4);
    assert_eq!(m.row_groups_pruned, 3, "{m:?}");
    assert!(m.pages_pruned >= 9, "{m:?}");
    // The footer is cached by now: one request adds the page index (it
    // was not needed by the full scan), then only matching pages.
    let bytes = m.io.bytes();
    assert_eq!(m.io.class(ObjectClass::Footer).requests, 1, "{m:?}");
    assert_eq!(m.rows_skipped_by_pages, 900, "{m:?}");
    assert!(
        bytes * 10 < full_bytes,
        "read {bytes} of {full_bytes} bytes"
    );
}

fn column_of(batches: &[arrow_array::RecordBatch], name: &str) -> Vec<String> {
    let mut out: Vec<String> = rows(batches)
        .iter()
        .filter_map(|r| {
            r.split(", ")
                .find_map(|c| c.strip_prefix(&format!("{name}=")).map(str::to_string))
        })
        .collect();
    out.sort_by_key(|v| v.parse::<i64>().unwrap_or(i64::MAX));
    out
}

#[tokio::test]
async fn time_travel_by_timestamp_and_lazy_file_index() {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use dar_testkit::{COMMIT_INTERVAL_MS, DEFAULT_START_MS, TableWriter};
    use object_store::ObjectStore;
    use object_store::memory::InMemory;

    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
    let mut w = TableWriter::builder(
        Arc::clone(&store),
        object_store::path::Path::from("t"),
        schema.clone(),
    )
    .with_in_commit_timestamps(true)
    .create()
    .await
    .unwrap();
    for v in 0..3i64 {
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![v; 2]))])
                .unwrap();
        w.append(&batch).await.unwrap(); // versions 1, 2, 3
    }
    let open = |options: dar_scan::TableOptions| {
        let store = Arc::clone(&store);
        async move {
            let ts = dar_io::TableStore::builder("memory://t")
                .with_store(store)
                .build()
                .unwrap();
            Table::from_store(ts, options).await.unwrap()
        }
    };
    // Just before version 3's commit: version 2 (two appends, four rows).
    let at = DEFAULT_START_MS + 3 * COMMIT_INTERVAL_MS - 1;
    let t = open(dar_scan::TableOptions::new().with_timestamp_ms(at)).await;
    assert_eq!(t.version(), 2);
    assert_eq!(num_rows(&collect(&t.scan().build().unwrap()).await), 4);
    let lazy = open(dar_scan::TableOptions::new().with_lazy_file_index(true)).await;
    assert_eq!(lazy.version(), 3);
    let plan = lazy.scan().with_predicate_sql("id = 2").build().unwrap();
    assert_eq!(rows(&collect(&plan).await), vec!["id=2", "id=2"]);
    assert_eq!(plan.metrics().snapshot().files_pruned, 2);
}

/// Opening a table and scanning it are `Send` futures, so engines can run
/// them on spawned tasks (`tokio::spawn`, `async_trait` methods). Replay's
/// read-ahead once broke this ("`FnOnce` is not general enough").
#[tokio::test]
async fn open_and_scan_run_on_spawned_tasks() {
    let Some(path) = table_path("kernel/table-with-dv-small") else {
        return;
    };
    let uri = path.to_str().unwrap().to_string();
    let rows = tokio::spawn(async move {
        let table = dar_scan::Table::open(&uri).await.unwrap();
        let plan = table.scan().build().unwrap();
        let batches: Vec<arrow_array::RecordBatch> =
            futures::TryStreamExt::try_collect(plan.execute())
                .await
                .unwrap();
        batches.iter().map(|b| b.num_rows()).sum::<usize>()
    })
    .await
    .unwrap();
    assert_eq!(rows, 8);
}

/// Every public future and stream can move between threads (engines spawn
/// them on multi-threaded runtimes; none needs a `block_on` workaround).
#[test]
fn public_futures_and_streams_are_send() {
    fn send<T: Send>(_: T) {}
    fn check(
        plan: dar_scan::ScanPlan,
        table: &mut Table,
        ctx: dar_scan::ScanContext,
        task: dar_scan::ScanTask,
        store: dar_io::TableStore,
    ) {
        send(Table::open("memory://t"));
        send(Table::open_with(
            "memory://t",
            dar_scan::TableOptions::new(),
        ));
        send(Table::from_store(store, dar_scan::TableOptions::new()));
        send(table.refresh());
        send(plan.collect());
        send(plan.execute());
        send(task.execute(&ctx));
        send(plan.resolve());
    }
    let _ = check;
}
