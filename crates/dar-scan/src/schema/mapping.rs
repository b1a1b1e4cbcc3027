//! Finding a logical field among a data file's fields (protocol §6).
//!
//! | mode   | match by                                                      |
//! |--------|---------------------------------------------------------------|
//! | `none` | name, exactly; else case-insensitively when that is unambiguous |
//! | `name` | `delta.columnMapping.physicalName`                            |
//! | `id`   | `PARQUET:field_id` = `delta.columnMapping.id`; when the file carries no field ids at that level, the physical name (as kernel-rs does) |
//!
//! Fields without mapping metadata (the children of a variant) match by name
//! in every mode. A field the file lacks is `None`: the caller fills nulls.

use arrow_schema::{Field, Fields};
use dar_log::schema::{
    COLUMN_MAPPING_PHYSICAL_NAME_KEY as PHYSICAL_NAME_KEY, ColumnMappingMode,
    PARQUET_FIELD_ID_KEY as FIELD_ID_KEY, find_arrow_field,
};

/// The name `field` has in data files under `mode`.
pub(crate) fn physical_name(field: &Field, mode: ColumnMappingMode) -> &str {
    if mode.is_active()
        && let Some(p) = field.metadata().get(PHYSICAL_NAME_KEY)
    {
        return p;
    }
    field.name()
}

fn field_id(field: &Field) -> Option<&str> {
    field.metadata().get(FIELD_ID_KEY).map(String::as_str)
}

/// The index in `file` of the field that stores `logical`, if any.
pub(crate) fn find_field(logical: &Field, file: &Fields, mode: ColumnMappingMode) -> Option<usize> {
    if mode == ColumnMappingMode::Id
        && let Some(id) = field_id(logical)
        && file.iter().any(|f| field_id(f).is_some())
    {
        return file.iter().position(|f| field_id(f) == Some(id));
    }
    let name = physical_name(logical, mode);
    if mode.is_active() && logical.metadata().contains_key(PHYSICAL_NAME_KEY) {
        // Physical names are exact.
        return file.iter().position(|f| f.name() == name);
    }
    // Spark resolves names case-insensitively; follow it when unambiguous.
    find_arrow_field(file, name)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use arrow_schema::DataType;

    use super::*;

    fn meta(f: Field, kv: &[(&str, &str)]) -> Field {
        f.with_metadata(
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<HashMap<_, _>>(),
        )
    }

    #[test]
    fn modes() {
        let logical = meta(
            Field::new("a", DataType::Int32, true),
            &[(PHYSICAL_NAME_KEY, "col-1"), (FIELD_ID_KEY, "7")],
        );
        let file = Fields::from(vec![
            Field::new("A", DataType::Int32, true),
            meta(
                Field::new("col-1", DataType::Int32, true),
                &[(FIELD_ID_KEY, "3")],
            ),
            meta(
                Field::new("x", DataType::Int32, true),
                &[(FIELD_ID_KEY, "7")],
            ),
        ]);
        assert_eq!(
            find_field(&logical, &file, ColumnMappingMode::None),
            Some(0)
        );
        assert_eq!(
            find_field(&logical, &file, ColumnMappingMode::Name),
            Some(1)
        );
        assert_eq!(find_field(&logical, &file, ColumnMappingMode::Id), Some(2));
        let no_ids = Fields::from(vec![Field::new("col-1", DataType::Int32, true)]);
        assert_eq!(
            find_field(&logical, &no_ids, ColumnMappingMode::Id),
            Some(0)
        );
        let ambiguous = Fields::from(vec![
            Field::new("A", DataType::Int32, true),
            Field::new("a_", DataType::Int32, true),
            Field::new("a", DataType::Int32, true),
        ]);
        assert_eq!(
            find_field(&logical, &ambiguous, ColumnMappingMode::None),
            Some(2)
        );
    }
}
