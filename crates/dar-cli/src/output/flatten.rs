//! Making any batch writable as CSV, which has only flat scalar columns.
//!
//! Struct columns become one column per field, named `parent.child` (a
//! field is null where its struct is null). Lists, maps and other nested or
//! binary values become their Arrow display text (`[1, 2]`, `{k: v}`).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{ArrowError, DataType, Field, Schema};

/// `batch` with struct columns split into dotted columns and values that
/// CSV cannot hold turned into text.
pub fn flatten_for_csv(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        push(field.name(), column, &mut fields, &mut columns)?;
    }
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)
}

fn push(
    name: &str,
    column: &ArrayRef,
    fields: &mut Vec<Field>,
    columns: &mut Vec<ArrayRef>,
) -> Result<(), ArrowError> {
    match column.data_type() {
        DataType::Struct(children) => {
            let s = column.as_struct();
            let parent_null = arrow_arith::boolean::is_null(s)?;
            for (child_field, child) in children.iter().zip(s.columns()) {
                let child = if s.null_count() > 0 {
                    arrow_select::nullif::nullif(child, &parent_null)?
                } else {
                    Arc::clone(child)
                };
                push(
                    &format!("{name}.{}", child_field.name()),
                    &child,
                    fields,
                    columns,
                )?;
            }
        }
        t if csv_native(t) => {
            fields.push(Field::new(name, t.clone(), true));
            columns.push(Arc::clone(column));
        }
        _ => {
            let formatter = ArrayFormatter::try_new(column.as_ref(), &FormatOptions::default())?;
            let text: StringArray = (0..column.len())
                .map(|i| column.is_valid(i).then(|| formatter.value(i).to_string()))
                .collect();
            fields.push(Field::new(name, DataType::Utf8, true));
            columns.push(Arc::new(text));
        }
    }
    Ok(())
}

/// Types arrow-csv writes itself.
fn csv_native(t: &DataType) -> bool {
    use DataType::*;
    matches!(
        t,
        Null | Boolean
            | Int8
            | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float16
            | Float32
            | Float64
            | Utf8
            | LargeUtf8
            | Utf8View
            | Date32
            | Date64
            | Time32(_)
            | Time64(_)
            | Timestamp(_, _)
            | Decimal32(_, _)
            | Decimal64(_, _)
            | Decimal128(_, _)
            | Decimal256(_, _)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, ListArray, StructArray, types::Int32Type};
    use arrow_buffer::NullBuffer;
    use arrow_schema::Fields;

    #[test]
    fn structs_split_and_lists_as_text() {
        let inner_fields = Fields::from(vec![Field::new("tip", DataType::Int32, true)]);
        let s = StructArray::new(
            inner_fields.clone(),
            vec![Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef],
            Some(NullBuffer::from(vec![true, false])),
        );
        let l = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), Some(2)]),
            None,
        ]);
        let schema = Schema::new(vec![
            Field::new("p", DataType::Struct(inner_fields), true),
            Field::new("l", l.data_type().clone(), true),
        ]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(s), Arc::new(l)]).unwrap();
        let flat = flatten_for_csv(&batch).unwrap();
        assert_eq!(flat.schema().field(0).name(), "p.tip");
        let tip = flat
            .column(0)
            .as_primitive::<arrow_array::types::Int32Type>();
        assert_eq!(tip.value(0), 1);
        assert!(tip.is_null(1), "a field of a null struct is null");
        let text = flat.column(1).as_string::<i32>();
        assert_eq!(text.value(0), "[1, 2]");
        assert!(text.is_null(1));
    }
}
