//! The row filter runs one step per group of conjuncts on the same columns,
//! cheapest columns first, and each later step decodes only the rows the
//! earlier ones kept: asserted from the rows each step evaluated.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use dar_scan::Table;
use dar_testkit::TableWriter;
use object_store::ObjectStore;
use object_store::memory::InMemory;

use crate::common::a_where;

const ROWS: i64 = 10_000;

/// `a` (0..ROWS), `s` ("x" on even rows, "y" on odd) and `b` (a * 2), one
/// file, one row group.
async fn table() -> Table {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("b", DataType::Int64, true),
    ]));
    let mut w = TableWriter::builder(
        Arc::clone(&store),
        object_store::path::Path::from("t"),
        Arc::clone(&schema),
    )
    .create()
    .await
    .unwrap();
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..ROWS)),
            Arc::new(StringArray::from_iter_values(
                (0..ROWS).map(|i| if i % 2 == 0 { "x" } else { "y" }),
            )),
            Arc::new(Int64Array::from_iter_values((0..ROWS).map(|i| i * 2))),
        ],
    )
    .unwrap();
    w.append(&batch).await.unwrap();
    crate::common::table_over("memory://t", store).await
}

/// The `a` values of the rows `filter` keeps, and the rows the row filter
/// evaluated and dropped.
async fn run(t: &Table, filter: &str) -> (Vec<i64>, u64, u64) {
    let (mut a, m) = a_where(t, filter).await;
    a.sort_unstable();
    (a, m.rows_filter_evaluated, m.rows_filtered)
}

#[tokio::test]
async fn the_string_column_decodes_only_the_rows_the_integer_kept() {
    let t = table().await;
    // Written string first; the integer step runs first all the same.
    let (a, evaluated, filtered) = run(&t, "s = 'x' AND a < 100").await;
    assert_eq!(a, (0..100).step_by(2).collect::<Vec<_>>());
    // 10,000 rows for `a < 100`, then the 100 it kept for `s = 'x'`.
    assert_eq!(evaluated, ROWS as u64 + 100);
    assert_eq!(filtered, ROWS as u64 - 50);

    // Two integer columns: the caller's order, each step on fewer rows.
    let (a, evaluated, _) = run(&t, "b < 40 AND a >= 10").await;
    assert_eq!(a, (10..20).collect::<Vec<_>>());
    assert_eq!(evaluated, ROWS as u64 + 20);

    // Conjuncts on the same column are one step.
    let (a, evaluated, _) = run(&t, "a >= 5 AND s = 'y' AND a < 9").await;
    assert_eq!(a, vec![5, 7]);
    assert_eq!(evaluated, ROWS as u64 + 4);

    // A conjunct over two columns is a step of its own, after the
    // one-column steps it costs more than.
    let (a, evaluated, _) = run(&t, "(s = 'x' OR a = 3) AND a < 6").await;
    assert_eq!(a, vec![0, 2, 3, 4]);
    assert_eq!(evaluated, ROWS as u64 + 6);
}
