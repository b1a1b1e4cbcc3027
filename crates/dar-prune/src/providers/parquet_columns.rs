//! Finding a predicate column among a Parquet file's leaf columns.

use arrow_schema::{Field, Schema};
use parquet::file::metadata::ParquetMetaData;

use crate::expr::ColumnPath;
use crate::schema_lookup::resolve;

/// Where a column of the predicate lives in one Parquet file.
#[derive(Debug)]
pub(crate) enum FileColumn {
    /// A primitive leaf: its Parquet column index and its Arrow field as
    /// the file stores it.
    Leaf { index: usize, field: Field },
    /// The file does not have the column (written before it was added):
    /// every row reads as NULL.
    Absent,
    /// Present, but not a plain leaf (inside a list or map, or a struct
    /// itself): nothing is known.
    Unknown,
}

/// The file's own Arrow schema (types as stored, e.g. `Int32` for a column
/// the table has since widened to `long`).
pub(crate) fn file_schema(metadata: &ParquetMetaData) -> Option<Schema> {
    let file = metadata.file_metadata();
    parquet::arrow::parquet_to_arrow_schema(file.schema_descr(), file.key_value_metadata()).ok()
}

pub(crate) fn locate(
    metadata: &ParquetMetaData,
    schema: Option<&Schema>,
    path: &ColumnPath,
) -> FileColumn {
    let Some(schema) = schema else {
        return FileColumn::Unknown;
    };
    let field = match resolve(schema, path) {
        Ok(f) => f.clone(),
        Err(crate::PruneError::UnknownColumn { .. }) => return FileColumn::Absent,
        Err(_) => return FileColumn::Unknown,
    };
    let descr = metadata.file_metadata().schema_descr();
    let index = descr
        .columns()
        .iter()
        .position(|c| c.path().parts() == path.parts());
    match index {
        Some(index) => FileColumn::Leaf { index, field },
        None => FileColumn::Unknown,
    }
}

/// The Parquet leaves a predicate reads, as a [`ProjectionMask`] for a
/// `RowFilter`'s `ArrowPredicateFn` (which then calls
/// [`Predicate::evaluate`] on the decoded columns). Columns the file lacks
/// are left out; the caller supplies them (as NULL) before evaluating.
///
/// [`Predicate::evaluate`]: crate::Predicate::evaluate
pub fn predicate_projection(
    predicate: &crate::Predicate,
    descr: &parquet::schema::types::SchemaDescriptor,
) -> parquet::arrow::ProjectionMask {
    let leaves = descr.columns().iter().enumerate().filter_map(|(i, c)| {
        let parts = c.path().parts();
        // A struct column selects all its leaves; a leaf selects itself.
        let wanted = predicate
            .columns()
            .iter()
            .any(|(p, _)| parts.starts_with(p.parts()));
        wanted.then_some(i)
    });
    parquet::arrow::ProjectionMask::leaves(descr, leaves)
}
