//! The value checksum every reader's result is checked against: the same
//! rows in any order, with any of the Arrow types readers choose for a
//! column (string views, large strings, timestamp units, integer widths),
//! give the same checksum.

use std::collections::BTreeMap;
use std::fmt;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use serde::{Deserialize, Serialize};

/// Per column: non-null count, null count and the wrapping sum of the
/// values' hashes. Columns are keyed by lower-case name, so readers may
/// return them in any order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checksum {
    /// Rows seen.
    pub rows: u64,
    /// Lower-case column name to its summary.
    pub columns: BTreeMap<String, ColumnSum>,
}

/// One column's order-independent summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSum {
    /// Null values.
    pub nulls: u64,
    /// Wrapping sum of the non-null values' hashes.
    pub hash_sum: u64,
}

impl Checksum {
    /// Adds a batch's rows.
    pub fn add_batch(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.rows += batch.num_rows() as u64;
        for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
            let sum = self.columns.entry(field.name().to_lowercase()).or_default();
            add_array(sum, array)
                .map_err(|e| format!("column {} ({}): {e}", field.name(), field.data_type()))?;
        }
        Ok(())
    }

    /// One hex digest over every column, for tables and logs.
    pub fn digest(&self) -> String {
        let mut h = mix(self.rows);
        for (name, c) in &self.columns {
            h = mix(h ^ hash_bytes(name.as_bytes()));
            h = mix(h ^ c.nulls);
            h = mix(h ^ c.hash_sum);
        }
        format!("{h:016x}")
    }

    /// Names the columns that differ from `expected` (for a "wrong result"
    /// message).
    pub fn diff(&self, expected: &Checksum) -> String {
        if self.rows != expected.rows {
            return format!("{} rows, expected {}", self.rows, expected.rows);
        }
        let mut out = Vec::new();
        for (name, want) in &expected.columns {
            match self.columns.get(name) {
                None => out.push(format!("column {name} missing")),
                Some(got) if got != want => out.push(format!(
                    "column {name}: {} nulls / sum {:016x}, expected {} / {:016x}",
                    got.nulls, got.hash_sum, want.nulls, want.hash_sum
                )),
                Some(_) => {}
            }
        }
        for name in self.columns.keys() {
            if !expected.columns.contains_key(name) {
                out.push(format!("unexpected column {name}"));
            }
        }
        out.join("; ")
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rows, {}", self.rows, self.digest())
    }
}

/// splitmix64's finalizer: a cheap, well-mixed 64-bit hash of a 64-bit value.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// FNV-1a over bytes, then mixed.
fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    mix(h)
}

