//! Finding a predicate column among a Parquet file's leaf columns.

use std::collections::HashMap;

use arrow_schema::{Field, Schema};
use parquet::file::metadata::ParquetMetaData;

use crate::expr::ColumnPath;
use crate::schema_lookup::resolve;

/// Where one column of a predicate lives in one Parquet file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ParquetColumn {
    /// A primitive leaf: its Parquet column index and its Arrow field as
    /// the file stores it (e.g. `Int32` for a column the table has since
    /// widened to `long`).
    Leaf {
        /// Index among the file's leaf columns.
        index: usize,
        /// The leaf as the file stores it.
        field: Field,
    },
    /// The file does not have the column (written before it was added):
    /// every row reads as NULL.
    Absent,
    /// Present, but not a plain leaf (inside a list or map, or a struct
    /// itself), or not resolved: nothing is known.
    Unknown,
}

/// Where the columns of a predicate live in one Parquet file: found by
/// name in the file's own schema ([`ParquetColumns::by_name`]), or as the
/// caller resolved them ([`ParquetColumns::resolved`]) — a reader that
/// matches table columns to file columns by field id, by physical name or
/// case-insensitively resolves each column once and hands the result to
/// row-group and page pruning alike, so that statistics are read from the
/// same column as the data.
#[derive(Debug, Clone)]
pub struct ParquetColumns {
    source: Source,
}

#[derive(Debug, Clone)]
enum Source {
    /// Exact names in the file's Arrow schema (`None`: it does not convert).
    ByName(Option<Schema>),
    /// The caller's resolution; a column not in the map is unknown.
    Resolved(HashMap<ColumnPath, ParquetColumn>),
}

impl ParquetColumns {
    /// Columns found by exact name in the file's schema (physical names
    /// when the table uses column mapping).
    pub fn by_name(metadata: &ParquetMetaData) -> Self {
        Self {
            source: Source::ByName(file_schema(metadata)),
        }
    }

    /// An empty resolution: every column is [`ParquetColumn::Unknown`]
    /// until [`ParquetColumns::insert`]ed.
    pub fn resolved() -> Self {
        Self {
            source: Source::Resolved(HashMap::new()),
        }
    }

    /// Records where the predicate column `path` lives. Ignored by a
    /// by-name resolution.
    pub fn insert(&mut self, path: ColumnPath, column: ParquetColumn) {
        if let Source::Resolved(map) = &mut self.source {
            map.insert(path, column);
        }
    }

    /// Where the caller resolved `path` to (`None` for a by-name
    /// resolution, or a column never inserted).
    pub fn get(&self, path: &ColumnPath) -> Option<&ParquetColumn> {
        match &self.source {
            Source::Resolved(map) => map.get(path),
            Source::ByName(_) => None,
        }
    }

    /// Where `path` lives in the file of `metadata`.
    pub(crate) fn locate(&self, metadata: &ParquetMetaData, path: &ColumnPath) -> ParquetColumn {
        match &self.source {
            Source::Resolved(map) => map.get(path).cloned().unwrap_or(ParquetColumn::Unknown),
            Source::ByName(schema) => locate_by_name(metadata, schema.as_ref(), path),
        }
    }
}

/// The file's own Arrow schema (types as stored, e.g. `Int32` for a column
/// the table has since widened to `long`).
fn file_schema(metadata: &ParquetMetaData) -> Option<Schema> {
    let file = metadata.file_metadata();
    parquet::arrow::parquet_to_arrow_schema(file.schema_descr(), file.key_value_metadata()).ok()
}

fn locate_by_name(
    metadata: &ParquetMetaData,
    schema: Option<&Schema>,
    path: &ColumnPath,
) -> ParquetColumn {
    let Some(schema) = schema else {
        return ParquetColumn::Unknown;
    };
    let field = match resolve(schema, path) {
        Ok(f) => f.clone(),
        Err(crate::PruneError::UnknownColumn { .. }) => return ParquetColumn::Absent,
        Err(_) => return ParquetColumn::Unknown,
    };
    let descr = metadata.file_metadata().schema_descr();
    let index = descr
        .columns()
        .iter()
        .position(|c| c.path().parts() == path.parts());
    match index {
        Some(index) => ParquetColumn::Leaf { index, field },
        None => ParquetColumn::Unknown,
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
