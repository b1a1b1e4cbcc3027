//! Turning a file's column into the table's logical column.
//!
//! Recurses through structs, lists and maps; at the leaves it allows only
//! casts that read the stored values exactly (or, for timestamps, normalize
//! their unit to microseconds):
//!
//! | file type                        | table type                        |
//! |----------------------------------|-----------------------------------|
//! | int8/16/32/64                    | a wider int, double, a decimal wide enough (type widening, §11) |
//! | float                            | double                            |
//! | date                             | timestamp_ntz (midnight)          |
//! | decimal(p, s)                    | decimal(p + k1, s + k2), k1 ≥ k2 ≥ 0 |
//! | timestamp (s/ms/µs/ns, INT96)    | timestamp µs (any zone label)     |
//! | binary, large/view strings       | string (UTF-8 checked)            |
//! | large/view binary                | binary                            |
//! | dictionary of `v`                | what `v` may become               |
//! | anything                         | void (all null)                   |
//!
//! Anything else is [`ScanError::SchemaMismatch`] naming the file and column.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, ListArray, MapArray, StructArray, TimestampMicrosecondArray, new_null_array,
};
use arrow_schema::{DataType, Field, FieldRef, TimeUnit};
use dar_log::schema::ColumnMappingMode;

use super::mapping::find_field;
use crate::error::{Result, ScanError};

/// Context of one adaptation: the file and the mapping mode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Adapter<'a> {
    /// The data file's object path, for errors.
    pub path: &'a str,
    /// The table's column-mapping mode.
    pub mode: ColumnMappingMode,
}

