//! The Delta schema as typed Rust values (protocol §5).

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{LogError, Result};

/// Field-metadata key holding the column-mapping id (a JSON number).
pub const COLUMN_MAPPING_ID_KEY: &str = "delta.columnMapping.id";
/// Field-metadata key holding the column-mapping physical name (a JSON string).
pub const COLUMN_MAPPING_PHYSICAL_NAME_KEY: &str = "delta.columnMapping.physicalName";
/// Field-metadata key holding the type-widening history (a JSON array).
pub const TYPE_CHANGES_KEY: &str = "delta.typeChanges";

/// Largest decimal precision Delta (and `Decimal128`) allows.
pub const MAX_DECIMAL_PRECISION: u8 = 38;

/// A Delta `decimal(p,s)`: `1 <= precision <= 38`, `0 <= scale <= precision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecimalType {
    precision: u8,
    scale: u8,
}

impl DecimalType {
    /// A decimal type, or `None` when precision or scale is out of range.
    pub fn try_new(precision: u8, scale: u8) -> Option<Self> {
        ((1..=MAX_DECIMAL_PRECISION).contains(&precision) && scale <= precision)
            .then_some(Self { precision, scale })
    }

    /// Total number of digits.
    pub fn precision(&self) -> u8 {
        self.precision
    }

    /// Digits after the decimal point.
    pub fn scale(&self) -> u8 {
        self.scale
    }
}

/// A Delta primitive type, named as in `schemaString`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    /// `string`: UTF-8 text.
    String,
    /// `long`: i64.
    Long,
    /// `integer`: i32.
    Integer,
    /// `short`: i16.
    Short,
    /// `byte`: i8.
    Byte,
    /// `float`: IEEE 32-bit.
    Float,
    /// `double`: IEEE 64-bit.
    Double,
    /// `boolean`.
    Boolean,
    /// `binary`: bytes.
    Binary,
    /// `date`: days since 1970-01-01.
    Date,
    /// `timestamp`: microseconds since the epoch, a UTC instant.
    Timestamp,
    /// `timestamp_ntz`: microseconds, wall-clock time without a zone.
    TimestampNtz,
    /// `decimal(p,s)`.
    Decimal(DecimalType),
    /// `void`: always null.
    Void,
    /// `interval year to month` (not in the spec; kernel-rs accepts it): months as i32.
    IntervalYearToMonth,
    /// `interval day to second` (not in the spec; kernel-rs accepts it): microseconds as i64.
    IntervalDayToSecond,
}

impl PrimitiveType {
    /// Parses a Delta primitive type name (`"long"`, `"decimal(10, 2)"`, ...).
    /// Returns `None` for names that are not primitive types.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "string" => Self::String,
            "long" => Self::Long,
            "integer" => Self::Integer,
            "short" => Self::Short,
            "byte" => Self::Byte,
            "float" => Self::Float,
            "double" => Self::Double,
            "boolean" => Self::Boolean,
            "binary" => Self::Binary,
            "date" => Self::Date,
            "timestamp" => Self::Timestamp,
            "timestamp_ntz" => Self::TimestampNtz,
            "void" => Self::Void,
            "interval year to month" => Self::IntervalYearToMonth,
            "interval day to second" => Self::IntervalDayToSecond,
            // Spark's `DecimalType.USER_DEFAULT`.
            "decimal" => Self::Decimal(DecimalType {
                precision: 10,
                scale: 0,
            }),
            other => return parse_decimal_name(other).map(Self::Decimal),
        })
    }

    /// Whether per-file stats carry `minValues`/`maxValues` for this type
    /// (the kernel-rs eligibility list of protocol §8.1).
    pub fn has_min_max_stats(&self) -> bool {
        matches!(
            self,
            Self::Byte
                | Self::Short
                | Self::Integer
                | Self::Long
                | Self::Float
                | Self::Double
                | Self::Decimal(_)
                | Self::Date
                | Self::Timestamp
                | Self::TimestampNtz
                | Self::String
        )
    }
}

/// `decimal(p,s)` with optional spaces around the numbers; `None` when not that
/// shape or out of range.
fn parse_decimal_name(name: &str) -> Option<DecimalType> {
    let inner = name.strip_prefix("decimal(")?.strip_suffix(')')?;
    let (p, s) = inner.split_once(',')?;
    DecimalType::try_new(p.trim().parse().ok()?, s.trim().parse().ok()?)
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::String => "string",
            Self::Long => "long",
            Self::Integer => "integer",
            Self::Short => "short",
            Self::Byte => "byte",
            Self::Float => "float",
            Self::Double => "double",
            Self::Boolean => "boolean",
            Self::Binary => "binary",
            Self::Date => "date",
            Self::Timestamp => "timestamp",
            Self::TimestampNtz => "timestamp_ntz",
            Self::Void => "void",
            Self::IntervalYearToMonth => "interval year to month",
            Self::IntervalDayToSecond => "interval day to second",
            Self::Decimal(d) => return write!(f, "decimal({},{})", d.precision, d.scale),
        };
        f.write_str(name)
    }
}

