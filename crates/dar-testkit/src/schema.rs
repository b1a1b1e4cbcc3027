//! Arrow schema to Delta `schemaString` (§5), and column mapping (§6): the
//! physical names and field ids that Parquet files, stats and partition
//! values use.
//!
//! The logical Arrow schema is what callers append. From it this module
//! derives, in one walk:
//!
//! ```text
//! logical field ─┬─> Delta JSON field {name, type, nullable, metadata}
//!                │      metadata = {delta.columnMapping.id, .physicalName} when mapped
//!                └─> physical Arrow field (name = physical name,
//!                       metadata PARQUET:field_id = id when mapped,
//!                       list element named `element`, map entries `key_value{key, value}`)
//! ```

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, MapArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

use crate::error::{Result, TestkitError};
use crate::json::Json;
use crate::naming::Ids;

/// The Arrow field metadata key that parquet-rs writes as the Thrift `field_id`.
pub const PARQUET_FIELD_ID_KEY: &str = "PARQUET:field_id";

/// `delta.columnMapping.mode` of a table (§6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColumnMappingMode {
    /// No mapping: Parquet columns carry the logical names.
    #[default]
    None,
    /// Parquet columns carry `col-<uuid>` physical names (and field ids).
    Name,
    /// As `Name`; readers resolve columns by Parquet field id.
    Id,
}

impl ColumnMappingMode {
    /// The table property value: `none`, `name` or `id`.
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnMappingMode::None => "none",
            ColumnMappingMode::Name => "name",
            ColumnMappingMode::Id => "id",
        }
    }
}

/// A schema in all the forms the writer needs.
#[derive(Debug, Clone)]
pub(crate) struct TableSchema {
    /// What callers append, partition columns included.
    pub(crate) logical: SchemaRef,
    /// The same columns with physical names and field ids (partition columns included).
    pub(crate) physical: SchemaRef,
    /// The Delta `schemaString`.
    pub(crate) delta_json: String,
    /// Highest column-mapping id handed out (0 without mapping).
    pub(crate) max_column_id: i64,
    /// Whether any column is `timestamp_ntz` (the `timestampNtz` feature).
    pub(crate) uses_timestamp_ntz: bool,
}

impl TableSchema {
    /// Derives the Delta JSON and physical schema; `ids` names physical columns.
    pub(crate) fn new(logical: SchemaRef, mode: ColumnMappingMode, ids: &mut Ids) -> Result<Self> {
        let mut walk = Walk {
            mode,
            ids,
            next_id: 0,
            ntz: false,
        };
        let mut json_fields = Vec::new();
        let mut physical_fields = Vec::new();
        for field in logical.fields() {
            let (json, physical) = walk.field(field, field.name())?;
            json_fields.push(json);
            physical_fields.push(physical);
        }
        let delta = Json::object()
            .with("type", Json::str("struct"))
            .with("fields", Json::Array(json_fields));
        Ok(Self {
            physical: Arc::new(Schema::new(physical_fields)),
            logical,
            delta_json: delta.render(),
            max_column_id: walk.next_id,
            uses_timestamp_ntz: walk.ntz,
        })
    }
}

struct Walk<'a> {
    mode: ColumnMappingMode,
    ids: &'a mut Ids,
    next_id: i64,
    ntz: bool,
}

