//! Schema adaptation: from what a data file stores to the table's logical
//! columns.
//!
//! ```text
//! file batch (physical names, file types)
//!   │  mapping:   find each logical field in the file (by name, physical
//!   │             name or PARQUET:field_id, per column-mapping mode)
//!   │  adapt:     rename to logical names, recurse into structs / lists /
//!   │             maps, absent fields as nulls, widening and unit casts
//!   ▼
//! logical columns ──► partitions: constant columns at their schema position
//!   ▼
//! read batch ──► (residual filter) ──► projection: caller's columns, in order
//! ```

pub(crate) mod adapt;
pub(crate) mod batch_plan;
pub(crate) mod column_map;
pub(crate) mod mapping;
pub(crate) mod nullability;
pub(crate) mod partitions;
pub(crate) mod projection;
pub(crate) mod views;

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, Schema};

/// `field` with every level made nullable (Arrow map entries and keys
/// stay non-null, as Arrow requires). The table's `nullable` flags are not
/// trusted for data (protocol §12.1): files written by other engines may
/// hold nulls in a column the schema declares non-null.
pub(crate) fn relax_field(field: &Field) -> Field {
    field
        .clone()
        .with_data_type(relax_type(field.data_type()))
        .with_nullable(true)
}

fn relax_type(t: &DataType) -> DataType {
    match t {
        DataType::Struct(children) => DataType::Struct(relax_fields(children)),
        DataType::List(e) => DataType::List(Arc::new(relax_field(e))),
        DataType::LargeList(e) => DataType::LargeList(Arc::new(relax_field(e))),
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return t.clone();
            };
            let kv: Vec<FieldRef> = kv
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    if i == 0 {
                        Arc::new(f.as_ref().clone().with_data_type(relax_type(f.data_type())))
                    } else {
                        Arc::new(relax_field(f))
                    }
                })
                .collect();
            DataType::Map(
                Arc::new(
                    entries
                        .as_ref()
                        .clone()
                        .with_data_type(DataType::Struct(Fields::from(kv))),
                ),
                *sorted,
            )
        }
        other => other.clone(),
    }
}

fn relax_fields(fields: &Fields) -> Fields {
    fields.iter().map(|f| Arc::new(relax_field(f))).collect()
}

/// The schema with every field relaxed (see [`relax_field`]).
pub(crate) fn relax_schema(schema: &Schema) -> Schema {
    Schema::new(relax_fields(schema.fields()))
}
