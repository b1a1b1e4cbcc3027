//! Typed literals, one variant per Delta primitive type.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array,
    Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, NullArray, StringArray,
    TimestampMicrosecondArray, cast::AsArray, types,
};
use arrow_schema::{DataType, TimeUnit};

/// The time zone used for Delta `timestamp` literals (UTC instants). An offset
/// rather than `"UTC"`, because Arrow resolves zone names only with `chrono-tz`.
pub const UTC: &str = "+00:00";

/// A literal value of a Delta primitive type.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// SQL `NULL` (takes the type of the column it is compared with).
    Null,
    /// `boolean`
    Boolean(bool),
    /// `byte`
    Int8(i8),
    /// `short`
    Int16(i16),
    /// `integer`
    Int32(i32),
    /// `long`
    Int64(i64),
    /// `float`
    Float32(f32),
    /// `double`
    Float64(f64),
    /// `decimal(precision, scale)`: `value / 10^scale`.
    Decimal128 {
        /// Unscaled value.
        value: i128,
        /// Total number of digits (1..=38).
        precision: u8,
        /// Digits after the point.
        scale: i8,
    },
    /// `string`
    Utf8(String),
    /// `binary`
    Binary(Vec<u8>),
    /// `date`: days since 1970-01-01.
    Date32(i32),
    /// `timestamp`: microseconds since the Unix epoch, UTC.
    Timestamp(i64),
    /// `timestamp_ntz`: microseconds since 1970-01-01T00:00:00, no zone.
    TimestampNtz(i64),
}

impl Scalar {
    /// The Arrow type of this literal (`Null` for [`Scalar::Null`]).
    pub fn data_type(&self) -> DataType {
        match self {
            Self::Null => DataType::Null,
            Self::Boolean(_) => DataType::Boolean,
            Self::Int8(_) => DataType::Int8,
            Self::Int16(_) => DataType::Int16,
            Self::Int32(_) => DataType::Int32,
            Self::Int64(_) => DataType::Int64,
            Self::Float32(_) => DataType::Float32,
            Self::Float64(_) => DataType::Float64,
            Self::Decimal128 {
                precision, scale, ..
            } => DataType::Decimal128(*precision, *scale),
            Self::Utf8(_) => DataType::Utf8,
            Self::Binary(_) => DataType::Binary,
            Self::Date32(_) => DataType::Date32,
            Self::Timestamp(_) => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
            Self::TimestampNtz(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
        }
    }

    /// True for [`Scalar::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// A one-element array holding this literal, of [`Scalar::data_type`].
    pub fn to_array(&self) -> ArrayRef {
        match self {
            Self::Null => Arc::new(NullArray::new(1)),
            Self::Boolean(v) => Arc::new(BooleanArray::from(vec![*v])),
            Self::Int8(v) => Arc::new(Int8Array::from(vec![*v])),
            Self::Int16(v) => Arc::new(Int16Array::from(vec![*v])),
            Self::Int32(v) => Arc::new(Int32Array::from(vec![*v])),
            Self::Int64(v) => Arc::new(Int64Array::from(vec![*v])),
            Self::Float32(v) => Arc::new(Float32Array::from(vec![*v])),
            Self::Float64(v) => Arc::new(Float64Array::from(vec![*v])),
            Self::Decimal128 {
                value,
                precision,
                scale,
            } => Arc::new(
                Decimal128Array::from(vec![*value])
                    .with_precision_and_scale(*precision, *scale)
                    // An out-of-range precision/scale falls back to the widest
                    // decimal; validation rejects such literals before use.
                    .unwrap_or_else(|_| Decimal128Array::from(vec![*value])),
            ),
            Self::Utf8(v) => Arc::new(StringArray::from(vec![v.as_str()])),
            Self::Binary(v) => Arc::new(BinaryArray::from(vec![v.as_slice()])),
            Self::Date32(v) => Arc::new(Date32Array::from(vec![*v])),
            Self::Timestamp(v) => {
                Arc::new(TimestampMicrosecondArray::from(vec![*v]).with_timezone(UTC))
            }
            Self::TimestampNtz(v) => Arc::new(TimestampMicrosecondArray::from(vec![*v])),
        }
    }

    /// Reads element `i` of an array of one of the literal types (as produced
    /// by [`Scalar::to_array`]); `None` for other types or out-of-range `i`.
    pub fn from_array(array: &dyn Array, i: usize) -> Option<Scalar> {
        if i >= array.len() {
            return None;
        }
        if array.is_null(i) {
            return Some(Self::Null);
        }
        Some(match array.data_type() {
            DataType::Boolean => Self::Boolean(array.as_boolean().value(i)),
            DataType::Int8 => Self::Int8(array.as_primitive::<types::Int8Type>().value(i)),
            DataType::Int16 => Self::Int16(array.as_primitive::<types::Int16Type>().value(i)),
            DataType::Int32 => Self::Int32(array.as_primitive::<types::Int32Type>().value(i)),
            DataType::Int64 => Self::Int64(array.as_primitive::<types::Int64Type>().value(i)),
            DataType::Float32 => Self::Float32(array.as_primitive::<types::Float32Type>().value(i)),
            DataType::Float64 => Self::Float64(array.as_primitive::<types::Float64Type>().value(i)),
            DataType::Decimal128(p, s) => Self::Decimal128 {
                value: array.as_primitive::<types::Decimal128Type>().value(i),
                precision: *p,
                scale: *s,
            },
            DataType::Utf8 => Self::Utf8(array.as_string::<i32>().value(i).to_string()),
            DataType::Binary => Self::Binary(array.as_binary::<i32>().value(i).to_vec()),
            DataType::Date32 => Self::Date32(array.as_primitive::<types::Date32Type>().value(i)),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                let v = array
                    .as_primitive::<types::TimestampMicrosecondType>()
                    .value(i);
                if tz.is_some() {
                    Self::Timestamp(v)
                } else {
                    Self::TimestampNtz(v)
                }
            }
            _ => return None,
        })
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Self::Boolean(v)
    }
}
impl From<i8> for Scalar {
    fn from(v: i8) -> Self {
        Self::Int8(v)
    }
}
impl From<i16> for Scalar {
    fn from(v: i16) -> Self {
        Self::Int16(v)
    }
}
impl From<i32> for Scalar {
    fn from(v: i32) -> Self {
        Self::Int32(v)
    }
}
impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Self::Int64(v)
    }
}
impl From<f32> for Scalar {
    fn from(v: f32) -> Self {
        Self::Float32(v)
    }
}
impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Self::Float64(v)
    }
}
impl From<&str> for Scalar {
    fn from(v: &str) -> Self {
        Self::Utf8(v.to_string())
    }
}
impl From<String> for Scalar {
    fn from(v: String) -> Self {
        Self::Utf8(v)
    }
}
impl From<Vec<u8>> for Scalar {
    fn from(v: Vec<u8>) -> Self {
        Self::Binary(v)
    }
}
impl From<&[u8]> for Scalar {
    fn from(v: &[u8]) -> Self {
        Self::Binary(v.to_vec())
    }
}
