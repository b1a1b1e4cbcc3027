//! The caller's projection: top-level columns and nested struct fields
//! (`a.b`), in the caller's order, taken from a read batch.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields};

use crate::error::{Result, ScanError};

/// One output column: a path from a top-level column through struct fields.
#[derive(Debug, Clone)]
pub(crate) struct OutputColumn {
    /// Logical names, outermost first.
    pub path: Vec<String>,
    /// The output field (named by the dotted path).
    pub field: Field,
}

impl OutputColumn {
    /// Resolves `path` in the table's (relaxed) logical fields.
    pub(crate) fn resolve(fields: &Fields, path: &[String]) -> Result<Self> {
        let unknown = || ScanError::UnknownColumn {
            column: path.join("."),
        };
        let mut current = fields;
        let mut found: Option<&Field> = None;
        for part in path {
            if let Some(parent) = found {
                match parent.data_type() {
                    DataType::Struct(children) => current = children,
                    _ => return Err(unknown()),
                }
            }
            found = Some(
                current
                    .iter()
                    .find(|f| f.name() == part)
                    .ok_or_else(unknown)?,
            );
        }
        let field = found.ok_or_else(unknown)?;
        Ok(Self {
            path: path.to_vec(),
            field: field.clone().with_name(path.join(".")),
        })
    }

    /// This column of `batch` (which holds the top-level column by name).
    pub(crate) fn extract(&self, batch: &RecordBatch, file: &str) -> Result<ArrayRef> {
        let missing = || ScanError::InvalidTask {
            path: file.to_string(),
            reason: format!("column '{}' was not read", self.path.join(".")),
        };
        let mut parts = self.path.iter();
        let first = parts.next().ok_or_else(missing)?;
        let mut array = batch.column_by_name(first).ok_or_else(missing)?.clone();
        for part in parts {
            let s = array.as_struct_opt().ok_or_else(missing)?;
            let child = s.column_by_name(part).ok_or_else(missing)?.clone();
            // A null parent makes its fields null.
            array = match s.nulls() {
                Some(nulls) if nulls.null_count() > 0 => {
                    let data = child.to_data();
                    let merged = arrow_buffer::NullBuffer::union(Some(nulls), data.nulls());
                    let data = data
                        .into_builder()
                        .nulls(merged)
                        .build()
                        .map_err(|e| ScanError::arrow("nulling struct fields", file, e))?;
                    arrow_array::make_array(data)
                }
                _ => child,
            };
        }
        Ok(array)
    }
}
