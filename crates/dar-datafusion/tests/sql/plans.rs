//! What the plan does, beyond its rows: files opened, filters left in the
//! plan, statistics, partitions, metrics, cancellation, refresh.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_datafusion::{DeltaScanOptions, DeltaTableProvider, register_delta_table};
use dar_io::ObjectClass;
use dar_scan::Table;
use datafusion::common::ScalarValue;
use datafusion::common::stats::Precision;
use datafusion::physical_plan::{
    ExecutionPlan, StatisticsArgs, collect, displayable, execute_stream,
};
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;

use crate::tables;

fn context(partitions: usize) -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions))
}

async fn open(path: &std::path::Path) -> Table {
    Table::open(path.to_str().unwrap()).await.unwrap()
}

async fn physical(ctx: &SessionContext, sql: &str) -> Arc<dyn ExecutionPlan> {
    ctx.sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap()
}

fn text(plan: &Arc<dyn ExecutionPlan>) -> String {
    displayable(plan.as_ref()).indent(true).to_string()
}

fn find_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    if plan.name() == "DeltaScanExec" {
        return Some(Arc::clone(plan));
    }
    plan.children().into_iter().find_map(find_scan)
}

fn metric(plan: &Arc<dyn ExecutionPlan>, name: &str) -> usize {
    let scan = find_scan(plan).expect("a DeltaScanExec");
    scan.metrics()
        .and_then(|m| m.sum_by_name(name))
        .map(|v| v.as_usize())
        .unwrap_or_else(|| panic!("no metric {name}"))
}