/// Any Delta data type.
#[derive(Debug, Clone, PartialEq)]
pub enum DataType {
    /// A primitive (leaf) type.
    Primitive(PrimitiveType),
    /// `{"type":"array", ...}`.
    Array(Box<ArrayType>),
    /// `{"type":"map", ...}`.
    Map(Box<MapType>),
    /// `{"type":"struct", ...}`.
    Struct(Box<StructType>),
    /// `variant` (unshredded: a metadata and a value binary).
    Variant,
}

impl DataType {
    /// The primitive type, when this is one.
    pub fn as_primitive(&self) -> Option<PrimitiveType> {
        match self {
            Self::Primitive(p) => Some(*p),
            _ => None,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Primitive(p) => p.fmt(f),
            Self::Array(a) => write!(f, "array<{}>", a.element_type),
            Self::Map(m) => write!(f, "map<{},{}>", m.key_type, m.value_type),
            Self::Struct(s) => {
                f.write_str("struct<")?;
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}:{}", field.name, field.data_type)?;
                }
                f.write_str(">")
            }
            Self::Variant => f.write_str("variant"),
        }
    }
}

/// An array type.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayType {
    /// Type of the elements.
    pub element_type: DataType,
    /// Whether elements may be null.
    pub contains_null: bool,
}

/// A map type. Keys are never null.
#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    /// Type of the keys.
    pub key_type: DataType,
    /// Type of the values.
    pub value_type: DataType,
    /// Whether values may be null.
    pub value_contains_null: bool,
}

/// One field of a struct.
#[derive(Debug, Clone, PartialEq)]
pub struct StructField {
    /// Logical name.
    pub name: String,
    /// Type.
    pub data_type: DataType,
    /// Declared nullability (never trusted to assert data has no nulls).
    pub nullable: bool,
    /// Field metadata: arbitrary JSON values keyed by name.
    pub metadata: BTreeMap<String, serde_json::Value>,
}

impl StructField {
    /// A field with empty metadata.
    pub fn new(name: impl Into<String>, data_type: DataType, nullable: bool) -> Self {
        Self {
            name: name.into(),
            data_type,
            nullable,
            metadata: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) one metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// `delta.columnMapping.id`, when present and a non-negative 32-bit integer.
    pub fn column_mapping_id(&self) -> Option<i32> {
        let id = self.metadata.get(COLUMN_MAPPING_ID_KEY)?.as_i64()?;
        i32::try_from(id).ok().filter(|id| *id >= 0)
    }

    /// `delta.columnMapping.physicalName`, when present and a string.
    pub fn column_mapping_physical_name(&self) -> Option<&str> {
        self.metadata
            .get(COLUMN_MAPPING_PHYSICAL_NAME_KEY)?
            .as_str()
    }
}

/// A struct type; the top level of every Delta schema is one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    /// The fields, in schema order.
    pub fields: Vec<StructField>,
}

impl StructType {
    /// A struct from its fields.
    pub fn new(fields: Vec<StructField>) -> Self {
        Self { fields }
    }

    /// The field with this logical name: exact match first, then the unique
    /// case-insensitive match (Delta names are unique case-insensitively).
    pub fn field(&self, name: &str) -> Option<&StructField> {
        self.fields.iter().find(|f| f.name == name).or_else(|| {
            self.fields
                .iter()
                .find(|f| f.name.eq_ignore_ascii_case(name))
        })
    }

    /// Resolves a logical column path (`["a", "b"]` for `a.b`) to its field,
    /// descending through structs only.
    pub fn field_at_path(&self, path: &[impl AsRef<str>]) -> Result<&StructField> {
        let mut current = self;
        let mut found: Option<&StructField> = None;
        for (i, part) in path.iter().enumerate() {
            let field = current
                .field(part.as_ref())
                .ok_or_else(|| LogError::ColumnNotFound {
                    column: join_path(&path[..=i]),
                })?;
            found = Some(field);
            if i + 1 < path.len() {
                match &field.data_type {
                    DataType::Struct(s) => current = s,
                    _ => {
                        return Err(LogError::ColumnNotFound {
                            column: join_path(path),
                        });
                    }
                }
            }
        }
        found.ok_or_else(|| LogError::ColumnNotFound {
            column: String::new(),
        })
    }
}

/// Dot-joined column path for messages.
pub(crate) fn join_path(path: &[impl AsRef<str>]) -> String {
    let mut out = String::new();
    for (i, part) in path.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(part.as_ref());
    }
    out
}
