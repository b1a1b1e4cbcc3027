//! Deep and long SQL through `dar_datafusion::sql`, on a thread with a
//! 2 MiB stack (a tokio worker's): every input gets rows or an error, never
//! a stack overflow that kills the process.

use arrow_array::{Array, Int64Array};
use dar_datafusion::{MAX_EXPR_NESTING, QueryOptions};
use datafusion::prelude::SessionContext;

use crate::tables;

/// Runs `f` to completion on a fresh 2 MiB thread with its own runtime
/// (whose workers have tokio's default 2 MiB stacks too).
fn on_small_stack<F, Fut>(f: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(f());
        })
        .unwrap()
        .join()
        .unwrap();
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<i64, String> {
    let df = dar_datafusion::sql(ctx, sql, QueryOptions::new())
        .await
        .map_err(|e| e.to_string())?;
    let batches = df.collect().await.map_err(|e| e.to_string())?;
    let column = batches[0].column(0);
    let values = column.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(values.len(), 1);
    Ok(values.value(0))
}

fn chain(term: &str, op: &str, n: usize) -> String {
    vec![term; n].join(op)
}

#[test]
fn long_chains_run_and_deep_ones_are_refused() {
    let sample = dar_testdata::workspace_root().join("examples/data/sample");
    on_small_stack(move || async move {
        let ctx = SessionContext::new();
        let table = dar_scan::Table::open(sample.to_str().unwrap())
            .await
            .unwrap();
        dar_datafusion::register_delta_table(&ctx, "trips", table).unwrap();

        // A 4000-term OR, and a 5000-term AND: rebalanced, answered.
        let ors: Vec<String> = (0..4000).map(|i| format!("trip_id = {i}")).collect();
        let q = format!("SELECT count(*) FROM trips WHERE {}", ors.join(" OR "));
        assert_eq!(run(&ctx, &q).await, Ok(300));
        let ands: Vec<String> = (0..5000).map(|i| format!("trip_id <> {i}")).collect();
        let q = format!("SELECT count(*) FROM trips WHERE {}", ands.join(" AND "));
        assert_eq!(run(&ctx, &q).await, Ok(0));
        let explained = dar_datafusion::sql(&ctx, &format!("EXPLAIN {q}"), QueryOptions::new())
            .await
            .unwrap()
            .collect()
            .await;
        assert!(explained.is_ok());

        // The deepest chain allowed runs, on data too (no constant folding;
        // `max(...)` is one level).
        let terms = MAX_EXPR_NESTING - 1;
        let sum = chain("trip_id", " + ", terms);
        let q = format!("SELECT max({sum}) FROM trips");
        let max = run(&ctx, &q).await.unwrap();
        assert_eq!(max % terms as i64, 0);
        let q = format!("SELECT {} AS n", chain("1", "+", MAX_EXPR_NESTING));
        assert_eq!(run(&ctx, &q).await, Ok(MAX_EXPR_NESTING as i64));

        // One level more, 4000 terms, 100,000 terms: one clear error.
        for n in [MAX_EXPR_NESTING + 1, 4000, 100_000] {
            let q = format!("SELECT {} AS n", chain("1", "+", n));
            let err = run(&ctx, &q).await.unwrap_err();
            assert!(
                err.contains(&format!("deeper than {MAX_EXPR_NESTING} levels")),
                "{n}: {err}"
            );
            let q = format!(
                "SELECT count(*) FROM trips WHERE {} > 0",
                chain("trip_id", " * ", n)
            );
            let err = run(&ctx, &q).await.unwrap_err();
            assert!(err.contains("deeper than"), "{n}: {err}");
        }
        // Nested parentheses stop at DataFusion's parser limit.
        let q = format!(
            "SELECT count(*) FROM trips WHERE {}trip_id > 0{}",
            "(".repeat(5000),
            ")".repeat(5000)
        );
        let err = run(&ctx, &q).await.unwrap_err();
        assert!(err.contains("RecursionLimitExceeded"), "{err}");
    });
}

/// `ctx.sql` (DataFusion's own entry) survives long OR chains too, now that
/// DataFusion is built with `recursive_protection`.
#[test]
fn datafusion_itself_survives_a_long_or() {
    on_small_stack(|| async {
        let t = tables().await;
        let ctx = SessionContext::new();
        let table = dar_scan::Table::open(t.sample.to_str().unwrap())
            .await
            .unwrap();
        dar_datafusion::register_delta_table(&ctx, "trips", table).unwrap();
        let ors: Vec<String> = (0..1000).map(|i| format!("trip_id = {i}")).collect();
        let q = format!("SELECT count(*) FROM trips WHERE {}", ors.join(" OR "));
        let batches = ctx.sql(&q).await.unwrap().collect().await.unwrap();
        assert_eq!(batches[0].num_rows(), 1);
    });
}
