//! `DeltaScanExec` as bytes (what dar-distributed ships to workers): the
//! decoded scan, with a store of its own, gives the planner's rows, and a
//! split gives every file to exactly one part.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::RecordBatch;
use dar_datafusion::{DeltaScanExec, register_delta_table};
use dar_io::{StorageOptions, TableStore};
use dar_scan::{ScanRuntime, Table};
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::tables;

fn find_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    if plan.name() == "DeltaScanExec" {
        return Some(Arc::clone(plan));
    }
    plan.children().into_iter().find_map(find_scan)
}

/// Sorted display lines of the rows.
fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let text = arrow_cast::pretty::pretty_format_batches(batches)
        .unwrap()
        .to_string();
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

fn files(scan: &DeltaScanExec) -> Vec<String> {
    scan.file_groups()
        .iter()
        .flatten()
        .map(|t| t.log_path.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoded_scan_runs_with_its_own_store_and_splits_by_file() {
    let tables = tables().await;
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(3));
    let table = Table::open(tables.sample.to_str().unwrap()).await.unwrap();
    register_delta_table(&ctx, "trips", table).unwrap();
    let plan = ctx
        .sql("SELECT * FROM trips WHERE passengers > 1")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let scan = find_scan(&plan).unwrap();
    let expected = lines(&collect(Arc::clone(&scan), ctx.task_ctx()).await.unwrap());
    assert!(expected.len() > 10, "{}", expected.len());
    let scan = scan.downcast_ref::<DeltaScanExec>().unwrap();

    let bytes = scan.encode().unwrap();
    let decoded = DeltaScanExec::decode(&bytes, |spec| {
        let store = TableStore::open(spec.table_uri(), StorageOptions::new()).unwrap();
        Ok(ScanRuntime::new(store))
    })
    .unwrap();
    assert_eq!(decoded.schema(), scan.schema());
    assert_eq!(files(&decoded), files(scan));
    let decoded: Arc<dyn ExecutionPlan> = Arc::new(decoded);
    let got = collect(decoded, SessionContext::new().task_ctx())
        .await
        .unwrap();
    assert_eq!(lines(&got), expected);

    // Two parts: each file in exactly one, same partition count, all rows.
    let parts = scan.split(2);
    assert_eq!(parts.len(), 2);
    let mut seen = BTreeSet::new();
    let mut rows = Vec::new();
    for part in parts {
        assert_eq!(part.file_groups().len(), scan.file_groups().len());
        for f in files(&part) {
            assert!(seen.insert(f.clone()), "{f} in two parts");
        }
        rows.extend(collect(Arc::new(part), ctx.task_ctx()).await.unwrap());
    }
    assert_eq!(seen, files(scan).into_iter().collect());
    assert_eq!(lines(&rows), expected);
}

#[tokio::test]
async fn encoded_scan_of_another_format_is_refused() {
    let err = DeltaScanExec::decode(
        br#"{"format": 999, "producer": "dar 9.0.0", "spec": {}}"#,
        |_| unreachable!("never asked for a runtime"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("format 999"), "{err}");
    assert!(err.contains("dar 9.0.0"), "{err}");
}