impl Walk<'_> {
    /// One struct field: its Delta JSON and its physical Arrow field.
    fn field(&mut self, field: &Field, path: &str) -> Result<(Json, Field)> {
        let mut metadata = Json::object();
        let mut physical_name = field.name().clone();
        let mut field_id = None;
        if self.mode != ColumnMappingMode::None {
            self.next_id += 1;
            physical_name = format!("col-{}", self.ids.uuid());
            metadata.push("delta.columnMapping.id", Json::Int(self.next_id));
            metadata.push(
                "delta.columnMapping.physicalName",
                Json::str(&physical_name),
            );
            field_id = Some(self.next_id);
        }
        let (delta_type, physical_type) = self.data_type(field.data_type(), path)?;
        let json = Json::object()
            .with("name", Json::str(field.name()))
            .with("type", delta_type)
            .with("nullable", Json::Bool(field.is_nullable()))
            .with("metadata", metadata);
        let mut physical = Field::new(physical_name, physical_type, field.is_nullable());
        if let Some(id) = field_id {
            physical.set_metadata([(PARQUET_FIELD_ID_KEY.to_owned(), id.to_string())].into());
        }
        Ok((json, physical))
    }

    fn data_type(&mut self, data_type: &DataType, path: &str) -> Result<(Json, DataType)> {
        let primitive = |name: String| Ok((Json::Str(name), data_type.clone()));
        match data_type {
            DataType::Boolean => primitive("boolean".into()),
            DataType::Int8 => primitive("byte".into()),
            DataType::Int16 => primitive("short".into()),
            DataType::Int32 => primitive("integer".into()),
            DataType::Int64 => primitive("long".into()),
            DataType::Float32 => primitive("float".into()),
            DataType::Float64 => primitive("double".into()),
            DataType::Decimal128(p, s) if (1..=38).contains(p) && *s >= 0 && (*s as u8) <= *p => {
                primitive(format!("decimal({p},{s})"))
            }
            DataType::Utf8 => primitive("string".into()),
            DataType::Binary => primitive("binary".into()),
            DataType::Date32 => primitive("date".into()),
            DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => primitive("timestamp".into()),
            DataType::Timestamp(TimeUnit::Microsecond, None) => {
                self.ntz = true;
                primitive("timestamp_ntz".into())
            }
            DataType::Struct(fields) => {
                let mut json_fields = Vec::new();
                let mut physical = Vec::new();
                for child in fields {
                    let (json, field) = self.field(child, &format!("{path}.{}", child.name()))?;
                    json_fields.push(json);
                    physical.push(field);
                }
                let json = Json::object()
                    .with("type", Json::str("struct"))
                    .with("fields", Json::Array(json_fields));
                Ok((json, DataType::Struct(Fields::from(physical))))
            }
            DataType::List(element) => {
                let (element_json, element_type) =
                    self.data_type(element.data_type(), &format!("{path}.element"))?;
                let json = Json::object()
                    .with("type", Json::str("array"))
                    .with("elementType", element_json)
                    .with("containsNull", Json::Bool(element.is_nullable()));
                let physical = Field::new("element", element_type, element.is_nullable());
                Ok((json, DataType::List(Arc::new(physical))))
            }
            DataType::Map(entries, sorted) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return unsupported(path, data_type);
                };
                let [key, value] = kv.iter().collect::<Vec<_>>()[..] else {
                    return unsupported(path, data_type);
                };
                let (key_json, key_type) =
                    self.data_type(key.data_type(), &format!("{path}.key"))?;
                let (value_json, value_type) =
                    self.data_type(value.data_type(), &format!("{path}.value"))?;
                let json = Json::object()
                    .with("type", Json::str("map"))
                    .with("keyType", key_json)
                    .with("valueType", value_json)
                    .with("valueContainsNull", Json::Bool(value.is_nullable()));
                let physical_entries = Field::new(
                    "key_value",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", key_type, false),
                        Field::new("value", value_type, value.is_nullable()),
                    ])),
                    false,
                );
                Ok((json, DataType::Map(Arc::new(physical_entries), *sorted)))
            }
            _ => unsupported(path, data_type),
        }
    }
}

fn unsupported<T>(path: &str, data_type: &DataType) -> Result<T> {
    Err(TestkitError::UnsupportedType {
        column: path.to_owned(),
        data_type: data_type.clone(),
    })
}

/// Relabels `batch` (logical names) with the physical `schema`: same
/// buffers, new field names and ids at every depth.
pub(crate) fn to_physical(batch: &RecordBatch, schema: SchemaRef) -> Result<RecordBatch> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| relabel(column, field.data_type()))
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new(schema, columns)
        .map_err(TestkitError::arrow("relabel batch to physical names"))
}

fn relabel(column: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    let context = || TestkitError::arrow("relabel nested column");
    Ok(match to {
        DataType::Struct(fields) => {
            let array = column.as_struct();
            let children = array
                .columns()
                .iter()
                .zip(fields)
                .map(|(child, field)| relabel(child, field.data_type()))
                .collect::<Result<Vec<_>>>()?;
            let relabeled = StructArray::try_new(fields.clone(), children, array.nulls().cloned())
                .map_err(context())?;
            Arc::new(relabeled)
        }
        DataType::List(element) => {
            let array = column.as_list::<i32>();
            let values = relabel(array.values(), element.data_type())?;
            let relabeled = ListArray::try_new(
                element.clone(),
                array.offsets().clone(),
                values,
                array.nulls().cloned(),
            )
            .map_err(context())?;
            Arc::new(relabeled)
        }
        DataType::Map(entries, sorted) => {
            let array = column.as_map();
            let old_entries: ArrayRef = Arc::new(array.entries().clone());
            let new_entries = relabel(&old_entries, entries.data_type())?;
            let relabeled = MapArray::try_new(
                entries.clone(),
                array.offsets().clone(),
                new_entries.as_struct().clone(),
                array.nulls().cloned(),
                *sorted,
            )
            .map_err(context())?;
            Arc::new(relabeled)
        }
        _ => column.clone(),
    })
}

#[cfg(test)]
mod tests;
