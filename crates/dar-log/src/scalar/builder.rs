//! One typed Arrow builder per Delta primitive type, fed with text.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::NullArray;
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder,
    Float64Builder, Int8Builder, Int16Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};

use super::parse::{
    parse_bool, parse_date, parse_decimal, parse_f32, parse_f64, parse_integer, parse_timestamp,
};
use crate::schema::{PrimitiveType, UTC};

/// Builds one Arrow column of a Delta primitive type from text values.
///
/// The text forms are those of partition values and of JSON stats (after JSON
/// string decoding): see `parse.rs`. `timestamp` accepts both the zone-less
/// form (read as UTC, like kernel-rs) and any RFC 3339 offset;
/// `timestamp_ntz` refuses a zone but accepts a bare date (midnight: the
/// `date -> timestamp_ntz` widening).
#[derive(Debug)]
pub(crate) enum ScalarBuilder {
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Boolean(BooleanBuilder),
    Int8(Int8Builder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Date32(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
    TimestampNtz(TimestampMicrosecondBuilder),
    Decimal {
        builder: Decimal128Builder,
        precision: u8,
        scale: u8,
    },
    /// `void` (and the interval types, which have no text form here): only nulls.
    Null {
        len: usize,
        kind: PrimitiveType,
    },
}

impl ScalarBuilder {
    /// An empty builder for `kind`.
    pub(crate) fn new(kind: PrimitiveType, capacity: usize) -> Self {
        use PrimitiveType as P;
        match kind {
            P::String => Self::Utf8(StringBuilder::with_capacity(capacity, capacity * 8)),
            P::Binary => Self::Binary(BinaryBuilder::with_capacity(capacity, capacity * 8)),
            P::Boolean => Self::Boolean(BooleanBuilder::with_capacity(capacity)),
            P::Byte => Self::Int8(Int8Builder::with_capacity(capacity)),
            P::Short => Self::Int16(Int16Builder::with_capacity(capacity)),
            P::Integer => Self::Int32(Int32Builder::with_capacity(capacity)),
            P::Long => Self::Int64(Int64Builder::with_capacity(capacity)),
            P::Float => Self::Float32(Float32Builder::with_capacity(capacity)),
            P::Double => Self::Float64(Float64Builder::with_capacity(capacity)),
            P::Date => Self::Date32(Date32Builder::with_capacity(capacity)),
            P::Timestamp => Self::Timestamp(
                TimestampMicrosecondBuilder::with_capacity(capacity).with_timezone(UTC),
            ),
            P::TimestampNtz => {
                Self::TimestampNtz(TimestampMicrosecondBuilder::with_capacity(capacity))
            }
            P::Decimal(d) => Self::Decimal {
                builder: Decimal128Builder::with_capacity(capacity).with_data_type(
                    arrow_schema::DataType::Decimal128(d.precision(), d.scale() as i8),
                ),
                precision: d.precision(),
                scale: d.scale(),
            },
            P::Void | P::IntervalYearToMonth | P::IntervalDayToSecond => {
                Self::Null { len: 0, kind }
            }
        }
    }

    /// Appends a null.
    pub(crate) fn append_null(&mut self) {
        match self {
            Self::Utf8(b) => b.append_null(),
            Self::Binary(b) => b.append_null(),
            Self::Boolean(b) => b.append_null(),
            Self::Int8(b) => b.append_null(),
            Self::Int16(b) => b.append_null(),
            Self::Int32(b) => b.append_null(),
            Self::Int64(b) => b.append_null(),
            Self::Float32(b) => b.append_null(),
            Self::Float64(b) => b.append_null(),
            Self::Date32(b) => b.append_null(),
            Self::Timestamp(b) | Self::TimestampNtz(b) => b.append_null(),
            Self::Decimal { builder, .. } => builder.append_null(),
            Self::Null { len, .. } => *len += 1,
        }
    }

    /// Parses `text` and appends it; returns `false` (appending nothing) when
    /// the text is not a value of this type.
    #[must_use]
    pub(crate) fn append_text(&mut self, text: &str) -> bool {
        match self {
            Self::Utf8(b) => b.append_value(text),
            Self::Binary(b) => b.append_value(text.as_bytes()),
            Self::Boolean(b) => return push(b, parse_bool(text)),
            Self::Int8(b) => return push(b, parse_integer(text)),
            Self::Int16(b) => return push(b, parse_integer(text)),
            Self::Int32(b) => return push(b, parse_integer(text)),
            Self::Int64(b) => return push(b, parse_integer(text)),
            Self::Float32(b) => return push(b, parse_f32(text)),
            Self::Float64(b) => return push(b, parse_f64(text)),
            Self::Date32(b) => return push(b, parse_date(text)),
            Self::Timestamp(b) => {
                let ts = parse_timestamp(text).filter(|t| t.has_time);
                return push(b, ts.map(|t| t.micros));
            }
            Self::TimestampNtz(b) => {
                let ts = parse_timestamp(text).filter(|t| !t.has_zone);
                return push(b, ts.map(|t| t.micros));
            }
            Self::Decimal {
                builder,
                precision,
                scale,
            } => return push(builder, parse_decimal(text, *precision, *scale)),
            Self::Null { .. } => return false,
        }
        true
    }

    /// The column built so far (the builder is reset, keeping its type).
    pub(crate) fn finish(&mut self) -> ArrayRef {
        match self {
            Self::Utf8(b) => Arc::new(b.finish()),
            Self::Binary(b) => Arc::new(b.finish()),
            Self::Boolean(b) => Arc::new(b.finish()),
            Self::Int8(b) => Arc::new(b.finish()),
            Self::Int16(b) => Arc::new(b.finish()),
            Self::Int32(b) => Arc::new(b.finish()),
            Self::Int64(b) => Arc::new(b.finish()),
            Self::Float32(b) => Arc::new(b.finish()),
            Self::Float64(b) => Arc::new(b.finish()),
            Self::Date32(b) => Arc::new(b.finish()),
            Self::Timestamp(b) | Self::TimestampNtz(b) => Arc::new(b.finish()),
            Self::Decimal { builder, .. } => Arc::new(builder.finish()),
            Self::Null { len, kind } => {
                let n = std::mem::take(len);
                null_array(*kind, n)
            }
        }
    }

    /// Rows appended since the last `finish`.
    pub(crate) fn len(&self) -> usize {
        use arrow_array::builder::ArrayBuilder;
        match self {
            Self::Utf8(b) => b.len(),
            Self::Binary(b) => b.len(),
            Self::Boolean(b) => b.len(),
            Self::Int8(b) => b.len(),
            Self::Int16(b) => b.len(),
            Self::Int32(b) => b.len(),
            Self::Int64(b) => b.len(),
            Self::Float32(b) => b.len(),
            Self::Float64(b) => b.len(),
            Self::Date32(b) => b.len(),
            Self::Timestamp(b) | Self::TimestampNtz(b) => b.len(),
            Self::Decimal { builder, .. } => builder.len(),
            Self::Null { len, .. } => *len,
        }
    }
}

/// An all-null column of `kind`'s Arrow type.
fn null_array(kind: PrimitiveType, len: usize) -> ArrayRef {
    match kind {
        PrimitiveType::Void => Arc::new(NullArray::new(len)),
        other => arrow_array::new_null_array(&crate::schema::primitive_to_arrow(other), len),
    }
}

trait AppendOption<T> {
    fn append_option_value(&mut self, v: T);
}

macro_rules! impl_append {
    ($($builder:ty => $t:ty),* $(,)?) => {$(
        impl AppendOption<$t> for $builder {
            fn append_option_value(&mut self, v: $t) {
                self.append_value(v);
            }
        }
    )*};
}

impl_append!(
    BooleanBuilder => bool,
    Int8Builder => i8,
    Int16Builder => i16,
    Int32Builder => i32,
    Int64Builder => i64,
    Float32Builder => f32,
    Float64Builder => f64,
    Date32Builder => i32,
    TimestampMicrosecondBuilder => i64,
    Decimal128Builder => i128,
);

fn push<T, B: AppendOption<T>>(builder: &mut B, value: Option<T>) -> bool {
    match value {
        Some(v) => {
            builder.append_option_value(v);
            true
        }
        None => false,
    }
}