impl Adapter<'_> {
    /// The logical columns `targets` from a decoded file batch with
    /// `columns` / `fields`; absent columns are nulls of `rows` rows.
    pub(crate) fn columns(
        &self,
        fields: &arrow_schema::Fields,
        columns: &[ArrayRef],
        targets: &[FieldRef],
        rows: usize,
    ) -> Result<Vec<ArrayRef>> {
        targets
            .iter()
            .map(|t| match find_field(t, fields, self.mode) {
                Some(i) => self.array(t.name(), &columns[i], t),
                None => Ok(new_null_array(t.data_type(), rows)),
            })
            .collect()
    }

    /// `array` (as the file stores it) as `target`'s type; `column` is the
    /// logical path so far, for errors.
    pub(crate) fn array(&self, column: &str, array: &ArrayRef, target: &Field) -> Result<ArrayRef> {
        let to = target.data_type();
        let from = array.data_type();
        if from == to {
            return Ok(Arc::clone(array));
        }
        match (from, to) {
            (_, DataType::Null) => Ok(new_null_array(to, array.len())),
            (DataType::Struct(_), DataType::Struct(targets)) => {
                let s = array.as_struct();
                let children = targets
                    .iter()
                    .map(|t| match find_field(t, s.fields(), self.mode) {
                        Some(i) => self.array(&format!("{column}.{}", t.name()), s.column(i), t),
                        None => Ok(new_null_array(t.data_type(), s.len())),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let out = StructArray::try_new(targets.clone(), children, s.nulls().cloned())
                    .map_err(|e| ScanError::arrow("assembling a struct column", self.path, e))?;
                Ok(Arc::new(out))
            }
            (DataType::List(_), DataType::List(element)) => {
                let l = array.as_list::<i32>();
                let values =
                    self.array(&format!("{column}.element"), l.values(), element.as_ref())?;
                let out = ListArray::try_new(
                    Arc::clone(element),
                    l.offsets().clone(),
                    values,
                    l.nulls().cloned(),
                )
                .map_err(|e| ScanError::arrow("assembling a list column", self.path, e))?;
                Ok(Arc::new(out))
            }
            (DataType::LargeList(_), DataType::List(_)) => {
                let cast = arrow_cast::cast(array, &DataType::List(large_element(from)))
                    .map_err(|e| ScanError::arrow("narrowing list offsets", self.path, e))?;
                self.array(column, &cast, target)
            }
            (DataType::Map(_, _), DataType::Map(entries, sorted)) => {
                let m = array.as_map();
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(self.mismatch(column, from, to));
                };
                if kv.len() != 2 || m.entries().num_columns() != 2 {
                    return Err(self.mismatch(column, from, to));
                }
                // Key and value are positional: writers name them
                // `key`/`value` or `keys`/`values`.
                let key = self.array(&format!("{column}.key"), m.keys(), &kv[0])?;
                let value = self.array(&format!("{column}.value"), m.values(), &kv[1])?;
                let entries_array = StructArray::try_new(kv.clone(), vec![key, value], None)
                    .map_err(|e| ScanError::arrow("assembling map entries", self.path, e))?;
                let out = MapArray::try_new(
                    Arc::clone(entries),
                    m.offsets().clone(),
                    entries_array,
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(|e| ScanError::arrow("assembling a map column", self.path, e))?;
                Ok(Arc::new(out))
            }
            (DataType::Timestamp(unit, _), DataType::Timestamp(TimeUnit::Microsecond, tz)) => {
                self.timestamp_to_micros(column, array, *unit, tz.clone())
            }
            (DataType::Dictionary(_, values), _) if leaf_cast_allowed(values, to) => {
                self.cast(column, array, to)
            }
            _ if leaf_cast_allowed(from, to) => self.cast(column, array, to),
            _ => Err(self.mismatch(column, from, to)),
        }
    }

    /// Unit normalization by arithmetic on the stored instants: the zone
    /// is a label here (INT96 and `timestamp_ntz` files carry none), and
    /// Arrow's cast would resolve zone names, which needs `chrono-tz`.
    fn timestamp_to_micros(
        &self,
        column: &str,
        array: &ArrayRef,
        unit: TimeUnit,
        tz: Option<Arc<str>>,
    ) -> Result<ArrayRef> {
        use arrow_array::types::{
            TimestampMicrosecondType as Us, TimestampMillisecondType as Ms,
            TimestampNanosecondType as Ns, TimestampSecondType as S,
        };
        let overflow = || ScanError::SchemaMismatch {
            path: self.path.to_string(),
            column: column.to_string(),
            found: format!("{} (value out of range)", array.data_type()),
            expected: "timestamp in microseconds".to_string(),
        };
        let values: TimestampMicrosecondArray = match unit {
            TimeUnit::Second => array
                .as_primitive::<S>()
                .try_unary(|v| v.checked_mul(1_000_000).ok_or(()))
                .map_err(|()| overflow())?,
            TimeUnit::Millisecond => array
                .as_primitive::<Ms>()
                .try_unary(|v| v.checked_mul(1_000).ok_or(()))
                .map_err(|()| overflow())?,
            TimeUnit::Microsecond => array.as_primitive::<Us>().reinterpret_cast(),
            // Floor, as Spark does, so instants before 1970 round down.
            TimeUnit::Nanosecond => array.as_primitive::<Ns>().unary(|v| v.div_euclid(1_000)),
        };
        Ok(Arc::new(values.with_timezone_opt(tz)))
    }

    fn cast(&self, column: &str, array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
        let options = arrow_cast::CastOptions {
            safe: false,
            ..Default::default()
        };
        arrow_cast::cast_with_options(array, to, &options).map_err(|e| {
            ScanError::arrow(
                "casting a column to the table type",
                format!("{} (column {column})", self.path),
                e,
            )
        })
    }

    fn mismatch(&self, column: &str, from: &DataType, to: &DataType) -> ScanError {
        ScanError::SchemaMismatch {
            path: self.path.to_string(),
            column: column.to_string(),
            found: from.to_string(),
            expected: to.to_string(),
        }
    }
}

fn large_element(t: &DataType) -> FieldRef {
    match t {
        DataType::LargeList(e) => Arc::clone(e),
        _ => Arc::new(Field::new("element", DataType::Null, true)),
    }
}

fn int_width(t: &DataType) -> Option<u8> {
    Some(match t {
        DataType::Int8 => 8,
        DataType::Int16 => 16,
        DataType::Int32 => 32,
        DataType::Int64 => 64,
        _ => return None,
    })
}

/// Digits needed left of the point for an integer of this width.
fn int_digits(width: u8) -> u8 {
    match width {
        8 => 3,
        16 => 5,
        32 => 10,
        _ => 20,
    }
}

/// Whether a leaf of type `from` may be read as `to` (the table above).
pub(crate) fn leaf_cast_allowed(from: &DataType, to: &DataType) -> bool {
    use DataType as T;
    if from == to {
        return true;
    }
    match (from, to) {
        (_, T::Null) => true,
        (f, t) if int_width(f).is_some() && int_width(t).is_some() => int_width(f) <= int_width(t),
        (f, T::Float64) if int_width(f).is_some_and(|w| w <= 32) => true,
        (T::Float32, T::Float64) => true,
        (T::Date32, T::Timestamp(_, None)) => true,
        (T::Decimal128(p1, s1), T::Decimal128(p2, s2)) => {
            s2 >= s1 && i16::from(*p2) - i16::from(*s2) >= i16::from(*p1) - i16::from(*s1)
        }
        (f, T::Decimal128(p, s)) => {
            int_width(f).is_some_and(|w| i16::from(*p) - i16::from(*s) >= i16::from(int_digits(w)))
        }
        (T::Timestamp(_, _), T::Timestamp(_, _)) => true,
        (T::Binary | T::LargeBinary | T::BinaryView | T::LargeUtf8 | T::Utf8View, T::Utf8) => true,
        (T::LargeBinary | T::BinaryView | T::FixedSizeBinary(_), T::Binary) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::{Date32Array, Int32Array, StringArray, TimestampNanosecondArray};
    use arrow_schema::Fields;

    use super::*;

    fn adapter() -> Adapter<'static> {
        Adapter {
            path: "f.parquet",
            mode: ColumnMappingMode::None,
        }
    }

    #[test]
    fn widening_and_units() {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(-3)]));
        let out = adapter()
            .array("x", &a, &Field::new("x", DataType::Int64, true))
            .unwrap();
        assert_eq!(
            out.as_primitive::<arrow_array::types::Int64Type>().value(2),
            -3
        );
        let d: ArrayRef = Arc::new(Date32Array::from(vec![1]));
        let out = adapter()
            .array(
                "d",
                &d,
                &Field::new("d", DataType::Timestamp(TimeUnit::Microsecond, None), true),
            )
            .unwrap();
        assert_eq!(
            out.as_primitive::<arrow_array::types::TimestampMicrosecondType>()
                .value(0),
            86_400_000_000
        );
        let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![1_234_000]));
        let to = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let out = adapter()
            .array("t", &ns, &Field::new("t", to.clone(), true))
            .unwrap();
        assert_eq!(out.data_type(), &to);
        assert_eq!(
            out.as_primitive::<arrow_array::types::TimestampMicrosecondType>()
                .value(0),
            1234
        );
    }

    #[test]
    fn mismatch_names_file_and_column() {
        let s: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
        let err = adapter()
            .array("x", &s, &Field::new("x", DataType::Int64, true))
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("f.parquet") && msg.contains("'x'"), "{msg}");
        assert!(!leaf_cast_allowed(&DataType::Int64, &DataType::Int32));
        assert!(!leaf_cast_allowed(&DataType::Int64, &DataType::Float64));
        assert!(leaf_cast_allowed(
            &DataType::Int32,
            &DataType::Decimal128(10, 0)
        ));
        assert!(!leaf_cast_allowed(
            &DataType::Int32,
            &DataType::Decimal128(10, 1)
        ));
        assert!(!leaf_cast_allowed(
            &DataType::Decimal128(5, 2),
            &DataType::Decimal128(5, 3)
        ));
    }

    #[test]
    fn struct_children_missing_and_reordered() {
        let file = StructArray::try_new(
            Fields::from(vec![
                Field::new("b", DataType::Int32, true),
                Field::new("a", DataType::Utf8, true),
            ]),
            vec![
                Arc::new(Int32Array::from(vec![1, 2])),
                Arc::new(StringArray::from(vec!["x", "y"])),
            ],
            None,
        )
        .unwrap();
        let target = Field::new(
            "s",
            DataType::Struct(Fields::from(vec![
                Field::new("a", DataType::Utf8, true),
                Field::new("c", DataType::Float64, true),
                Field::new("b", DataType::Int64, true),
            ])),
            true,
        );
        let a: ArrayRef = Arc::new(file);
        let out = adapter().array("s", &a, &target).unwrap();
        let s = out.as_struct();
        assert_eq!(s.column(0).as_string::<i32>().value(1), "y");
        assert_eq!(s.column(1).null_count(), 2);
        assert_eq!(
            s.column(2)
                .as_primitive::<arrow_array::types::Int64Type>()
                .value(0),
            1
        );
    }
}
