//! Whether data written under one schema can be read as another: the rule
//! a change data feed applies to every schema of its range against the
//! schema at its end (protocol digest §12, with the widenings of §11).
//!
//! A column of the reading schema must find the column that holds its data
//! (by field id in `id` mode, by physical name in `name` mode, else by
//! name), may not become non-nullable (nor be added as non-nullable), and
//! may change its type only by an allowed widening
//! ([`is_allowed_widening`]). Columns the reading schema drops are fine.

use super::mapping::ColumnMappingMode;
use super::types::{DataType, StructField, StructType};
use super::widening::is_allowed_widening;

/// The first column of `new` that data written as `old` cannot fill, and
/// why (for an error that names it): a column that becomes non-nullable
/// (or is added as non-nullable), or a type that changes other than by
/// widening. `None` when `new` reads all of `old`'s data.
pub(crate) fn unreadable_column(
    old: &StructType,
    new: &StructType,
    mode: ColumnMappingMode,
) -> Option<(String, String)> {
    for field in &new.fields {
        match counterpart(&old.fields, field, mode) {
            None if !field.nullable => {
                return Some((field.name.clone(), "is added as non-nullable".into()));
            }
            None => {}
            Some(o) => {
                if o.nullable && !field.nullable {
                    return Some((field.name.clone(), "becomes non-nullable".into()));
                }
                if let Some(reason) = type_readable(&o.data_type, &field.data_type, mode) {
                    return Some((field.name.clone(), reason));
                }
            }
        }
    }
    None
}

/// The field of `fields` that holds `field`'s data: by field id in id
/// mode, else by physical name in name mode, else by logical name.
fn counterpart<'a>(
    fields: &'a [StructField],
    field: &StructField,
    mode: ColumnMappingMode,
) -> Option<&'a StructField> {
    if mode == ColumnMappingMode::Id
        && let Some(id) = field.column_mapping_id()
    {
        return fields.iter().find(|f| f.column_mapping_id() == Some(id));
    }
    if mode.is_active()
        && let Some(p) = field.column_mapping_physical_name()
    {
        return fields
            .iter()
            .find(|f| f.column_mapping_physical_name() == Some(p));
    }
    fields.iter().find(|f| f.name == field.name)
}

/// Why data written as `old` cannot be read as `new`, if it cannot.
fn type_readable(old: &DataType, new: &DataType, mode: ColumnMappingMode) -> Option<String> {
    match (old, new) {
        (DataType::Primitive(a), DataType::Primitive(b)) => (a != b
            && !is_allowed_widening(*a, *b))
        .then(|| format!("changes type from {a:?} to {b:?}")),
        (DataType::Struct(a), DataType::Struct(b)) => unreadable_column(a, b, mode)
            .map(|(column, reason)| format!("field '{column}' {reason}")),
        (DataType::Array(a), DataType::Array(b)) => {
            if a.contains_null && !b.contains_null {
                return Some("becomes an array without null elements".into());
            }
            type_readable(&a.element_type, &b.element_type, mode)
        }
        (DataType::Map(a), DataType::Map(b)) => {
            if a.value_contains_null && !b.value_contains_null {
                return Some("becomes a map without null values".into());
            }
            type_readable(&a.key_type, &b.key_type, mode)
                .or_else(|| type_readable(&a.value_type, &b.value_type, mode))
        }
        (DataType::Variant, DataType::Variant) => None,
        _ => Some("changes its kind of type".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{COLUMN_MAPPING_PHYSICAL_NAME_KEY, PrimitiveType};

    fn field(name: &str, t: &str, nullable: bool) -> StructField {
        StructField::new(
            name,
            DataType::Primitive(PrimitiveType::parse(t).unwrap()),
            nullable,
        )
    }

    #[test]
    fn rules_name_the_column() {
        let mode = ColumnMappingMode::None;
        let old = StructType::new(vec![field("a", "integer", true)]);
        let widened = StructType::new(vec![field("a", "long", true), field("b", "string", true)]);
        assert!(unreadable_column(&old, &widened, mode).is_none());
        let strict = StructType::new(vec![field("a", "integer", false)]);
        let (c, r) = unreadable_column(&old, &strict, mode).unwrap();
        assert_eq!((c.as_str(), r.as_str()), ("a", "becomes non-nullable"));
        let narrowed = StructType::new(vec![field("a", "short", true)]);
        assert_eq!(unreadable_column(&old, &narrowed, mode).unwrap().0, "a");
        let added = StructType::new(vec![field("a", "integer", true), field("z", "long", false)]);
        assert_eq!(
            unreadable_column(&old, &added, mode).unwrap().1,
            "is added as non-nullable"
        );
        // Dropping a column is readable: the reading schema lacks it.
        let wider = StructType::new(vec![
            field("a", "integer", true),
            field("b", "string", true),
        ]);
        assert!(unreadable_column(&wider, &old, mode).is_none());
        // Narrowing back is not.
        assert!(unreadable_column(&widened, &old, mode).is_some());
    }

    #[test]
    fn renamed_columns_match_by_physical_name() {
        let mode = ColumnMappingMode::Name;
        let phys = |f: StructField, p: &str| {
            f.with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, serde_json::json!(p))
        };
        let old = StructType::new(vec![phys(field("a", "integer", true), "col-1")]);
        let renamed = StructType::new(vec![phys(field("b", "integer", false), "col-1")]);
        // Found under its new name: becoming non-nullable is still caught.
        assert_eq!(
            unreadable_column(&old, &renamed, mode).unwrap(),
            ("b".to_string(), "becomes non-nullable".to_string())
        );
    }
}
