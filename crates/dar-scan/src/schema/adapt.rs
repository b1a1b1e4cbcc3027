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
use arrow_schema::{DataType, Field, FieldRef, Fields, TimeUnit};
use dar_log::schema::ColumnMappingMode;

use super::mapping::FieldLookup;
use crate::errors::error::{Result, ScanError};

/// How one file column becomes one logical column, decided once per file
/// from the two types (the table above); applying it to a batch's array
/// only indexes, recurses and casts.
#[derive(Debug)]
pub(crate) enum ColumnPlan {
    /// The file stores the table's type: the array as is.
    Keep,
    /// The table's type is `void`: nulls of it.
    Nulls(DataType),
    /// A struct: each table child from a file child (by index), or nulls
    /// when the file lacks it.
    Struct {
        fields: Fields,
        children: Vec<Option<(usize, ColumnPlan)>>,
    },
    /// A list: its values adapted.
    List {
        element: FieldRef,
        values: Box<ColumnPlan>,
    },
    /// A large list: offsets narrowed to a list first.
    NarrowList {
        narrowed: DataType,
        list: Box<ColumnPlan>,
    },
    /// A map: keys and values adapted (positionally: writers name them
    /// `key`/`value` or `keys`/`values`).
    Map {
        entries: FieldRef,
        kv: Fields,
        sorted: bool,
        key: Box<ColumnPlan>,
        value: Box<ColumnPlan>,
    },
    /// A timestamp of another unit (or INT96) to microseconds.
    Micros {
        unit: TimeUnit,
        tz: Option<Arc<str>>,
        column: Arc<str>,
    },
    /// A leaf cast that reads the stored values exactly.
    Cast { to: DataType, column: Arc<str> },
}

/// A file column's type that the table's type cannot be read from.
fn mismatch(path: &str, column: &str, from: &DataType, to: &DataType) -> ScanError {
    ScanError::SchemaMismatch {
        path: path.to_string(),
        column: column.to_string(),
        found: from.to_string(),
        expected: to.to_string(),
    }
}

impl ColumnPlan {
    /// The plan that reads `target` from a file column of type `from`;
    /// `column` is the logical path so far and `path` the data file, for
    /// errors (a type that cannot be read is [`ScanError::SchemaMismatch`]).
    pub(crate) fn new(
        path: &str,
        column: &str,
        from: &DataType,
        target: &Field,
        mode: ColumnMappingMode,
    ) -> Result<Self> {
        let to = target.data_type();
        if from == to {
            return Ok(Self::Keep);
        }
        Ok(match (from, to) {
            (_, DataType::Null) => Self::Nulls(to.clone()),
            (DataType::Struct(file), DataType::Struct(targets)) => {
                let lookup = FieldLookup::new(file, mode);
                let children = targets
                    .iter()
                    .map(|t| {
                        lookup
                            .find(t)
                            .map(|i| {
                                let name = format!("{column}.{}", t.name());
                                Self::new(path, &name, file[i].data_type(), t, mode).map(|p| (i, p))
                            })
                            .transpose()
                    })
                    .collect::<Result<Vec<_>>>()?;
                Self::Struct {
                    fields: targets.clone(),
                    children,
                }
            }
            (DataType::List(file), DataType::List(element)) => Self::List {
                element: Arc::clone(element),
                values: Box::new(Self::new(
                    path,
                    &format!("{column}.element"),
                    file.data_type(),
                    element,
                    mode,
                )?),
            },
            (DataType::LargeList(_), DataType::List(_)) => {
                let narrowed = DataType::List(large_element(from));
                Self::NarrowList {
                    list: Box::new(Self::new(path, column, &narrowed, target, mode)?),
                    narrowed,
                }
            }
            (DataType::Map(file_entries, _), DataType::Map(entries, sorted)) => {
                let (DataType::Struct(file_kv), DataType::Struct(kv)) =
                    (file_entries.data_type(), entries.data_type())
                else {
                    return Err(mismatch(path, column, from, to));
                };
                if kv.len() != 2 || file_kv.len() != 2 {
                    return Err(mismatch(path, column, from, to));
                }
                let key = Self::new(
                    path,
                    &format!("{column}.key"),
                    file_kv[0].data_type(),
                    &kv[0],
                    mode,
                )?;
                let value = Self::new(
                    path,
                    &format!("{column}.value"),
                    file_kv[1].data_type(),
                    &kv[1],
                    mode,
                )?;
                Self::Map {
                    entries: Arc::clone(entries),
                    kv: kv.clone(),
                    sorted: *sorted,
                    key: Box::new(key),
                    value: Box::new(value),
                }
            }
            (DataType::Timestamp(unit, _), DataType::Timestamp(TimeUnit::Microsecond, tz)) => {
                Self::Micros {
                    unit: *unit,
                    tz: tz.clone(),
                    column: column.into(),
                }
            }
            (DataType::Dictionary(_, values), _) if leaf_cast_allowed(values, to) => Self::Cast {
                to: to.clone(),
                column: column.into(),
            },
            _ if leaf_cast_allowed(from, to) => Self::Cast {
                to: to.clone(),
                column: column.into(),
            },
            _ => return Err(mismatch(path, column, from, to)),
        })
    }

