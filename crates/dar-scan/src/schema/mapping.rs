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

use std::cell::OnceCell;
use std::collections::HashMap;

use arrow_schema::{Field, Fields};
use dar_log::schema::{
    COLUMN_MAPPING_PHYSICAL_NAME_KEY as PHYSICAL_NAME_KEY, ColumnMappingMode,
    PARQUET_FIELD_ID_KEY as FIELD_ID_KEY,
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

/// One level of a data file's fields (its top level, or a struct's
/// children), indexed once so that finding each logical field costs a
/// hash lookup: resolving a file's columns is linear in its width, however
/// many columns there are.
pub(crate) struct FieldLookup<'a> {
    fields: &'a Fields,
    mode: ColumnMappingMode,
    /// Field id to position, when the mode is `id` and the level has ids.
    by_id: Option<HashMap<&'a str, usize>>,
    /// Exact name to (first) position.
    by_name: HashMap<&'a str, usize>,
    /// ASCII-lowercased name to position, `None` when ambiguous; built on
    /// the first lookup that needs it.
    by_lower: OnceCell<HashMap<String, Option<usize>>>,
}

impl<'a> FieldLookup<'a> {
    /// Indexes `fields` for lookups under `mode`.
    pub(crate) fn new(fields: &'a Fields, mode: ColumnMappingMode) -> Self {
        let mut by_name = HashMap::with_capacity(fields.len());
        for (i, f) in fields.iter().enumerate() {
            by_name.entry(f.name().as_str()).or_insert(i);
        }
        let by_id = (mode == ColumnMappingMode::Id && fields.iter().any(|f| field_id(f).is_some()))
            .then(|| {
                let mut ids = HashMap::with_capacity(fields.len());
                for (i, f) in fields.iter().enumerate() {
                    if let Some(id) = field_id(f) {
                        ids.entry(id).or_insert(i);
                    }
                }
                ids
            });
        Self {
            fields,
            mode,
            by_id,
            by_name,
            by_lower: OnceCell::new(),
        }
    }

    /// The indexed fields.
    pub(crate) fn fields(&self) -> &'a Fields {
        self.fields
    }

    /// The position of the field that stores `logical`, if any.
    pub(crate) fn find(&self, logical: &Field) -> Option<usize> {
        if let (Some(ids), Some(id)) = (&self.by_id, field_id(logical)) {
            return ids.get(id).copied();
        }
        let name = physical_name(logical, self.mode);
        if self.mode.is_active() && logical.metadata().contains_key(PHYSICAL_NAME_KEY) {
            // Physical names are exact.
            return self.by_name.get(name).copied();
        }
        // Spark resolves names case-insensitively; follow it when unambiguous.
        self.by_name.get(name).copied().or_else(|| {
            self.by_lower
                .get_or_init(|| {
                    let mut lower: HashMap<String, Option<usize>> = HashMap::new();
                    for (i, f) in self.fields.iter().enumerate() {
                        lower
                            .entry(f.name().to_ascii_lowercase())
                            .and_modify(|e| *e = None)
                            .or_insert(Some(i));
                    }
                    lower
                })
                .get(&name.to_ascii_lowercase())
                .copied()
                .flatten()
        })
    }
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
            FieldLookup::new(&file, ColumnMappingMode::None).find(&logical),
            Some(0)
        );
        assert_eq!(
            FieldLookup::new(&file, ColumnMappingMode::Name).find(&logical),
            Some(1)
        );
        assert_eq!(
            FieldLookup::new(&file, ColumnMappingMode::Id).find(&logical),
            Some(2)
        );
        let no_ids = Fields::from(vec![Field::new("col-1", DataType::Int32, true)]);
        assert_eq!(
            FieldLookup::new(&no_ids, ColumnMappingMode::Id).find(&logical),
            Some(0)
        );
        let ambiguous = Fields::from(vec![
            Field::new("A", DataType::Int32, true),
            Field::new("a_", DataType::Int32, true),
            Field::new("a", DataType::Int32, true),
        ]);
        assert_eq!(
            FieldLookup::new(&ambiguous, ColumnMappingMode::None).find(&logical),
            Some(2)
        );
    }
}
