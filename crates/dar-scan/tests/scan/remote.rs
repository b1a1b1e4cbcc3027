//! A scan planned here and run elsewhere: the spec and the tasks go through
//! bytes, and a fresh context built from the spec and a store of its own
//! (as a worker builds it) gives the same rows.

use dar_io::{StorageOptions, TableStore};
use dar_scan::{ScanContext, ScanError, ScanPlan, ScanRuntime, ScanSpec, ScanTask};

use crate::common::{collect, open, rows, table_path};

/// Plans `table` with `columns` and `predicate`, then runs the tasks from
/// bytes in a context that shares nothing with the planner's.
async fn plan_here_run_there(table: &str, columns: &[&str], predicate: &str, limit: Option<usize>) {
    let Some(path) = table_path(table) else {
        return;
    };
    let t = open(&path).await;
    let mut builder = t
        .scan()
        .with_columns(columns)
        .with_predicate_sql(predicate)
        .with_batch_size(3);
    if let Some(l) = limit {
        builder = builder.with_limit(l);
    }
    let plan = builder.build().unwrap();
    let expected = rows(&collect(&plan).await);
    assert!(!expected.is_empty(), "{table}: the test needs rows");

    // What crosses the wire.
    let spec_bytes = plan.context().spec().to_bytes().unwrap();
    let task_bytes = serde_json::to_vec(plan.tasks()).unwrap();
    drop(plan);
    drop(t);

    // The other side: its own store for the URI in the spec.
    let spec = ScanSpec::from_bytes(&spec_bytes).unwrap();
    let tasks: Vec<ScanTask> = serde_json::from_slice(&task_bytes).unwrap();
    let store = TableStore::open(spec.table_uri(), StorageOptions::new()).unwrap();
    let ctx = ScanContext::new(spec, ScanRuntime::new(store)).unwrap();
    let remote = ScanPlan::new(ctx, tasks);
    let got = collect(&remote).await;
    assert_eq!(rows(&got), expected, "{table}");
    assert_eq!(got[0].schema().fields().len(), columns.len());
    assert_eq!(
        remote.metrics().snapshot().rows_output as usize,
        expected.len()
    );
}

#[tokio::test]
async fn spec_and_tasks_from_bytes_give_the_same_rows_dv() {
    plan_here_run_there("kernel/table-with-dv-small", &["value"], "value >= 2", None).await;
}

#[tokio::test]
async fn spec_and_tasks_from_bytes_give_the_same_rows_partitioned() {
    plan_here_run_there(
        "kernel/basic_partitioned",
        &["letter", "number"],
        "number > 1 AND letter IS NOT NULL",
        None,
    )
    .await;
}

#[tokio::test]
async fn spec_and_tasks_from_bytes_give_the_same_rows_column_mapping() {
    plan_here_run_there(
        "kernel/cdf-column-mapping-name-mode-3-7",
        &["name", "id"],
        "id > 1",
        Some(2),
    )
    .await;
}

#[tokio::test]
async fn a_spec_of_another_format_is_refused() {
    let Some(path) = table_path("kernel/table-with-dv-small") else {
        return;
    };
    let t = open(&path).await;
    let plan = t.scan().build().unwrap();
    let bytes = plan.context().spec().to_bytes().unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let needle = format!("\"format\":{}", ScanSpec::FORMAT);
    assert!(text.contains(&needle), "{text}");
    let other = text.replace(&needle, "\"format\":999");
    let err = ScanSpec::from_bytes(other.as_bytes()).unwrap_err();
    assert!(
        matches!(err, ScanError::SpecFormat { found: 999, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("run the same dar version"),
        "{err}"
    );
}