    /// `array` (a batch's column as the file stores it) as the table's
    /// column; `path` names the data file in errors.
    pub(crate) fn apply(&self, path: &str, array: &ArrayRef) -> Result<ArrayRef> {
        let wrong = |what: &str| ScanError::InvalidTask {
            path: path.to_string(),
            reason: format!("decoded column is not the {what} its footer declares"),
        };
        match self {
            Self::Keep => Ok(Arc::clone(array)),
            Self::Nulls(t) => Ok(new_null_array(t, array.len())),
            Self::Struct { fields, children } => {
                let s = array.as_struct_opt().ok_or_else(|| wrong("struct"))?;
                let columns = fields
                    .iter()
                    .zip(children)
                    .map(|(f, child)| match child {
                        Some((i, plan)) => {
                            let c = s.columns().get(*i).ok_or_else(|| wrong("struct"))?;
                            plan.apply(path, c)
                        }
                        None => Ok(new_null_array(f.data_type(), s.len())),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let out = StructArray::try_new(fields.clone(), columns, s.nulls().cloned())
                    .map_err(|e| ScanError::arrow("assembling a struct column", path, e))?;
                Ok(Arc::new(out))
            }
            Self::List { element, values } => {
                let l = array.as_list_opt::<i32>().ok_or_else(|| wrong("list"))?;
                let values = values.apply(path, l.values())?;
                let out = ListArray::try_new(
                    Arc::clone(element),
                    l.offsets().clone(),
                    values,
                    l.nulls().cloned(),
                )
                .map_err(|e| ScanError::arrow("assembling a list column", path, e))?;
                Ok(Arc::new(out))
            }
            Self::NarrowList { narrowed, list } => {
                let cast = arrow_cast::cast(array, narrowed)
                    .map_err(|e| ScanError::arrow("narrowing list offsets", path, e))?;
                list.apply(path, &cast)
            }
            Self::Map {
                entries,
                kv,
                sorted,
                key,
                value,
            } => {
                let m = array.as_map_opt().ok_or_else(|| wrong("map"))?;
                let keys = key.apply(path, m.keys())?;
                let values = value.apply(path, m.values())?;
                let entries_array = StructArray::try_new(kv.clone(), vec![keys, values], None)
                    .map_err(|e| ScanError::arrow("assembling map entries", path, e))?;
                let out = MapArray::try_new(
                    Arc::clone(entries),
                    m.offsets().clone(),
                    entries_array,
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(|e| ScanError::arrow("assembling a map column", path, e))?;
                Ok(Arc::new(out))
            }
            Self::Micros { unit, tz, column } => {
                timestamp_to_micros(path, column, array, *unit, tz.clone())
            }
            Self::Cast { to, column } => {
                let options = arrow_cast::CastOptions {
                    safe: false,
                    ..Default::default()
                };
                // An allowed cast fails only on values the table's type
                // cannot hold (binary that is not UTF-8, a decimal out of
                // range): the file's data does not fit the schema.
                leaf_cast(array, to, &options).map_err(|e| ScanError::SchemaMismatch {
                    path: path.to_string(),
                    column: column.to_string(),
                    found: format!(
                        "{} holding a value it cannot be read as ({e})",
                        array.data_type()
                    ),
                    expected: to.to_string(),
                })
            }
        }
    }
}

/// `array` cast to `to`; to a view type that arrow casts to only from
/// its classic type (a fixed-size binary to `BinaryView`), through that.
fn leaf_cast(
    array: &ArrayRef,
    to: &DataType,
    options: &arrow_cast::CastOptions,
) -> std::result::Result<ArrayRef, arrow_schema::ArrowError> {
    let classic = match to {
        DataType::Utf8View => DataType::Utf8,
        DataType::BinaryView => DataType::Binary,
        _ => return arrow_cast::cast_with_options(array, to, options),
    };
    if arrow_cast::can_cast_types(array.data_type(), to) {
        return arrow_cast::cast_with_options(array, to, options);
    }
    let classic = arrow_cast::cast_with_options(array, &classic, options)?;
    arrow_cast::cast_with_options(&classic, to, options)
}

/// Unit normalization by arithmetic on the stored instants: the zone
/// is a label here (INT96 and `timestamp_ntz` files carry none), and
/// Arrow's cast would resolve zone names, which needs `chrono-tz`.
fn timestamp_to_micros(
    path: &str,
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
        path: path.to_string(),
        column: column.to_string(),
        found: format!("{} (value out of range)", array.data_type()),
        expected: "timestamp in microseconds".to_string(),
    };
    let wrong = || ScanError::InvalidTask {
        path: path.to_string(),
        reason: format!("decoded column '{column}' is not the timestamp its footer declares"),
    };
    let values: TimestampMicrosecondArray = match unit {
        TimeUnit::Second => array
            .as_primitive_opt::<S>()
            .ok_or_else(wrong)?
            .try_unary(|v| v.checked_mul(1_000_000).ok_or(()))
            .map_err(|()| overflow())?,
        TimeUnit::Millisecond => array
            .as_primitive_opt::<Ms>()
            .ok_or_else(wrong)?
            .try_unary(|v| v.checked_mul(1_000).ok_or(()))
            .map_err(|()| overflow())?,
        TimeUnit::Microsecond => array
            .as_primitive_opt::<Us>()
            .ok_or_else(wrong)?
            .reinterpret_cast(),
        // Floor, as Spark does, so instants before 1970 round down.
        TimeUnit::Nanosecond => array
            .as_primitive_opt::<Ns>()
            .ok_or_else(wrong)?
            .unary(|v| v.div_euclid(1_000)),
    };
    Ok(Arc::new(values.with_timezone_opt(tz)))
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
        // Views: whatever the classic type may be read from, and it.
        (f, T::Utf8View) => f == &T::Utf8 || leaf_cast_allowed(f, &T::Utf8),
        (f, T::BinaryView) => f == &T::Binary || leaf_cast_allowed(f, &T::Binary),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::{Date32Array, Int32Array, StringArray, TimestampNanosecondArray};
    use arrow_schema::Fields;

    use super::*;

    /// `a` read as `target` through a plan built from the two types.
    fn read(column: &str, a: &ArrayRef, target: &Field) -> Result<ArrayRef> {
        ColumnPlan::new(
            "f.parquet",
            column,
            a.data_type(),
            target,
            ColumnMappingMode::None,
        )?
        .apply("f.parquet", a)
    }

    #[test]
    fn widening_and_units() {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(-3)]));
        let out = read("x", &a, &Field::new("x", DataType::Int64, true)).unwrap();
        assert_eq!(
            out.as_primitive::<arrow_array::types::Int64Type>().value(2),
            -3
        );
        let d: ArrayRef = Arc::new(Date32Array::from(vec![1]));
        let out = read(
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
        let out = read("t", &ns, &Field::new("t", to.clone(), true)).unwrap();
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
        let err = read("x", &s, &Field::new("x", DataType::Int64, true)).unwrap_err();
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
    fn views_read_from_every_byte_type_the_classic_type_reads_from() {
        use arrow_array::{
            BinaryArray, BinaryViewArray, DictionaryArray, FixedSizeBinaryArray, LargeBinaryArray,
            LargeStringArray, StringViewArray, types::Int32Type,
        };
        let strings: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![Some("ab"), None])),
            Arc::new(LargeStringArray::from(vec![Some("ab"), None])),
            Arc::new(StringViewArray::from(vec![Some("ab"), None])),
            Arc::new(BinaryArray::from(vec![Some(b"ab".as_ref()), None])),
            Arc::new(LargeBinaryArray::from(vec![Some(b"ab".as_ref()), None])),
            Arc::new(BinaryViewArray::from(vec![Some(b"ab".as_ref()), None])),
            Arc::new(DictionaryArray::<Int32Type>::from_iter([Some("ab"), None])),
        ];
        let view = Field::new("s", DataType::Utf8View, true);
        for a in &strings {
            let out = read("s", a, &view).unwrap();
            assert_eq!(out.as_string_view().value(0), "ab", "{}", a.data_type());
            assert!(out.is_null(1));
        }
        let binaries: Vec<ArrayRef> = vec![
            Arc::new(BinaryArray::from(vec![Some(b"ab".as_ref()), None])),
            Arc::new(LargeBinaryArray::from(vec![Some(b"ab".as_ref()), None])),
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vec![Some(b"ab".to_vec()), None].into_iter(),
                    2,
                )
                .unwrap(),
            ),
        ];
        let view = Field::new("b", DataType::BinaryView, true);
        for a in &binaries {
            let out = read("b", a, &view).unwrap();
            assert_eq!(out.as_binary_view().value(0), b"ab", "{}", a.data_type());
            assert!(out.is_null(1));
        }
        // Not UTF-8: an error naming the file and column, as for Utf8.
        let bad: ArrayRef = Arc::new(BinaryArray::from(vec![&[0xffu8, 0xfe][..]]));
        let err = read("s", &bad, &Field::new("s", DataType::Utf8View, true)).unwrap_err();
        assert!(err.to_string().contains("'s'"), "{err}");
        assert!(!leaf_cast_allowed(&DataType::Int32, &DataType::Utf8View));
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
        let out = read("s", &a, &target).unwrap();
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
