//! Helpers: open shared tables, render batches as sorted row strings.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field};
use dar_scan::{ScanPlan, Table, TableOptions};
use futures::TryStreamExt;

pub fn table_path(name: &str) -> Option<PathBuf> {
    dar_testdata::table(name)
}

pub async fn open(path: &Path) -> Table {
    Table::open(path.to_str().unwrap()).await.unwrap()
}

pub async fn open_version(path: &Path, version: u64) -> Table {
    Table::open_with(
        path.to_str().unwrap(),
        TableOptions::new().with_version(version),
    )
    .await
    .unwrap()
}

/// The table at `uri`, read through `store` (which serves the URI's
/// objects), with default options.
pub async fn table_over(uri: &str, store: Arc<dyn object_store::ObjectStore>) -> Table {
    let store = dar_io::TableStore::builder(uri)
        .with_store(store)
        .build()
        .unwrap();
    Table::from_store(store, TableOptions::new()).await.unwrap()
}

pub async fn collect(plan: &ScanPlan) -> Vec<RecordBatch> {
    plan.execute().try_collect().await.unwrap()
}

/// The values of `Int64` column `column` of `batches`, in order.
pub fn int64s(batches: &[RecordBatch], column: usize) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            let c = b
                .column(column)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>();
            c.expect("an Int64 column").values().to_vec()
        })
        .collect()
}

/// The `a` values of the rows of `t` that `filter` keeps, in file order,
/// and the scan's metrics.
pub async fn a_where(t: &Table, filter: &str) -> (Vec<i64>, dar_scan::MetricsSnapshot) {
    let plan = t
        .scan()
        .with_columns(["a"])
        .with_predicate_sql(filter)
        .build()
        .unwrap();
    let rows = int64s(&collect(&plan).await, 0);
    (rows, plan.metrics().snapshot())
}

pub fn num_rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

fn format_array(a: &ArrayRef, i: usize) -> String {
    let opts = FormatOptions::default().with_null("NULL");
    let f = ArrayFormatter::try_new(a.as_ref(), &opts).unwrap();
    f.value(i).to_string()
}

/// One string per row: `name=value` pairs in column-name order; sorted.
pub fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        let schema = b.schema();
        let mut order: Vec<usize> = (0..b.num_columns()).collect();
        order.sort_by_key(|i| schema.field(*i).name().clone());
        for r in 0..b.num_rows() {
            let cells: Vec<String> = order
                .iter()
                .map(|c| {
                    format!(
                        "{}={}",
                        schema.field(*c).name(),
                        format_array(b.column(*c), r)
                    )
                })
                .collect();
            out.push(cells.join(", "));
        }
    }
    out.sort();
    out
}

/// `batch` with each column cast to the type of the same-named field in
/// `target` (expected files store some types differently).
pub fn cast_like(batch: &RecordBatch, target: &[Field]) -> RecordBatch {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
        let t = target
            .iter()
            .find(|t| t.name() == f.name())
            .map(|t| t.data_type().clone())
            .unwrap_or_else(|| f.data_type().clone());
        let c = if c.data_type() == &t || matches!(t, DataType::Null) {
            c.clone()
        } else {
            arrow_cast::cast(c, &t).unwrap()
        };
        fields.push(Field::new(f.name(), c.data_type().clone(), true));
        columns.push(c);
    }
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).unwrap()
}

/// Reads a Parquet file whole with arrow-rs.
pub fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    reader.collect::<Result<Vec<_>, _>>().unwrap()
}
