//! Delta types to Arrow types (the mapping table of protocol §5).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Fields, Schema, TimeUnit};

use super::mapping::ColumnMappingMode;
use super::types::{
    COLUMN_MAPPING_PHYSICAL_NAME_KEY, DataType, PrimitiveType, StructField, StructType,
};
use crate::error::Result;

/// Arrow field-metadata key for the Parquet field id (what arrow-rs's Parquet
/// reader reads and writes).
pub const PARQUET_FIELD_ID_KEY: &str = "PARQUET:field_id";

/// Time zone of Arrow timestamps for Delta `timestamp` columns.
pub const UTC: &str = "UTC";

/// Child field name of Arrow lists built from Delta arrays.
pub const LIST_ELEMENT_NAME: &str = "element";
/// Entries field name of Arrow maps built from Delta maps.
pub const MAP_ENTRIES_NAME: &str = "key_value";

impl StructType {
    /// The Arrow schema with the logical names. In `name`/`id` mode each
    /// field's metadata carries `delta.columnMapping.physicalName` and
    /// `PARQUET:field_id` (the column-mapping id); other Delta metadata is not
    /// copied. Call it on [`StructType::physical_schema`] for the schema of
    /// the data files.
    pub fn to_arrow(&self, mode: ColumnMappingMode) -> Result<Schema> {
        Ok(Schema::new(struct_fields(self, mode)?))
    }
}

impl StructField {
    /// This field as an Arrow field (see [`StructType::to_arrow`]).
    pub fn to_arrow(&self, mode: ColumnMappingMode) -> Result<Field> {
        let field = Field::new(
            self.name.clone(),
            to_arrow_type(&self.data_type, mode)?,
            self.nullable,
        );
        if !mode.is_active() {
            return Ok(field);
        }
        let mut metadata = HashMap::new();
        metadata.insert(
            COLUMN_MAPPING_PHYSICAL_NAME_KEY.to_owned(),
            self.physical_name(mode)?.to_owned(),
        );
        if let Some(id) = self.column_mapping_id() {
            metadata.insert(PARQUET_FIELD_ID_KEY.to_owned(), id.to_string());
        }
        Ok(field.with_metadata(metadata))
    }
}

fn struct_fields(s: &StructType, mode: ColumnMappingMode) -> Result<Fields> {
    s.fields
        .iter()
        .map(|f| f.to_arrow(mode))
        .collect::<Result<Vec<_>>>()
        .map(Fields::from)
}

/// The Arrow type of a Delta type.
pub fn to_arrow_type(dt: &DataType, mode: ColumnMappingMode) -> Result<ArrowType> {
    Ok(match dt {
        DataType::Primitive(p) => primitive_to_arrow(*p),
        DataType::Struct(s) => ArrowType::Struct(struct_fields(s, mode)?),
        DataType::Array(a) => ArrowType::List(Arc::new(Field::new(
            LIST_ELEMENT_NAME,
            to_arrow_type(&a.element_type, mode)?,
            a.contains_null,
        ))),
        DataType::Map(m) => {
            let entries = Fields::from(vec![
                Field::new("key", to_arrow_type(&m.key_type, mode)?, false),
                Field::new(
                    "value",
                    to_arrow_type(&m.value_type, mode)?,
                    m.value_contains_null,
                ),
            ]);
            ArrowType::Map(
                Arc::new(Field::new(
                    MAP_ENTRIES_NAME,
                    ArrowType::Struct(entries),
                    false,
                )),
                false,
            )
        }
        DataType::Variant => variant_arrow_type(),
    })
}

/// Index of the field named `name` among Arrow `fields`: the exact match,
/// else the unique case-insensitive one (Spark resolves names
/// case-insensitively; an ambiguous name matches nothing).
///
/// ```
/// use arrow_schema::{DataType, Field, Fields};
/// use dar_log::schema::find_arrow_field;
///
/// let fields = Fields::from(vec![
///     Field::new("Id", DataType::Int64, true),
///     Field::new("a", DataType::Int64, true),
///     Field::new("A", DataType::Int64, true),
/// ]);
/// assert_eq!(find_arrow_field(&fields, "id"), Some(0));
/// assert_eq!(find_arrow_field(&fields, "A"), Some(2));
/// assert_eq!(find_arrow_field(&fields, "b"), None);
/// ```
pub fn find_arrow_field(fields: &Fields, name: &str) -> Option<usize> {
    fields.iter().position(|f| f.name() == name).or_else(|| {
        let mut matches = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.name().eq_ignore_ascii_case(name));
        match (matches.next(), matches.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    })
}

/// Unshredded variant: `Struct{metadata: Binary, value: Binary}`, both
/// required inside a present variant.
pub fn variant_arrow_type() -> ArrowType {
    ArrowType::Struct(Fields::from(vec![
        Field::new("metadata", ArrowType::Binary, false),
        Field::new("value", ArrowType::Binary, false),
    ]))
}

/// The Arrow type of a Delta primitive type.
pub fn primitive_to_arrow(p: PrimitiveType) -> ArrowType {
    match p {
        PrimitiveType::String => ArrowType::Utf8,
        PrimitiveType::Long => ArrowType::Int64,
        PrimitiveType::Integer => ArrowType::Int32,
        PrimitiveType::Short => ArrowType::Int16,
        PrimitiveType::Byte => ArrowType::Int8,
        PrimitiveType::Float => ArrowType::Float32,
        PrimitiveType::Double => ArrowType::Float64,
        PrimitiveType::Boolean => ArrowType::Boolean,
        PrimitiveType::Binary => ArrowType::Binary,
        PrimitiveType::Date => ArrowType::Date32,
        PrimitiveType::Timestamp => ArrowType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
        PrimitiveType::TimestampNtz => ArrowType::Timestamp(TimeUnit::Microsecond, None),
        PrimitiveType::Decimal(d) => ArrowType::Decimal128(d.precision(), d.scale() as i8),
        PrimitiveType::Void => ArrowType::Null,
        PrimitiveType::IntervalYearToMonth => ArrowType::Int32,
        PrimitiveType::IntervalDayToSecond => ArrowType::Int64,
    }
}