/// The first value of the first column (an `Int64`).
fn first_i64(batches: &[RecordBatch]) -> i64 {
    batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0)
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// Data and footer requests of a table's store so far.
fn file_requests(table: &Table) -> u64 {
    let io = table.store().metrics().snapshot();
    io.class(ObjectClass::Footer).requests + io.class(ObjectClass::PageData).requests
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_one_opens_one_file() {
    let t = tables().await;
    let ctx = context(4);
    register_delta_table(&ctx, "sample", open(&t.sample).await).unwrap();
    let plan = physical(&ctx, "SELECT trip_id, fare FROM sample LIMIT 1").await;
    assert!(text(&plan).contains("limit=1"), "{}", text(&plan));
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    assert_eq!(rows(&batches), 1);
    assert_eq!(metric(&plan, "files_total"), 4);
    assert_eq!(metric(&plan, "files_read"), 1);
    assert!(metric(&plan, "index_bytes") > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_filters_leave_no_filter_exec() {
    let t = tables().await;
    let ctx = context(2);
    register_delta_table(&ctx, "sample", open(&t.sample).await).unwrap();
    let exact =
        "SELECT trip_id FROM sample WHERE day = DATE '2024-01-04' AND fare > 55 ORDER BY trip_id";
    let plan = physical(&ctx, exact).await;
    let shown = text(&plan);
    assert!(!shown.contains("FilterExec"), "{shown}");
    assert!(shown.contains("predicate="), "{shown}");
    let got = collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    // The same rows with the filter evaluated by DataFusion alone (`+ 0`
    // does not convert, so nothing is pushed down).
    let reference = "SELECT trip_id FROM sample WHERE CAST(day AS VARCHAR) = '2024-01-04' AND fare + 0 > 55 ORDER BY trip_id";
    let plan2 = physical(&ctx, reference).await;
    assert!(text(&plan2).contains("FilterExec"), "{}", text(&plan2));
    let want = collect(plan2, ctx.task_ctx()).await.unwrap();
    let ids = |b: &[RecordBatch]| -> Vec<i64> {
        b.iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect()
    };
    assert_eq!(ids(&got), [302, 322, 323, 334, 336, 343]);
    assert_eq!(ids(&got), ids(&want));
    // Three of the four files were pruned by the partition value.
    assert_eq!(metric(&plan, "files_pruned"), 3);

    // An inexact filter is pushed down and still filtered by DataFusion.
    let plan = physical(&ctx, "SELECT trip_id FROM sample WHERE vendor LIKE 'M%x%'").await;
    let shown = text(&plan);
    assert!(shown.contains("FilterExec"), "{shown}");
    assert!(shown.contains("predicate=vendor LIKE 'M%'"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_star_comes_from_statistics_without_data_files() {
    let t = tables().await;
    let ctx = context(2);
    let orders = open(&t.kit.join("orders")).await;
    register_delta_table(&ctx, "orders", orders.clone()).unwrap();
    let before = file_requests(&orders);
    let plan = physical(&ctx, "SELECT count(*) FROM orders").await;
    assert!(find_scan(&plan).is_none(), "{}", text(&plan));
    let batches = collect(plan, ctx.task_ctx()).await.unwrap();
    assert_eq!(first_i64(&batches), 8);
    assert_eq!(file_requests(&orders), before);

    // With deletion vectors the count is not exact in the statistics: the
    // scan runs, and dar answers it from the log (no file opened).
    let sample = open(&t.sample).await;
    register_delta_table(&ctx, "sample", sample.clone()).unwrap();
    let plan = physical(&ctx, "SELECT count(*) FROM sample").await;
    assert!(find_scan(&plan).is_some(), "{}", text(&plan));
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    assert_eq!(first_i64(&batches), 300);
    assert_eq!(metric(&plan, "files_answered_from_log"), 4);
    assert_eq!(metric(&plan, "files_read"), 0);
}

fn stats(
    plan: &Arc<dyn ExecutionPlan>,
    partition: Option<usize>,
) -> Arc<datafusion::common::Statistics> {
    find_scan(plan)
        .unwrap()
        .statistics_from_inputs(&[], &StatisticsArgs::new().with_partition(partition))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_from_the_file_index() {
    let t = tables().await;
    let ctx = context(2);
    register_delta_table(&ctx, "orders", open(&t.kit.join("orders")).await).unwrap();
    register_delta_table(&ctx, "people", open(&t.kit.join("people")).await).unwrap();

    let plan = physical(&ctx, "SELECT total, region FROM orders").await;
    let scan = find_scan(&plan).unwrap();
    // Four files (east, west, north, null region) over two partitions.
    assert_eq!(scan.properties().partitioning.partition_count(), 2);
    let s = stats(&plan, None);
    assert_eq!(s.num_rows, Precision::Exact(8));
    let total = &s.column_statistics[0];
    assert_eq!(
        total.min_value,
        Precision::Exact(ScalarValue::Int64(Some(10)))
    );
    assert_eq!(
        total.max_value,
        Precision::Exact(ScalarValue::Int64(Some(80)))
    );
    assert_eq!(total.null_count, Precision::Exact(0));
    let region = &s.column_statistics[1];
    assert_eq!(region.null_count, Precision::Exact(1));
    let dict = |v: &str| {
        ScalarValue::Dictionary(
            Box::new(DataType::UInt16),
            Box::new(ScalarValue::Utf8View(Some(v.into()))),
        )
    };
    assert_eq!(region.min_value, Precision::Exact(dict("east")));
    assert_eq!(region.max_value, Precision::Exact(dict("west")));
    // The partitions add up to the whole.
    let parts: Vec<usize> = (0..2)
        .map(|p| match stats(&plan, Some(p)).num_rows {
            Precision::Exact(n) => n,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(parts.iter().sum::<usize>(), 8);

    // A predicate makes everything inexact; so does a deletion vector.
    let plan = physical(&ctx, "SELECT total FROM orders WHERE total > 30").await;
    assert_eq!(stats(&plan, None).num_rows, Precision::Inexact(8));
    let plan = physical(&ctx, "SELECT id, name, seen FROM people").await;
    let s = stats(&plan, None);
    assert_eq!(s.num_rows, Precision::Inexact(9));
    assert_eq!(
        s.column_statistics[0].min_value,
        Precision::Inexact(ScalarValue::Int64(Some(1)))
    );
    // String maxima may be truncated prefixes: no upper bound.
    assert_eq!(s.column_statistics[1].max_value, Precision::Absent);
    // Timestamp maxima are written in milliseconds: raised by 999 µs.
    let max_seen = 1_704_067_200_000_000 + 9 * 3_600_000_000 + 999;
    assert_eq!(
        s.column_statistics[2].max_value,
        Precision::Inexact(ScalarValue::TimestampMicrosecond(
            Some(max_seen),
            Some("UTC".into())
        ))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_shows_files_row_groups_and_pages() {
    let t = tables().await;
    let sql = "SELECT trip_id FROM sample WHERE trip_id BETWEEN 165 AND 175";
    let ctx = context(2);
    register_delta_table(&ctx, "sample", open(&t.sample).await).unwrap();
    let plan = physical(&ctx, sql).await;
    let shown = text(&plan);
    assert!(shown.contains("files=1 of 4 (3 pruned"), "{shown}");
    collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    assert_eq!(metric(&plan, "row_groups_total"), 2);
    assert_eq!(metric(&plan, "row_groups_pruned"), 1);
    assert_eq!(metric(&plan, "pages_pruned"), 2);
    assert_eq!(metric(&plan, "rows_deleted_by_dv"), 3);

    let analyzed = ctx
        .sql(&format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let shown = arrow_cast::pretty::pretty_format_batches(&analyzed)
        .unwrap()
        .to_string();
    assert!(shown.contains("row_groups_pruned=1"), "{shown}");
    assert!(shown.contains("pages_pruned=2"), "{shown}");

    // Resolved at planning, the plan itself knows the row groups and pages.
    let ctx = context(2);
    let provider = DeltaTableProvider::with_options(
        open(&t.sample).await,
        DeltaScanOptions::new().with_resolve_at_plan(true),
    );
    ctx.register_table("sample", Arc::new(provider)).unwrap();
    let plan = physical(&ctx, sql).await;
    assert!(
        text(&plan).contains("row_groups=1 of 2, pages=2 of 4"),
        "{}",
        text(&plan)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_stops_io() {
    let t = tables().await;
    let ctx = SessionContext::new_with_config(
        SessionConfig::new()
            .with_target_partitions(1)
            .with_batch_size(1),
    );
    let people = open(&t.kit.join("people")).await;
    register_delta_table(&ctx, "people", people.clone()).unwrap();
    let plan = physical(&ctx, "SELECT * FROM people").await;
    let mut stream = execute_stream(plan, ctx.task_ctx()).unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.num_rows(), 1);
    drop(stream);
    // A request already in flight at the drop may still complete (and be
    // counted) a moment later; after that, nothing new may start.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let after_drop = people.store().metrics().snapshot().requests();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(people.store().metrics().snapshot().requests(), after_drop);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_reads_a_newer_version_without_registering_again() {
    use dar_testkit::TableWriter;
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let store: Arc<dyn object_store::ObjectStore> =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let mut writer =
        TableWriter::builder(store, object_store::path::Path::from("t"), schema.clone())
            .create()
            .await
            .unwrap();
    let batch = |v: Vec<i64>| {
        RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(v))]).unwrap()
    };
    writer.append(&batch(vec![1, 2, 3])).await.unwrap();

    let ctx = context(2);
    let provider = Arc::new(DeltaTableProvider::new(open(&dir.path().join("t")).await));
    ctx.register_table("t", provider.clone()).unwrap();
    let count = || async {
        let b = ctx
            .sql("SELECT sum(x) FROM t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        first_i64(&b)
    };
    assert_eq!(count().await, 6);
    writer.append(&batch(vec![10])).await.unwrap();
    // The provider keeps its snapshot until refreshed.
    assert_eq!(count().await, 6);
    assert_eq!(provider.refresh().await.unwrap(), 2);
    assert_eq!(count().await, 16);
}

/// `delta_scan` (called synchronously while planning) and `STORED AS DELTA`
/// also work on a single-threaded runtime.
#[tokio::test(flavor = "current_thread")]
async fn table_function_and_factory_on_a_current_thread_runtime() {
    let t = tables().await;
    let ctx = context(2);
    dar_datafusion::register_dar(&ctx);
    let people = t.kit.join("people");
    let sql = format!("SELECT count(*) FROM delta_scan('{}', 1)", people.display());
    let b = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    assert_eq!(first_i64(&b), 6);
    let ddl = format!(
        "CREATE EXTERNAL TABLE p STORED AS DELTA LOCATION '{}'",
        people.display()
    );
    ctx.sql(&ddl).await.unwrap().collect().await.unwrap();
    let b = ctx
        .sql("SELECT count(*) FROM p")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(first_i64(&b), 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_partition_of_a_repeated_query_reads_through_one_table_cache() {
    let t = tables().await;
    let ctx = context(4);
    let table = Table::open_with(
        t.sample.to_str().unwrap(),
        dar_scan::TableOptions::new().with_data_cache_bytes(16 << 20),
    )
    .await
    .unwrap();
    register_delta_table(&ctx, "sample", table.clone()).unwrap();
    let sql = "SELECT trip_id, fare FROM sample WHERE fare > 20 ORDER BY trip_id";
    let first = physical(&ctx, sql).await;
    let want = collect(Arc::clone(&first), ctx.task_ctx()).await.unwrap();
    assert!(metric(&first, "cache_misses") > 0);
    let before = file_requests(&table);
    assert!(before > 0);

    let second = physical(&ctx, sql).await;
    let got = collect(Arc::clone(&second), ctx.task_ctx()).await.unwrap();
    assert_eq!(got, want);
    assert_eq!(
        file_requests(&table),
        before,
        "the second query fetched pages"
    );
    assert!(metric(&second, "cache_hits") > 0);
    assert_eq!(metric(&second, "cache_misses"), 0);
}

/// With view types on (the default) dar's scan decodes strings straight
/// into `Utf8View`: the scan's spec asks for views and the batches hold
/// them; off, the spec asks for the classic types. Same rows either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_types_are_decoded_by_the_scan_not_cast_after_it() {
    let t = tables().await;
    let sql = "SELECT vendor, trip_id FROM sample WHERE vendor >= 'M' ORDER BY trip_id";
    let mut seen = Vec::new();
    for views in [true, false] {
        let ctx = context(2);
        let provider = DeltaTableProvider::with_options(
            open(&t.sample).await,
            DeltaScanOptions::new().with_view_types(views),
        );
        ctx.register_table("sample", Arc::new(provider)).unwrap();
        let plan = physical(&ctx, sql).await;
        let scan = find_scan(&plan).expect("a DeltaScanExec");
        let exec = scan
            .downcast_ref::<dar_datafusion::DeltaScanExec>()
            .expect("dar's scan");
        assert_eq!(exec.scan_plan().context().spec().view_types(), views);
        let got = collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
        let want = if views {
            DataType::Utf8View
        } else {
            DataType::Utf8
        };
        assert!(got.iter().all(|b| b.column(0).data_type() == &want));
        let text: Vec<String> = got
            .iter()
            .flat_map(|b| {
                let c = arrow_cast::cast(b.column(0), &DataType::Utf8).unwrap();
                let s = c
                    .as_any()
                    .downcast_ref::<arrow_array::StringArray>()
                    .unwrap();
                s.iter()
                    .map(|v| v.unwrap_or("NULL").to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(!text.is_empty());
        seen.push(text);
    }
    assert_eq!(seen[0], seen[1]);
}

/// A local table's checkpoint replaced after the open (by its own bytes):
/// its files have no statistics for a column not parsed yet, so the query
/// reads them all, returns the rows of a fresh table, and says so in the
/// scan's `stats_files_unavailable` metric.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_replaced_after_the_open_leaves_its_files_unpruned_and_rows_exact() {
    let t = tables().await;
    let dir = tempfile::tempdir().unwrap();
    dar_testdata::copy_dir(&t.sample, dir.path());
    let ctx = context(2);
    register_delta_table(&ctx, "copy", open(dir.path()).await).unwrap();
    register_delta_table(&ctx, "fresh", open(&t.sample).await).unwrap();
    dar_testdata::replace_by_copy(
        &dir.path()
            .join("_delta_log/00000000000000000004.checkpoint.parquet"),
    );
    let query =
        |table: &str| format!("SELECT trip_id FROM {table} WHERE fare > 40 ORDER BY trip_id");
    let fresh = physical(&ctx, &query("fresh")).await;
    let want = collect(Arc::clone(&fresh), ctx.task_ctx()).await.unwrap();
    let stale = physical(&ctx, &query("copy")).await;
    let got = collect(Arc::clone(&stale), ctx.task_ctx()).await.unwrap();
    assert!(rows(&want) > 0);
    assert_eq!(got, want);
    assert_eq!(metric(&fresh, "stats_files_unavailable"), 0);
    assert!(metric(&stale, "stats_files_unavailable") > 0);
    assert!(metric(&stale, "files_pruned") <= metric(&fresh, "files_pruned"));
}
