//! Partition values (protocol §7) into one typed Arrow column per partition
//! column.
//!
//! Each file's `add.partitionValues` is a `map<physical name, string|null>`.
//! [`PartitionValuesBuilder`] takes them one file at a time
//! ([`push`](PartitionValuesBuilder::push)), or a whole checkpoint batch at
//! once (a `partitionValues` `MapArray`, or a typed `partitionValues_parsed`
//! `StructArray`), and yields one array per partition column, typed from the
//! schema.
//!
//! Rules:
//! * JSON `null`, an absent key and the empty string are all null, for every
//!   type. The spec reads `""` as null; kernel-rs keeps `""` for string and
//!   binary (§13.3), but Spark never writes `""` (it writes null), so the
//!   spec's reading loses nothing real.
//! * Every other value must parse as the column's type: an unparseable value
//!   is an error naming the file, the column and the value, never a null.
//! * Forms: integers as decimal text; floats in Java's `toString` forms
//!   (`1.0E10`, `NaN`, `Infinity`); decimals from their text, exponent forms
//!   included, exactly (never through `f64`); booleans in any case; dates
//!   `YYYY-MM-DD`; timestamps `YYYY-MM-DD HH:MM:SS[.ffffff]` (read as UTC, as
//!   kernel-rs does: the writer's zone is unknowable) or ISO-8601/RFC 3339
//!   with any offset; `timestamp_ntz` without a zone; binary as the UTF-8
//!   bytes of the (already JSON-decoded) string.
//!
//! ```
//! use dar_log::partition::{PartitionColumn, PartitionValuesBuilder};
//! use dar_log::schema::PrimitiveType;
//! use arrow_array::{Array, Date32Array};
//!
//! let columns = vec![PartitionColumn::new("day", "day", PrimitiveType::Date)];
//! let mut builder = PartitionValuesBuilder::new(columns);
//! builder.push("a.parquet", &[("day", Some("1970-01-02"))])?;
//! builder.push("b.parquet", &[("day", None)])?;
//! let arrays = builder.finish()?;
//! let days = arrays[0].as_any().downcast_ref::<Date32Array>().unwrap();
//! assert_eq!(days.value(0), 1);
//! assert!(days.is_null(1));
//! # Ok::<(), dar_log::error::LogError>(())
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, MapArray, StructArray};
use arrow_schema::DataType as ArrowType;

use crate::error::{LogError, Result};
use crate::scalar::{ScalarBuilder, cast_column};
use crate::schema::{
    ColumnMappingMode, DataType, PrimitiveType, StructType, find_arrow_field, primitive_to_arrow,
};

/// One partition column: its names and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionColumn {
    /// Logical name (as in `metaData.partitionColumns`).
    pub name: String,
    /// Physical name: the key in `partitionValues` and the field name in
    /// `partitionValues_parsed`.
    pub physical_name: String,
    /// The column's type.
    pub data_type: PrimitiveType,
}

impl PartitionColumn {
    /// A column from its names and type.
    pub fn new(
        name: impl Into<String>,
        physical_name: impl Into<String>,
        data_type: PrimitiveType,
    ) -> Self {
        Self {
            name: name.into(),
            physical_name: physical_name.into(),
            data_type,
        }
    }

    /// Resolves `metaData.partitionColumns` (logical, top-level names)
    /// against the schema: each must exist and be a primitive type.
    pub fn resolve_all(
        schema: &StructType,
        partition_columns: &[String],
        mode: ColumnMappingMode,
    ) -> Result<Vec<Self>> {
        partition_columns
            .iter()
            .map(|name| {
                let field = schema.field(name).ok_or_else(|| LogError::ColumnNotFound {
                    column: name.clone(),
                })?;
                let DataType::Primitive(data_type) = field.data_type else {
                    return Err(LogError::InvalidSchema {
                        field: name.clone(),
                        reason: format!(
                            "partition column has non-primitive type {}",
                            field.data_type
                        ),
                    });
                };
                Ok(Self::new(
                    field.name.clone(),
                    field.physical_name(mode)?,
                    data_type,
                ))
            })
            .collect()
    }
}

