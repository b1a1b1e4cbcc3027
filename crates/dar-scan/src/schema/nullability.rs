//! The table's declared nullability, enforced on what files hold.
//!
//! A column the Delta schema declares `nullable: false` must not come back
//! null: a data file that lacks it, or holds nulls in it, is an error naming
//! the file and the column (a nullable column missing from a file reads as
//! nulls). Inside structs, a non-null child may be null only where its
//! parent struct is null.

use arrow_array::{Array, ArrayRef, cast::AsArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field};

use crate::errors::error::{Result, ScanError};

/// Checks `array` (the logical column `declared` of the file at `path`)
/// against the declared nullability of the column and its struct children.
pub(crate) fn check(path: &str, declared: &Field, array: &ArrayRef) -> Result<()> {
    check_level(path, declared.name(), declared, array.as_ref(), None)
}

/// A field whose type is a struct with any non-null field at some depth, or
/// which is non-null itself: worth checking.
pub(crate) fn has_constraint(f: &Field) -> bool {
    !f.is_nullable()
        || matches!(f.data_type(), DataType::Struct(children) if children.iter().any(|c| has_constraint(c)))
}

fn check_level(
    path: &str,
    column: &str,
    declared: &Field,
    array: &dyn Array,
    parent: Option<&NullBuffer>,
) -> Result<()> {
    if !declared.is_nullable() {
        let violations = match (array.logical_nulls(), parent) {
            (None, _) => 0,
            (Some(nulls), None) => nulls.null_count(),
            // Null here where the parent is valid.
            (Some(nulls), Some(parent)) => (&!nulls.inner() & parent.inner()).count_set_bits(),
        };
        if violations > 0 {
            return Err(ScanError::NullInNonNullable {
                path: path.to_string(),
                column: column.to_string(),
                nulls: violations,
            });
        }
    }
    if let (DataType::Struct(children), Some(s)) = (declared.data_type(), array.as_struct_opt()) {
        let valid = NullBuffer::union(parent, s.logical_nulls().as_ref());
        // Adapted structs hold the declared children, in declared order.
        for (child, a) in children.iter().zip(s.columns()) {
            if has_constraint(child) {
                let name = format!("{column}.{}", child.name());
                check_level(path, &name, child, a.as_ref(), valid.as_ref())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, StructArray};
    use arrow_buffer::NullBuffer;
    use arrow_schema::Fields;

    use super::*;

    #[test]
    fn top_level_nulls_in_a_non_null_column_are_errors() {
        let f = Field::new("x", DataType::Int32, false);
        let ok: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        check("f.parquet", &f, &ok).unwrap();
        let bad: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None]));
        let err = check("f.parquet", &f, &bad).unwrap_err().to_string();
        assert!(err.contains("f.parquet") && err.contains("'x'"), "{err}");
        let nullable = Field::new("x", DataType::Int32, true);
        check("f.parquet", &nullable, &bad).unwrap();
    }

    #[test]
    fn non_null_children_may_be_null_only_under_null_parents() {
        let child = Field::new("c", DataType::Int32, false);
        let declared = Field::new(
            "s",
            DataType::Struct(Fields::from(vec![child.clone()])),
            true,
        );
        let values: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, None]));
        let relaxed = Fields::from(vec![child.with_nullable(true)]);
        let under_null_parent = StructArray::new(
            relaxed.clone(),
            vec![Arc::clone(&values)],
            Some(NullBuffer::from(vec![true, false, false])),
        );
        check(
            "f.parquet",
            &declared,
            &(Arc::new(under_null_parent) as ArrayRef),
        )
        .unwrap();
        let under_valid_parent = StructArray::new(
            relaxed,
            vec![values],
            Some(NullBuffer::from(vec![true, true, false])),
        );
        let err = check(
            "f.parquet",
            &declared,
            &(Arc::new(under_valid_parent) as ArrayRef),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("'s.c'") && err.contains("1 null"), "{err}");
    }
}
