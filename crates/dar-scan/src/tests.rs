//! Unit tests that need the crate's internals and a whole table.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_testkit::{ColumnMappingMode, TableWriter};
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;

use crate::{Table, TableOptions};

/// A table of `width` long columns `c0..`, `id` column mapping, two files
/// of `rows` rows each (`c{j}` holds `row * width + j`).
async fn wide_table(width: usize, rows: usize) -> Table {
    let schema = Arc::new(Schema::new(
        (0..width)
            .map(|j| Field::new(format!("c{j}"), DataType::Int64, true))
            .collect::<Vec<_>>(),
    ));
    let store: Arc<dyn object_store::ObjectStore> = Arc::new(InMemory::new());
    let mut w = TableWriter::builder(Arc::clone(&store), Path::from("t"), Arc::clone(&schema))
        .with_column_mapping(ColumnMappingMode::Id)
        .create()
        .await
        .unwrap();
    for file in 0..2 {
        let columns: Vec<ArrayRef> = (0..width)
            .map(|j| {
                Arc::new(Int64Array::from_iter_values(
                    (0..rows).map(|r| ((file * rows + r) * width + j) as i64),
                )) as ArrayRef
            })
            .collect();
        w.append(&RecordBatch::try_new(Arc::clone(&schema), columns).unwrap())
            .await
            .unwrap();
    }
    let table_store = dar_io::TableStore::builder("memory://t")
        .with_store(store)
        .build()
        .unwrap();
    Table::from_store(table_store, TableOptions::new())
        .await
        .unwrap()
}

/// With `id` column mapping every logical column is found by field id;
/// the lookups happen once per file and column, never per batch (they
/// were once repeated for every batch and each was a linear search, so a
/// batch cost O(columns²)).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn column_resolution_is_per_file_and_linear_in_columns() {
    let width = 500;
    let rows = 1_000;
    let table = wide_table(width, rows).await;
    let mut lookups = Vec::new();
    for batch_size in [rows, 50] {
        let plan = table
            .scan()
            .with_batch_size(batch_size)
            .with_predicate_sql("c3 >= 0")
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = plan.execute().try_collect().await.unwrap();
        assert_eq!(batches.len(), 2 * rows / batch_size);
        let total: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(total, 2 * rows);
        // Values come from the right columns (found by id, not position):
        // column j holds row * width + j.
        for b in &batches {
            for j in [0, 3, 250, 499] {
                let c = b.column(j).as_primitive::<Int64Type>();
                assert!(c.values().iter().all(|v| *v as usize % width == j), "c{j}");
            }
        }
        lookups.push(plan.context().metrics().column_lookups());
    }
    // 2 files x 500 columns, whether each file decodes as 1 batch or 20.
    assert_eq!(lookups[0], lookups[1], "{lookups:?}");
    assert!(lookups[0] <= 2 * (width as u64 + 1), "{lookups:?}");
    assert!(lookups[0] >= 2 * width as u64, "{lookups:?}");
}

/// Exact statistics without DVs or a predicate, bounds once a predicate
/// filters rows, and parts of a split that add up to the whole.
#[tokio::test]
async fn plan_statistics_follow_the_delta_rules() {
    use crate::{Estimate, Scalar};
    let table = wide_table(3, 10).await;
    let plan = table.scan().with_columns(["c0", "c2"]).build().unwrap();
    let stats = plan.statistics();
    assert_eq!(stats.num_rows, Estimate::Exact(20));
    assert_eq!(stats.columns.len(), 2);
    assert_eq!(stats.columns[0].null_count, Estimate::Exact(0));
    assert_eq!(stats.columns[0].min, Estimate::Exact(Scalar::Int64(0)));
    assert_eq!(
        stats.columns[1].max,
        Estimate::Exact(Scalar::Int64(19 * 3 + 2))
    );
    assert!(matches!(stats.total_bytes, Estimate::Inexact(b) if b > 0));

    let parts = plan.split(2);
    assert_eq!(parts.len(), 2);
    let rows: u64 = parts
        .iter()
        .map(|p| match p.statistics().num_rows {
            Estimate::Exact(n) => n,
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(rows, 20);

    let filtered = table
        .scan()
        .with_columns(["c0"])
        .with_predicate_sql("c0 > 5")
        .build()
        .unwrap()
        .statistics();
    assert_eq!(filtered.num_rows, Estimate::Inexact(20));
    assert_eq!(filtered.columns[0].min, Estimate::Inexact(Scalar::Int64(0)));
    let limited = table.scan().with_limit(3).build().unwrap().statistics();
    assert_eq!(limited.num_rows, Estimate::Exact(3));
}

/// A plan's statistics parse every output column's file statistics in one
/// pass over the files' statistics, whatever the width (a column at a time
/// re-read every file's statistics once per column: columns² work for a
/// wide table's first plan), and each column's come from its own stats.
#[tokio::test]
async fn plan_statistics_load_all_columns_in_one_pass() {
    use crate::{Estimate, Scalar};
    let width = 100;
    let table = wide_table(width, 10).await;
    let stats = table.scan().build().unwrap().statistics();
    assert_eq!(stats.columns.len(), width);
    let index = table.snapshot().file_index().unwrap();
    // Delta's default: statistics on the first 32 columns.
    assert_eq!(index.stats.parsed_columns(), 32);
    assert_eq!(index.stats.parse_passes(), 1);
    for j in [0, 7, 31] {
        let c = &stats.columns[j];
        assert_eq!(c.min, Estimate::Exact(Scalar::Int64(j as i64)), "c{j}");
        let max = (19 * width + j) as i64;
        assert_eq!(c.max, Estimate::Exact(Scalar::Int64(max)), "c{j}");
    }
    assert_eq!(stats.columns[32].min, Estimate::Unknown);
    // A second plan parses nothing again.
    let _ = table
        .scan()
        .with_columns(["c3", "c0"])
        .build()
        .unwrap()
        .statistics();
    assert_eq!(index.stats.parse_passes(), 1);
}
