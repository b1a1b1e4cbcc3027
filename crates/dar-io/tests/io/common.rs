//! Fixtures: a multi-row-group Parquet file with page indexes, a scan
//! helper, and an in-process S3 server.

use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use dar_io::ParquetReader;
use futures::TryStreamExt;
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, RowSelection, RowSelector};

/// Rows per file, rows per row group, rows per page.
pub const ROWS: usize = 40_000;
pub const RG_ROWS: usize = 10_000;
pub const PAGE_ROWS: usize = 1_000;

/// A Parquet file of `ROWS` rows (id, name, value), 4 row groups of 10
/// pages per column, page indexes written.
pub fn parquet_file() -> Bytes {
    parquet_file_from(0)
}

/// [`parquet_file`] with every id (and name, and value) moved by
/// `offset`: the same layout and size, other values and statistics.
pub fn parquet_file_from(offset: i64) -> Bytes {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("value", DataType::Float64, false),
    ]));
    let file = dar_io::testing::paged_parquet(schema, ROWS / RG_ROWS, RG_ROWS, PAGE_ROWS, |ids| {
        let ids = ids.start + offset..ids.end + offset;
        let names = ids.clone().map(|i| format!("name-{i:08}"));
        let values = ids.clone().map(|i| i as f64 * 0.5);
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(StringArray::from_iter_values(names)),
            Arc::new(Float64Array::from_iter_values(values)),
        ]
    })
    .unwrap();
    Bytes::from(file)
}

/// What a scan returned.
#[derive(Debug, PartialEq)]
pub struct ScanResult {
    pub rows: usize,
    pub id_sum: i64,
}

/// Reads every column with the page index, optionally only `selection`.
pub async fn scan(
    reader: ParquetReader,
    selection: Option<RowSelection>,
) -> parquet::errors::Result<ScanResult> {
    let options = ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required);
    let mut b = ParquetRecordBatchStreamBuilder::new_with_options(reader, options).await?;
    if let Some(s) = selection {
        b = b.with_row_selection(s);
    }
    let batches: Vec<RecordBatch> = b.build()?.try_collect().await?;
    let mut out = ScanResult { rows: 0, id_sum: 0 };
    for batch in batches {
        out.rows += batch.num_rows();
        let ids = batch
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        out.id_sum += ids.values().iter().sum::<i64>();
    }
    Ok(out)
}

pub fn full_result() -> ScanResult {
    let n = ROWS as i64;
    ScanResult {
        rows: ROWS,
        id_sum: n * (n - 1) / 2,
    }
}

/// Selects rows [500, 1500) of every row group: two pages per column per row
/// group out of ten.
pub fn selection() -> (RowSelection, ScanResult) {
    let mut sel = Vec::new();
    let mut sum = 0i64;
    for rg in 0..ROWS / RG_ROWS {
        sel.push(RowSelector::skip(500));
        sel.push(RowSelector::select(1000));
        sel.push(RowSelector::skip(RG_ROWS - 1500));
        let base = (rg * RG_ROWS) as i64;
        sum += (base + 500..base + 1500).sum::<i64>();
    }
    (
        RowSelection::from(sel),
        ScanResult {
            rows: 4000,
            id_sum: sum,
        },
    )
}

pub use dar_io::testing::S3Server;

/// Starts the S3 server with one bucket created through the S3 API. Fails
/// the test, saying why, if that is impossible.
pub async fn start_s3(bucket: &str) -> S3Server {
    let server = S3Server::start()
        .await
        .unwrap_or_else(|e| panic!("S3 test server: cannot start: {e}"));
    server
        .create_bucket(bucket)
        .await
        .unwrap_or_else(|e| panic!("S3 test server: {e}"));
    server
}
