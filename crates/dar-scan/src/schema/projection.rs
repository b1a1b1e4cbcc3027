//! The caller's projection: top-level columns and nested struct fields
//! (`a.b`), in the caller's order, resolved once per scan to field indexes
//! so that taking them from a batch is indexing only.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field, Fields};

use crate::errors::error::{Result, ScanError};

/// One output column: a path from a top-level column through struct fields.
#[derive(Debug, Clone)]
pub(crate) struct OutputColumn {
    /// Logical names, outermost first.
    pub path: Vec<String>,
    /// The top-level field (index into the table's fields).
    pub root: usize,
    /// Below the top-level field: the child index at each struct level.
    pub children: Vec<usize>,
    /// The output field (named by the dotted path).
    pub field: Field,
}

impl OutputColumn {
    /// Resolves `path` in the table's (relaxed) logical `fields`, whose
    /// top-level names `index` maps to positions.
    pub(crate) fn resolve(
        fields: &Fields,
        index: &HashMap<&str, usize>,
        path: &[String],
    ) -> Result<Self> {
        let unknown = || ScanError::UnknownColumn {
            column: path.join("."),
        };
        let (first, rest) = path.split_first().ok_or_else(unknown)?;
        let root = *index.get(first.as_str()).ok_or_else(unknown)?;
        let mut field: &Field = &fields[root];
        let mut children = Vec::with_capacity(rest.len());
        for part in rest {
            let DataType::Struct(inner) = field.data_type() else {
                return Err(unknown());
            };
            let (i, f) = inner.find(part).ok_or_else(unknown)?;
            children.push(i);
            field = f;
        }
        Ok(Self {
            path: path.to_vec(),
            root,
            children,
            field: field.clone().with_name(path.join(".")),
        })
    }

    /// This column from `top`, the array of its top-level field: walks the
    /// struct levels by index; a null parent makes its fields null.
    pub(crate) fn extract(&self, top: &ArrayRef, file: &str) -> Result<ArrayRef> {
        let missing = || ScanError::InvalidTask {
            path: file.to_string(),
            reason: format!("column '{}' was not read", self.path.join(".")),
        };
        let mut array = ArrayRef::clone(top);
        for i in &self.children {
            let s = array.as_struct_opt().ok_or_else(missing)?;
            let child = s.columns().get(*i).ok_or_else(missing)?.clone();
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
