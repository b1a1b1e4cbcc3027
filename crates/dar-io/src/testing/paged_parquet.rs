//! A Parquet file whose row groups and pages have exact row counts, for
//! tests and benches of page-level reads.

use std::ops::Range;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::errors::Result;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

/// Writes `row_groups` row groups of `rg_rows` rows whose data pages hold
/// exactly `page_rows` rows each, with page statistics and page indexes.
///
/// Rows are numbered `0..row_groups * rg_rows`; `columns` is called once per
/// page with that page's row numbers and returns its columns in `schema`'s
/// order. Dictionaries are off and the page byte limit is 16 MiB so pages are
/// cut by row count alone. `rg_rows` should be a multiple of `page_rows`.
///
/// ```
/// use std::sync::Arc;
///
/// use arrow_array::{ArrayRef, Int64Array};
/// use arrow_schema::{DataType, Field, Schema};
///
/// let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
/// let file = dar_io::testing::paged_parquet(schema, 2, 100, 10, |ids| {
///     vec![Arc::new(Int64Array::from_iter_values(ids)) as ArrayRef]
/// })?;
/// assert_eq!(&file[..4], b"PAR1");
/// # Ok::<(), parquet::errors::ParquetError>(())
/// ```
pub fn paged_parquet(
    schema: SchemaRef,
    row_groups: usize,
    rg_rows: usize,
    page_rows: usize,
    mut columns: impl FnMut(Range<i64>) -> Vec<ArrayRef>,
) -> Result<Vec<u8>> {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rg_rows))
        .set_data_page_row_count_limit(page_rows)
        .set_data_page_size_limit(16 * 1024 * 1024)
        .set_write_batch_size(page_rows)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, SchemaRef::clone(&schema), Some(props))?;
    for page in 0..row_groups * rg_rows / page_rows {
        let first = (page * page_rows) as i64;
        let batch = RecordBatch::try_new(
            SchemaRef::clone(&schema),
            columns(first..first + page_rows as i64),
        )?;
        w.write(&batch)?;
    }
    w.close()?;
    Ok(buf)
}