fn add_array(sum: &mut ColumnSum, array: &ArrayRef) -> Result<(), String> {
    sum.nulls += array.null_count() as u64;
    let mut add = |h: u64| sum.hash_sum = sum.hash_sum.wrapping_add(h);
    macro_rules! ints {
        ($t:ty) => {
            array
                .as_primitive::<$t>()
                .iter()
                .flatten()
                .for_each(|v| add(mix(v as i64 as u64)))
        };
    }
    match array.data_type() {
        DataType::Boolean => array
            .as_boolean()
            .iter()
            .flatten()
            .for_each(|v| add(mix(u64::from(v)))),
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        DataType::Date32 => ints!(Date32Type),
        DataType::Date64 => array
            .as_primitive::<Date64Type>()
            .iter()
            .flatten()
            .for_each(|ms| add(mix(ms.div_euclid(86_400_000) as u64))),
        DataType::Float32 => array
            .as_primitive::<Float32Type>()
            .iter()
            .flatten()
            .for_each(|v| add(mix(f64::from(v).to_bits()))),
        DataType::Float64 => array
            .as_primitive::<Float64Type>()
            .iter()
            .flatten()
            .for_each(|v| add(mix(v.to_bits()))),
        DataType::Decimal128(_, scale) => {
            // Normalized to scale 18 so readers that widen the scale agree.
            let shift = 18 - i32::from(*scale);
            array
                .as_primitive::<Decimal128Type>()
                .iter()
                .flatten()
                .for_each(|v| {
                    let n = if shift >= 0 {
                        v.wrapping_mul(10i128.pow(shift as u32))
                    } else {
                        v / 10i128.pow((-shift) as u32)
                    };
                    add(mix((n as u64) ^ mix((n >> 64) as u64)))
                })
        }
        DataType::Timestamp(unit, _) => {
            let micros: Box<dyn Iterator<Item = i64>> = match unit {
                TimeUnit::Second => Box::new(
                    array
                        .as_primitive::<TimestampSecondType>()
                        .iter()
                        .flatten()
                        .map(|v| v.wrapping_mul(1_000_000)),
                ),
                TimeUnit::Millisecond => Box::new(
                    array
                        .as_primitive::<TimestampMillisecondType>()
                        .iter()
                        .flatten()
                        .map(|v| v.wrapping_mul(1_000)),
                ),
                TimeUnit::Microsecond => Box::new(
                    array
                        .as_primitive::<TimestampMicrosecondType>()
                        .iter()
                        .flatten(),
                ),
                TimeUnit::Nanosecond => Box::new(
                    array
                        .as_primitive::<TimestampNanosecondType>()
                        .iter()
                        .flatten()
                        .map(|v| v.div_euclid(1_000)),
                ),
            };
            micros.for_each(|v| add(mix(v as u64)))
        }
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .flatten()
            .for_each(|s| add(hash_bytes(s.as_bytes()))),
        DataType::LargeUtf8 => array
            .as_string::<i64>()
            .iter()
            .flatten()
            .for_each(|s| add(hash_bytes(s.as_bytes()))),
        DataType::Utf8View => array
            .as_string_view()
            .iter()
            .flatten()
            .for_each(|s| add(hash_bytes(s.as_bytes()))),
        DataType::Binary => array
            .as_binary::<i32>()
            .iter()
            .flatten()
            .for_each(|s| add(hash_bytes(s))),
        DataType::LargeBinary => array
            .as_binary::<i64>()
            .iter()
            .flatten()
            .for_each(|s| add(hash_bytes(s))),
        DataType::BinaryView => array
            .as_binary_view()
            .iter()
            .flatten()
            .for_each(|s| add(hash_bytes(s))),
        DataType::Dictionary(_, value) => {
            let plain = arrow_cast::cast(array, value).map_err(|e| e.to_string())?;
            // Nulls were counted above; count them once.
            sum.nulls -= plain.null_count() as u64;
            return add_array(sum, &plain);
        }
        other => return Err(format!("no checksum for type {other}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use std::sync::Arc;

    use arrow_array::{Int32Array, Int64Array, LargeStringArray, StringArray, StringViewArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
        let fields: Vec<Field> = cols
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect();
        RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            cols.into_iter().map(|(_, a)| a).collect(),
        )
        .unwrap()
    }

    #[test]
    fn order_width_and_string_type_do_not_matter() {
        let mut a = Checksum::default();
        a.add_batch(&batch(vec![
            (
                "ID",
                Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])),
            ),
            ("s", Arc::new(StringArray::from(vec!["x", "y", "z"]))),
        ]))
        .unwrap();
        let mut b = Checksum::default();
        b.add_batch(&batch(vec![
            ("s", Arc::new(StringViewArray::from(vec!["z", "x"]))),
            ("id", Arc::new(Int32Array::from(vec![Some(3), Some(1)]))),
        ]))
        .unwrap();
        b.add_batch(&batch(vec![
            ("s", Arc::new(LargeStringArray::from(vec!["y"]))),
            ("id", Arc::new(Int32Array::from(vec![None]))),
        ]))
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.digest(), b.digest());
        assert_eq!(a.diff(&b), "");
    }

    #[test]
    fn a_changed_value_or_a_missing_row_is_seen() {
        let mut a = Checksum::default();
        a.add_batch(&batch(vec![(
            "id",
            Arc::new(Int64Array::from(vec![1, 2, 3])),
        )]))
        .unwrap();
        let mut b = Checksum::default();
        b.add_batch(&batch(vec![(
            "id",
            Arc::new(Int64Array::from(vec![1, 2, 4])),
        )]))
        .unwrap();
        assert_ne!(a.digest(), b.digest());
        assert!(b.diff(&a).starts_with("column id:"), "{}", b.diff(&a));
        let mut c = Checksum::default();
        c.add_batch(&batch(vec![("id", Arc::new(Int64Array::from(vec![1, 2])))]))
            .unwrap();
        assert_eq!(c.diff(&a), "2 rows, expected 3");
    }
}
