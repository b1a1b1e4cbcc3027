//! Statistics SQL must not believe as written (issue 33, items 6, 7 and
//! 10): DataFusion answers `count(*)`, `count(x)`, `min(x)` and `max(x)`
//! from exact statistics without reading data, so statistics that lie must
//! never be exact; and widened columns' old bounds from a checkpoint's
//! `stats_parsed` must not prune pushed-down filters' rows.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use dar_datafusion::register_delta_table;
use dar_scan::Table;
use dar_testkit::{BadStats, CheckpointOptions};
use datafusion::common::stats::Precision;
use datafusion::physical_plan::{ExecutionPlan, StatisticsArgs, collect};
use datafusion::prelude::SessionContext;

use dar_testdata::copy_dir;

async fn open(path: &std::path::Path) -> Table {
    Table::open(path.to_str().unwrap()).await.unwrap()
}

async fn query(ctx: &SessionContext, sql: &str) -> (Arc<dyn ExecutionPlan>, Vec<RecordBatch>) {
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    (plan, batches)
}

fn find_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    if plan.name() == "DeltaScanExec" {
        return Some(Arc::clone(plan));
    }
    plan.children().into_iter().find_map(find_scan)
}

/// Column `c` of the one row, as an optional i64.
fn int(batches: &[RecordBatch], c: usize) -> Option<i64> {
    let a = batches[0].column(c).as_primitive::<Int64Type>();
    a.is_valid(0).then(|| a.value(0))
}

/// Issue 33 items 7 and 10: whatever way one file's statistics lie, the
/// aggregates are the data's (they were answered from statistics: a
/// `count(x)` of 2 for 5 values, a `max(x)` of 60 for 2; `nullCount`
/// above the rows made DataFusion subtract past zero), and the scan
/// claims no exact statistic of `x`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregates_of_statistics_that_lie_are_the_data_s() {
    for case in BadStats::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let truth = dar_testkit::write_bad_stats_table(tmp.path(), case).unwrap();
        let ctx = SessionContext::new();
        register_delta_table(&ctx, "t", open(tmp.path()).await).unwrap();
        let (_, batches) = query(&ctx, "SELECT count(*), count(x), min(x), max(x) FROM t").await;
        let got = [
            int(&batches, 0),
            int(&batches, 1),
            int(&batches, 2),
            int(&batches, 3),
        ];
        let want = [
            Some(truth.rows() as i64),
            Some(truth.non_null() as i64),
            truth.min(),
            truth.max(),
        ];
        assert_eq!(got, want, "{case:?}");

        let (plan, _) = query(&ctx, "SELECT x FROM t").await;
        let scan = find_scan(&plan).unwrap();
        let stats = scan
            .statistics_from_inputs(&[], &StatisticsArgs::new())
            .unwrap();
        let x = &stats.column_statistics[0];
        for (what, exact) in [
            ("null count", matches!(x.null_count, Precision::Exact(_))),
            ("min", matches!(x.min_value, Precision::Exact(_))),
            ("max", matches!(x.max_value, Precision::Exact(_))),
        ] {
            assert!(!exact, "{case:?}: {what} {x:?}");
        }
        if let Precision::Exact(n) = stats.num_rows {
            assert_eq!(n as u64, truth.rows(), "{case:?}");
        }
    }
}

/// Issue 33 item 6 through SQL: filters on a widened float column, pushed
/// down to the scan, keep the rows whose old bounds come from
/// `stats_parsed`; `min` and `max` are the data's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widened_float_filters_keep_their_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let options = CheckpointOptions::default()
        .with_stats_json(false)
        .with_stats_parsed(true);
    dar_testkit::write_widened_float_table(tmp.path(), &options, false)
        .await
        .unwrap();
    let ctx = SessionContext::new();
    register_delta_table(&ctx, "t", open(tmp.path()).await).unwrap();
    let f = |v: f32| format!("{:?}", f64::from(v));
    for (filter, rows) in [
        (format!("x = {}", f(0.7)), 1),
        (format!("x = {}", f(0.1)), 1),
        (format!("x IN ({}, {})", f(0.7), f(0.1)), 2),
        (format!("x <= {}", f(0.7)), 4),
        ("x > 0.1".to_string(), 5),
    ] {
        let (_, batches) = query(&ctx, &format!("SELECT count(*) FROM t WHERE {filter}")).await;
        assert_eq!(int(&batches, 0), Some(rows), "{filter}");
    }
    let (_, batches) = query(&ctx, "SELECT min(x), max(x) FROM t").await;
    let value = |c: usize| batches[0].column(c).as_primitive::<Float64Type>().value(0);
    assert_eq!((value(0), value(1)), (-1.0, 2.5));

    let Some(shared) = dar_testdata::table("kernel/type-widening") else {
        return;
    };
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&shared, copy.path());
    dar_testkit::write_log_checkpoint(copy.path()).unwrap();
    register_delta_table(&ctx, "w", open(copy.path()).await).unwrap();
    let (_, batches) = query(
        &ctx,
        "SELECT int_long FROM w WHERE float_double = 3.4000000953674316",
    )
    .await;
    assert_eq!(int(&batches, 0), Some(2));
    let (_, batches) = query(
        &ctx,
        "SELECT count(*) FROM w WHERE float_double IN (3.4000000953674316, 1.234567890123)",
    )
    .await;
    assert_eq!(int(&batches, 0), Some(2));
}
