//! The active files of a snapshot as one Arrow [`RecordBatch`]: what
//! `dar files` prints and what the Python `Table.files()` returns, built in
//! one place from the snapshot's file index.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use dar_log::FileIndex;

/// Which columns [`files_batch`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FileColumns {
    /// The columns people read: `path`, `size`, `num_records` (null where
    /// the log has none, or an impossible one: dar-log's statistics rule),
    /// one column per partition column (typed), `deleted_rows` (the
    /// deletion vector's cardinality) and `dv` (its storage type).
    #[default]
    Summary,
    /// Every field: `path`, `size`, `modification_time`, `num_records`, the
    /// partition columns, and the deletion-vector descriptor as
    /// `dv_storage_type`, `dv_path_or_inline_dv`, `dv_offset`,
    /// `dv_size_in_bytes`, `dv_cardinality`.
    Full,
}

/// The file index as one batch, one row per active file in file-index
/// order. The arrays are shared with the index, not copied.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample");
/// let table = dar_scan::Table::open(sample).await?;
/// let index = table.snapshot().file_index()?;
/// let files = dar_scan::files_batch(index, dar_scan::FileColumns::Summary)?;
/// assert_eq!(files.num_rows(), 4);
/// assert_eq!(files.schema().field(0).name(), "path");
/// # Ok(())
/// # }
/// ```
pub fn files_batch(index: &FileIndex, columns: FileColumns) -> Result<RecordBatch, ArrowError> {
    let full = columns == FileColumns::Full;
    let mut fields = vec![
        Field::new("path", DataType::Utf8, false),
        Field::new("size", DataType::Int64, true),
    ];
    let mut arrays: Vec<ArrayRef> =
        vec![Arc::new(index.path.clone()), Arc::new(index.size.clone())];
    if full {
        fields.push(Field::new("modification_time", DataType::Int64, true));
        arrays.push(Arc::new(index.modification_time.clone()));
    }
    fields.push(Field::new("num_records", DataType::Int64, true));
    arrays.push(Arc::new(index.stats.num_records.clone()));
    for (c, a) in index.partition_columns.iter().zip(&index.partition_values) {
        fields.push(Field::new(&c.name, a.data_type().clone(), true));
        arrays.push(Arc::clone(a));
    }
    let dv = &index.dv;
    let more: Vec<(&str, ArrayRef)> = if full {
        vec![
            ("dv_storage_type", Arc::new(dv.storage_type.clone())),
            (
                "dv_path_or_inline_dv",
                Arc::new(dv.path_or_inline_dv.clone()),
            ),
            ("dv_offset", Arc::new(dv.offset.clone())),
            ("dv_size_in_bytes", Arc::new(dv.size_in_bytes.clone())),
            ("dv_cardinality", Arc::new(dv.cardinality.clone())),
        ]
    } else {
        vec![
            ("deleted_rows", Arc::new(dv.cardinality.clone())),
            ("dv", Arc::new(dv.storage_type.clone())),
        ]
    };
    for (name, a) in more {
        fields.push(Field::new(name, a.data_type().clone(), true));
        arrays.push(a);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn summary_and_full_columns_of_the_sample() {
        let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample");
        let table = crate::Table::open(sample).await.unwrap();
        let index = table.snapshot().file_index().unwrap();
        let names = |b: &RecordBatch| -> Vec<String> {
            b.schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect()
        };
        let summary = files_batch(index, FileColumns::Summary).unwrap();
        assert_eq!(
            names(&summary),
            ["path", "size", "num_records", "day", "deleted_rows", "dv"]
        );
        assert_eq!(summary.num_rows(), 4);
        assert_eq!(summary.column(3).data_type(), &DataType::Date32);
        let full = files_batch(index, FileColumns::Full).unwrap();
        assert_eq!(
            names(&full),
            [
                "path",
                "size",
                "modification_time",
                "num_records",
                "day",
                "dv_storage_type",
                "dv_path_or_inline_dv",
                "dv_offset",
                "dv_size_in_bytes",
                "dv_cardinality"
            ]
        );
        // Three of the sample's four files carry a deletion vector.
        assert_eq!(full.column(9).null_count(), 1);
    }
}
