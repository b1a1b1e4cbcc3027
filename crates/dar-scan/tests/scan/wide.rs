//! Files of more column chunks per row group than parquet's async reader
//! handles in linear time are decoded by dar-scan's own row-group reader
//! (`stages::wide`): the same rows as the narrow path and as the writer
//! kept, with column mapping, a partition column, deletion vectors, row
//! groups and pages pruned, a data filter and a limit.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use dar_scan::Table;
use dar_testkit::{ColumnMappingMode, DvStorage, ParquetOptions, TableWriter};
use object_store::ObjectStore;
use object_store::memory::InMemory;

use super::common::*;

/// Leaf columns past `stages::wide::WIDE_CHUNKS` (2048).
const COLUMNS: usize = 2500;

/// 48 rows in two files (partition `p`), row groups of 8 rows, pages of 4;
/// `c<j>` is `id * j`, NULL where `(id + j) % 7 == 0`; rows 1, 9 and 10 of
/// the first file are deleted.
async fn wide_table() -> (Table, Vec<String>) {
    let mut fields = vec![Field::new("id", DataType::Int64, true)];
    fields.extend((1..COLUMNS).map(|j| Field::new(format!("c{j}"), DataType::Int64, true)));
    fields.push(Field::new("p", DataType::Utf8, true));
    let schema = Arc::new(Schema::new(fields));
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut w = TableWriter::builder(
        Arc::clone(&store),
        object_store::path::Path::from("t"),
        schema.clone(),
    )
    .with_partition_columns(["p"])
    .with_column_mapping(ColumnMappingMode::Name)
    .with_deletion_vectors(true)
    .with_kept_rows(true)
    .with_parquet_options(
        ParquetOptions::default()
            .with_row_group_rows(8)
            .with_page_rows(4)
            .with_page_index(true),
    )
    .create()
    .await
    .unwrap();
    let ids: Vec<i64> = (0..48).collect();
    let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids.clone()))];
    for j in 1..COLUMNS as i64 {
        let values: Int64Array = ids
            .iter()
            .map(|&id| ((id + j) % 7 != 0).then_some(id * j))
            .collect();
        columns.push(Arc::new(values));
    }
    let parts: StringArray = ids
        .iter()
        .map(|&id| Some(if id < 24 { "a" } else { "b" }))
        .collect();
    columns.push(Arc::new(parts));
    let commit = w
        .append(&RecordBatch::try_new(schema, columns).unwrap())
        .await
        .unwrap();
    let first = commit.added[0].path.clone();
    w.delete_rows(&first, &[1, 9, 10], DvStorage::Inline)
        .await
        .unwrap();
    let mut expected = rows(&[w.snapshot_rows().unwrap()]);
    expected.sort();
    let ts = dar_io::TableStore::builder("memory://t")
        .with_store(store)
        .build()
        .unwrap();
    let table = Table::from_store(ts, dar_scan::TableOptions::new())
        .await
        .unwrap();
    (table, expected)
}

/// The rows of `batches` restricted to `columns`, sorted.
fn projected(batches: &[RecordBatch], columns: &[&str]) -> Vec<String> {
    let narrow: Vec<RecordBatch> = batches
        .iter()
        .map(|b| {
            let indexes: Vec<usize> = columns
                .iter()
                .map(|c| b.schema().index_of(c).unwrap())
                .collect();
            b.project(&indexes).unwrap()
        })
        .collect();
    let mut out = rows(&narrow);
    out.sort();
    out
}

#[tokio::test]
async fn wide_files_read_the_rows_of_the_narrow_path() {
    let (table, expected) = wide_table().await;
    let all = collect(&table.scan().build().unwrap()).await;
    let mut got = rows(&all);
    got.sort();
    assert_eq!(got.len(), 45);
    assert_eq!(got, expected, "every column of every live row");

    let some = ["id", "c7", "c1000", &format!("c{}", COLUMNS - 1), "p"];
    for predicate in [
        "id >= 30",
        "c7 > 100 AND p = 'a'",
        "c3 IS NULL",
        "id = 9 OR id = 11",
        "c1000 < 5000 OR p = 'b'",
    ] {
        let wide = collect(&table.scan().with_predicate_sql(predicate).build().unwrap()).await;
        let narrow = collect(
            &table
                .scan()
                .with_columns(some)
                .with_predicate_sql(predicate)
                .build()
                .unwrap(),
        )
        .await;
        let wide_rows = projected(&wide, &some);
        assert!(!wide_rows.is_empty(), "{predicate}");
        assert_eq!(wide_rows, projected(&narrow, &some), "{predicate}");
        assert_eq!(wide[0].num_columns(), COLUMNS + 1, "{predicate}");
    }

    // A limit stops inside the second row group (and is exact).
    for limit in [1, 10, 45, 100] {
        let batches = collect(&table.scan().with_limit(limit).build().unwrap()).await;
        let got = rows(&batches);
        assert_eq!(got.len(), limit.min(45), "limit {limit}");
        assert!(got.iter().all(|r| expected.contains(r)), "limit {limit}");
    }
    let batches = collect(
        &table
            .scan()
            .with_predicate_sql("c5 > 50")
            .with_limit(7)
            .build()
            .unwrap(),
    )
    .await;
    let got = rows(&batches);
    assert_eq!(got.len(), 7);
    assert!(got.iter().all(|r| expected.contains(r)));
}
