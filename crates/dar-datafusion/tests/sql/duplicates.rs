//! Issue 33 item 11 through SQL: a checkpoint that repeats a file (in its
//! one file, across parts, across sidecars) counts and sums its rows once;
//! a repeat with other values is a query error naming the file.

use std::sync::Arc;

use arrow_array::{Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_testkit::{CheckpointOptions, Repeat, TableWriter};
use datafusion::prelude::SessionContext;

/// Table `t` under `dir`: ids 0..6 in 3 files, and a checkpoint shaped by
/// `options` that repeats the first file as `repeat` says.
async fn write(dir: &std::path::Path, options: CheckpointOptions, repeat: Repeat) -> String {
    let store: Arc<dyn object_store::ObjectStore> =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let mut w = TableWriter::builder(store, object_store::path::Path::from("t"), schema.clone())
        .create()
        .await
        .unwrap();
    let mut first = None;
    for f in 0..3_i64 {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(f * 2..f * 2 + 2))],
        )
        .unwrap();
        let commit = w.append(&batch).await.unwrap();
        first.get_or_insert(commit.added[0].path.clone());
    }
    w.checkpoint_with(&options.with_repeated_file(first.unwrap(), repeat))
        .await
        .unwrap();
    dir.join("t").display().to_string()
}

fn shapes() -> [(&'static str, CheckpointOptions); 3] {
    [
        ("classic", CheckpointOptions::default()),
        ("2 parts", CheckpointOptions::default().with_parts(2)),
        ("2 sidecars", CheckpointOptions::default().with_sidecars(2)),
    ]
}

async fn query(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<Vec<i64>> {
    let batches = ctx.sql(sql).await?.collect().await?;
    let b = &batches[0];
    Ok((0..b.num_columns())
        .map(|c| {
            let a = b.column(c);
            let a = arrow_cast::cast(a, &DataType::Int64).unwrap();
            a.as_any().downcast_ref::<Int64Array>().unwrap().value(0)
        })
        .collect())
}

/// Counted from statistics and from rows, summed, filtered: each file once
/// (before, the repeated file's two rows counted twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_file_counts_once_in_sql() {
    for (shape, options) in shapes() {
        let dir = tempfile::tempdir().unwrap();
        let t = write(dir.path(), options, Repeat::Same).await;
        let ctx = SessionContext::new();
        dar_datafusion::register_dar(&ctx);
        let from = format!("delta_scan('{t}')");
        assert_eq!(
            query(&ctx, &format!("SELECT count(*) FROM {from}"))
                .await
                .unwrap(),
            [6],
            "{shape}"
        );
        assert_eq!(
            query(
                &ctx,
                &format!("SELECT count(x), sum(x) FROM {from} WHERE x >= 0")
            )
            .await
            .unwrap(),
            [6, 15],
            "{shape}"
        );
    }
}

/// A repeat with other values, or a file added and removed: the query
/// fails naming the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflicting_repeat_is_a_query_error() {
    for (shape, options) in shapes() {
        for repeat in [Repeat::OtherSize, Repeat::Removed] {
            let dir = tempfile::tempdir().unwrap();
            let t = write(dir.path(), options.clone(), repeat).await;
            let ctx = SessionContext::new();
            dar_datafusion::register_dar(&ctx);
            let err = query(&ctx, &format!("SELECT count(*) FROM delta_scan('{t}')"))
                .await
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("conflicting actions") && err.contains(".parquet"),
                "{shape} {repeat:?}: {err}"
            );
        }
    }
}