/// Builds typed partition-value columns for many files.
///
/// After an error the builder is left with the failing file's remaining
/// columns null-filled (so its columns stay aligned); callers are expected to
/// stop and report the error rather than finish.
#[derive(Debug)]
pub struct PartitionValuesBuilder {
    columns: Vec<PartitionColumn>,
    builders: Vec<ScalarBuilder>,
    by_physical: HashMap<String, usize>,
    /// Finished pieces, when `extend_parsed` interleaves with text input.
    chunks: Vec<Vec<ArrayRef>>,
    /// Per column, the text of the current file (reused between files).
    row: Vec<Option<usize>>,
}

impl PartitionValuesBuilder {
    /// An empty builder for these columns (in output order).
    pub fn new(columns: Vec<PartitionColumn>) -> Self {
        Self::with_capacity(columns, 0)
    }

    /// An empty builder with room for `files` files.
    pub fn with_capacity(columns: Vec<PartitionColumn>, files: usize) -> Self {
        let builders = columns
            .iter()
            .map(|c| ScalarBuilder::new(c.data_type, files))
            .collect();
        let by_physical = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.physical_name.clone(), i))
            .collect();
        let row = vec![None; columns.len()];
        Self {
            columns,
            builders,
            by_physical,
            chunks: Vec::new(),
            row,
        }
    }

    /// The columns, in output order.
    pub fn columns(&self) -> &[PartitionColumn] {
        &self.columns
    }

    /// Appends one file's values, given as `(physical name, value)` pairs.
    /// Keys that are not partition columns are ignored; a missing column is
    /// null. `file` names the file in errors.
    pub fn push(&mut self, file: &str, values: &[(&str, Option<&str>)]) -> Result<()> {
        self.row.iter_mut().for_each(|slot| *slot = None);
        for (i, (key, value)) in values.iter().enumerate() {
            if let (Some(&col), Some(_)) = (self.by_physical.get(*key), value) {
                self.row[col] = Some(i);
            }
        }
        for col in 0..self.columns.len() {
            let text = self.row[col].and_then(|i| values[i].1);
            if let Err(e) = self.append(col, text, file) {
                for rest in col..self.columns.len() {
                    self.builders[rest].append_null();
                }
                return Err(e);
            }
        }
        Ok(())
    }

    fn append(&mut self, col: usize, text: Option<&str>, file: &str) -> Result<()> {
        let builder = &mut self.builders[col];
        match text {
            None | Some("") => builder.append_null(),
            Some(text) => {
                if !builder.append_text(text) {
                    let column = &self.columns[col];
                    return Err(LogError::PartitionValue {
                        file: file.to_owned(),
                        column: column.name.clone(),
                        value: text.to_owned(),
                        data_type: column.data_type.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Appends every row of a checkpoint's `add.partitionValues` column (a
    /// `map<string, string>`). A null map is a file with all values null.
    /// `file_of_row` names row `i`'s file in errors (e.g. its `add.path`).
    pub fn extend_map(
        &mut self,
        map: &MapArray,
        file_of_row: impl Fn(usize) -> String,
    ) -> Result<()> {
        let keys = as_utf8(map.keys(), "partitionValues.key")?;
        let values = as_utf8(map.values(), "partitionValues.value")?;
        let (keys, values) = (keys.as_string::<i32>(), values.as_string::<i32>());
        let offsets = map.value_offsets();
        let mut pairs: Vec<(&str, Option<&str>)> = Vec::with_capacity(self.columns.len());
        for row in 0..map.len() {
            pairs.clear();
            if map.is_valid(row) {
                let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                for entry in start..end {
                    if keys.is_valid(entry) {
                        pairs.push((
                            keys.value(entry),
                            values.is_valid(entry).then(|| values.value(entry)),
                        ));
                    }
                }
            }
            // Only build the file name when there is an error to report.
            if let Err(e) = self.push("", &pairs) {
                return Err(with_file(e, file_of_row(row)));
            }
        }
        Ok(())
    }

    /// Appends every row of a checkpoint's `add.partitionValues_parsed`
    /// column: a struct with one typed field per partition column, named by
    /// physical name (exact match first, then case-insensitive). Fields are
    /// cast to the column's type; a missing field or a failed cast is an error.
    pub fn extend_parsed(&mut self, parsed: &StructArray) -> Result<()> {
        let mut arrays = Vec::with_capacity(self.columns.len());
        for column in &self.columns {
            let target = primitive_to_arrow(column.data_type);
            let field_index =
                find_arrow_field(parsed.fields(), &column.physical_name).ok_or_else(|| {
                    unexpected(
                        &format!("partitionValues_parsed.{}", column.physical_name),
                        &target.to_string(),
                        &ArrowType::Null,
                    )
                })?;
            let child = with_parent_nulls(parsed.column(field_index), parsed.nulls())?;
            let array = if child.data_type() == &target {
                child
            } else {
                cast_column(&child, &target, false).map_err(|source| {
                    LogError::arrow(
                        format!(
                            "casting partitionValues_parsed.{} to {target}",
                            column.physical_name
                        ),
                        source,
                    )
                })?
            };
            arrays.push(array);
        }
        self.flush();
        self.chunks.push(arrays);
        Ok(())
    }

    /// Moves the text-built rows so far into a finished chunk.
    fn flush(&mut self) {
        if self.builders.first().is_some_and(|b| b.len() > 0) {
            let arrays = self
                .builders
                .iter_mut()
                .map(ScalarBuilder::finish)
                .collect();
            self.chunks.push(arrays);
        }
    }

    /// One array per partition column, in column order, one row per file.
    pub fn finish(mut self) -> Result<Vec<ArrayRef>> {
        self.flush();
        if self.chunks.len() == 1 {
            return Ok(self.chunks.pop().unwrap_or_default());
        }
        (0..self.columns.len())
            .map(|col| {
                if self.chunks.is_empty() {
                    return Ok(self.builders[col].finish());
                }
                let parts: Vec<&dyn Array> = self.chunks.iter().map(|c| c[col].as_ref()).collect();
                arrow_select::concat::concat(&parts).map_err(|source| {
                    LogError::arrow(
                        format!("concatenating partition column {}", self.columns[col].name),
                        source,
                    )
                })
            })
            .collect()
    }
}

fn with_file(error: LogError, file: String) -> LogError {
    match error {
        LogError::PartitionValue {
            column,
            value,
            data_type,
            ..
        } => LogError::PartitionValue {
            file,
            column,
            value,
            data_type,
        },
        other => other,
    }
}

/// A string column as `Utf8` (checkpoint readers may hand over `LargeUtf8`,
/// `Utf8View` or dictionary-encoded strings).
fn as_utf8(array: &ArrayRef, column: &str) -> Result<ArrayRef> {
    match array.data_type() {
        ArrowType::Utf8 => Ok(Arc::clone(array)),
        ArrowType::LargeUtf8 | ArrowType::Utf8View | ArrowType::Dictionary(_, _) => {
            arrow_cast::cast(array, &ArrowType::Utf8)
                .map_err(|_| unexpected(column, "Utf8", array.data_type()))
        }
        other => Err(unexpected(column, "Utf8", other)),
    }
}

fn unexpected(column: &str, expected: &str, found: &ArrowType) -> LogError {
    LogError::UnexpectedArrowType {
        column: column.to_owned(),
        expected: expected.to_owned(),
        found: found.to_string(),
    }
}

/// A struct child with its parent's nulls applied (Arrow does not require a
/// child to be null where its parent is).
pub(crate) fn with_parent_nulls(
    child: &ArrayRef,
    parent: Option<&arrow_buffer::NullBuffer>,
) -> Result<ArrayRef> {
    let Some(parent) = parent else {
        return Ok(child.clone());
    };
    if child.data_type() == &ArrowType::Null {
        // A NullArray is null everywhere already and may carry no bitmap.
        return Ok(child.clone());
    }
    let nulls = arrow_buffer::NullBuffer::union(Some(parent), child.nulls());
    let data = child
        .to_data()
        .into_builder()
        .nulls(nulls)
        .build()
        .map_err(|source| LogError::arrow("applying parent nulls", source))?;
    Ok(arrow_array::make_array(data))
}

#[cfg(test)]
mod tests;
