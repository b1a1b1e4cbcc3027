//! The Delta table schema: parsing `schemaString` (protocol §5), its Arrow
//! form, column mapping and the physical schema (§6), type-widening history
//! (§11) and the leaf columns that per-file statistics cover (§8.1).
//!
//! Everything here is pure: no I/O.
//!
//! ```
//! use dar_log::schema::{ColumnMappingMode, StructType};
//!
//! let schema = StructType::from_json(
//!     r#"{"type":"struct","fields":[{"name":"d","type":"decimal(10, 2)"}]}"#,
//! )?;
//! let arrow = schema.to_arrow(ColumnMappingMode::None)?;
//! assert_eq!(arrow.field(0).data_type(), &arrow_schema::DataType::Decimal128(10, 2));
//! # Ok::<(), dar_log::error::LogError>(())
//! ```

mod arrow;
mod compatibility;
mod mapping;
mod parse;
mod stats_columns;
mod types;
mod widening;

pub use self::arrow::{
    LIST_ELEMENT_NAME, MAP_ENTRIES_NAME, PARQUET_FIELD_ID_KEY, UTC, find_arrow_field,
    primitive_to_arrow, to_arrow_type, variant_arrow_type,
};
pub use self::mapping::{COLUMN_MAPPING_MODE_KEY, ColumnMappingMode};
pub use self::stats_columns::{
    DEFAULT_NUM_INDEXED_COLS, NUM_INDEXED_COLS_KEY, STATS_COLUMNS_KEY, StatsColumn,
    StatsColumnsConfig,
};
pub use self::types::{
    ArrayType, COLUMN_MAPPING_ID_KEY, COLUMN_MAPPING_PHYSICAL_NAME_KEY, DataType, DecimalType,
    MAX_DECIMAL_PRECISION, MapType, PrimitiveType, StructField, StructType, TYPE_CHANGES_KEY,
};
pub use self::widening::{
    WidenedBounds, float_grid_ceil, float_grid_floor, is_allowed_widening, widened_bounds,
};

pub(crate) use self::compatibility::unreadable_column;

#[cfg(test)]
mod tests;
