//! Column mapping (protocol §6): the mode and the physical schema.

use std::fmt;

use super::types::{ArrayType, DataType, MapType, StructField, StructType};
use crate::error::{LogError, Result};

/// Table property that selects the column-mapping mode.
pub const COLUMN_MAPPING_MODE_KEY: &str = "delta.columnMapping.mode";

/// How data files name their columns.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ColumnMappingMode {
    /// Files use the logical names.
    #[default]
    None,
    /// Files use `delta.columnMapping.physicalName` at every struct level.
    Name,
    /// Files are matched by Parquet field id against `delta.columnMapping.id`
    /// (physical names are still used in stats and partition values).
    Id,
}

impl ColumnMappingMode {
    /// The effective mode from the `delta.columnMapping.mode` property.
    ///
    /// `protocol_supports_mapping` is whether the protocol enables column
    /// mapping (reader version 2, or 3 with `columnMapping` among the reader
    /// features); without it the property is inert and the mode is `None`.
    /// An unknown mode name is an error.
    pub fn from_property(property: Option<&str>, protocol_supports_mapping: bool) -> Result<Self> {
        if !protocol_supports_mapping {
            return Ok(Self::None);
        }
        match property {
            None => Ok(Self::None),
            Some(mode) => match mode.to_ascii_lowercase().as_str() {
                "none" => Ok(Self::None),
                "name" => Ok(Self::Name),
                "id" => Ok(Self::Id),
                _ => Err(LogError::UnknownColumnMappingMode {
                    mode: mode.to_owned(),
                }),
            },
        }
    }

    /// True for `Name` and `Id`.
    pub fn is_active(&self) -> bool {
        !matches!(self, Self::None)
    }
}

impl fmt::Display for ColumnMappingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Name => "name",
            Self::Id => "id",
        })
    }
}

impl StructField {
    /// The name this field has in data files, stats and partition values
    /// under `mode`. In `name`/`id` mode a field without a string
    /// `delta.columnMapping.physicalName` is an error naming it.
    pub fn physical_name(&self, mode: ColumnMappingMode) -> Result<&str> {
        if !mode.is_active() {
            return Ok(&self.name);
        }
        self.column_mapping_physical_name()
            .ok_or_else(|| LogError::ColumnMapping {
                field: self.name.clone(),
                mode,
                reason: "missing delta.columnMapping.physicalName".to_owned(),
            })
    }
}

impl StructType {
    /// The physical schema under `mode`: every struct field, at every depth
    /// (inside arrays and maps too), renamed to its physical name. Metadata,
    /// including the column-mapping id, is kept. In `None` mode this is a
    /// copy of the logical schema. In `Id` mode every field must also carry a
    /// valid `delta.columnMapping.id`.
    pub fn physical_schema(&self, mode: ColumnMappingMode) -> Result<StructType> {
        physical_struct(self, mode, "")
    }
}

fn physical_struct(s: &StructType, mode: ColumnMappingMode, parent: &str) -> Result<StructType> {
    let mut fields = Vec::with_capacity(s.fields.len());
    for field in &s.fields {
        let path = if parent.is_empty() {
            field.name.clone()
        } else {
            format!("{parent}.{}", field.name)
        };
        let physical = field.physical_name(mode).map_err(|e| match e {
            LogError::ColumnMapping { mode, reason, .. } => LogError::ColumnMapping {
                field: path.clone(),
                mode,
                reason,
            },
            other => other,
        })?;
        if mode == ColumnMappingMode::Id && field.column_mapping_id().is_none() {
            return Err(LogError::ColumnMapping {
                field: path,
                mode,
                reason: "missing or invalid delta.columnMapping.id".to_owned(),
            });
        }
        fields.push(StructField {
            name: physical.to_owned(),
            data_type: physical_type(&field.data_type, mode, &path)?,
            nullable: field.nullable,
            metadata: field.metadata.clone(),
        });
    }
    Ok(StructType::new(fields))
}

fn physical_type(dt: &DataType, mode: ColumnMappingMode, path: &str) -> Result<DataType> {
    Ok(match dt {
        DataType::Struct(s) => DataType::Struct(Box::new(physical_struct(s, mode, path)?)),
        DataType::Array(a) => DataType::Array(Box::new(ArrayType {
            element_type: physical_type(&a.element_type, mode, &format!("{path}.element"))?,
            contains_null: a.contains_null,
        })),
        DataType::Map(m) => DataType::Map(Box::new(MapType {
            key_type: physical_type(&m.key_type, mode, &format!("{path}.key"))?,
            value_type: physical_type(&m.value_type, mode, &format!("{path}.value"))?,
            value_contains_null: m.value_contains_null,
        })),
        DataType::Primitive(_) | DataType::Variant => dt.clone(),
    })
}
