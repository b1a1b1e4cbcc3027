//! Coercing a literal to the type of the column it is compared with.
//!
//! Each column type has a *canonical literal type* (one of the [`Scalar`]
//! variants). Numbers compare across numeric types by value, as SQL does:
//!
//! * against an integer or decimal column, exactly: `passengers > 2.5` on an
//!   integer column is `passengers >= 3`, `fare < 10.005` on `decimal(8, 2)`
//!   is `fare <= 10.00`, `b = 300` on a `byte` column holds for no row. No
//!   literal is rounded through a float: a float literal stands for its exact
//!   binary value, NaN for a value above every number (SQL's order);
//! * against a float column, the literal is first the nearest `double` (SQL
//!   promotes integers and decimals compared with floats to `double`), then
//!   compared exactly, so `f = 0.1` on a `float` column holds for no row (no
//!   `float` is the `double` 0.1) and `f > 0.1` is `f >= 0.1f32`.
//!
//! A literal the column's type holds exactly becomes [`Coerced::Exact`]; one
//! it does not becomes [`Coerced::Between`] its two neighbours in the type
//! (either absent past the end of the type's range), from which the binder
//! writes an equivalent comparison on the column's own type. Other literals
//! (strings to dates, dates to timestamps, ...) are cast with Arrow's cast
//! kernel in strict mode and must cast back to the value given.

use arrow_cast::cast::{CastOptions, cast_with_options};
use arrow_schema::{DataType, TimeUnit};

use crate::error::{PruneError, Result};
use crate::exact::Number;
use crate::expr::{ColumnPath, Scalar, UTC};
use crate::float_order::normalize_scalar;

/// A literal converted to a column's canonical literal type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Coerced {
    /// The same value, in the column's type (floats in SQL-canonical form).
    Exact(Scalar),
    /// A number the column's type cannot hold: it lies strictly between
    /// `below` (the largest value of the type under it) and `above` (the
    /// smallest over it). `below` is `None` when the number is under the
    /// type's whole range, `above` when it is over it (never both).
    Between {
        /// The largest value of the type below the number.
        below: Option<Scalar>,
        /// The smallest value of the type above the number.
        above: Option<Scalar>,
    },
}

/// The literal type that values of `column_type` are compared as, or `None`
/// if the column type has no literal form (lists, maps, ...).
pub(crate) fn canonical_type(column_type: &DataType) -> Option<DataType> {
    Some(match column_type {
        DataType::Boolean => DataType::Boolean,
        t @ (DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64) => t.clone(),
        t @ (DataType::Float32 | DataType::Float64) => t.clone(),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => {
            DataType::Decimal128(*p, *s)
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => DataType::Binary,
        DataType::Date32 | DataType::Date64 => DataType::Date32,
        DataType::Timestamp(_, Some(_)) => {
            DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
        }
        DataType::Timestamp(_, None) => DataType::Timestamp(TimeUnit::Microsecond, None),
        _ => return None,
    })
}

fn is_numeric(t: &DataType) -> bool {
    t.is_integer() || t.is_floating() || matches!(t, DataType::Decimal128(..))
}

fn is_temporal(t: &DataType) -> bool {
    matches!(t, DataType::Date32 | DataType::Timestamp(..))
}

/// Converts `literal` to the canonical literal type of `column_type` (see
/// the module docs). NULL stays NULL.
pub(crate) fn coerce(
    column: &ColumnPath,
    column_type: &DataType,
    literal: &Scalar,
) -> Result<Coerced> {
    let incompatible = |reason: Option<String>| PruneError::IncompatibleTypes {
        column: column.to_string(),
        column_type: column_type.clone(),
        literal_type: literal.data_type(),
        literal: literal.to_string(),
        reason,
    };
    if literal.is_null() {
        return Ok(Coerced::Exact(Scalar::Null));
    }
    let Some(target) = canonical_type(column_type) else {
        return Err(incompatible(Some(
            "columns of this type cannot be compared with literals".into(),
        )));
    };
    let source = literal.data_type();
    if is_numeric(&source) && is_numeric(&target) {
        return numeric(literal, &target).ok_or_else(|| {
            incompatible(Some(format!("no {target} value can be compared with it")))
        });
    }
    if source == target {
        return Ok(Coerced::Exact(literal.clone()));
    }
    let allowed = match (&source, &target) {
        (DataType::Utf8, t) => matches!(t, DataType::Binary) || is_temporal(t),
        (s, t) => is_temporal(s) && is_temporal(t),
    };
    if !allowed {
        return Err(incompatible(None));
    }
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    let cast = cast_with_options(&literal.to_array(), &target, &strict)
        .map_err(|e| incompatible(Some(e.to_string())))?;
    let converted = Scalar::from_array(&cast, 0)
        .filter(|s| !s.is_null())
        .ok_or_else(|| incompatible(Some(format!("no {target} value for it"))))?;
    // Temporal narrowing must round-trip exactly (a string parsed as a date
    // has many spellings, so it is not checked this way).
    if source != DataType::Utf8 {
        let back = cast_with_options(&cast, &source, &strict)
            .ok()
            .and_then(|b| Scalar::from_array(&b, 0));
        if back.as_ref() != Some(literal) {
            return Err(incompatible(Some(format!(
                "the value does not fit {target} exactly"
            ))));
        }
    }
    Ok(Coerced::Exact(converted))
}

/// A numeric literal against a numeric column type (`None` only for a
/// decimal type with a negative scale, which Delta does not have).
fn numeric(literal: &Scalar, target: &DataType) -> Option<Coerced> {
    let number = Number::of(literal)?;
    fn int<T>(v: i128, min: T, max: T, make: fn(T) -> Scalar) -> Scalar
    where
        T: TryFrom<i128> + Into<i128> + Copy,
    {
        // Callers pass values inside the type's range; clamping keeps the
        // conversion total.
        let clamped = v.clamp(min.into(), max.into());
        make(T::try_from(clamped).unwrap_or(max))
    }
    Some(match target {
        DataType::Float64 => Coerced::Exact(Scalar::Float64(as_f64(literal, &number)?)),
        DataType::Float32 => to_f32(as_f64(literal, &number)?),
        DataType::Decimal128(precision, scale) => {
            let scale_digits = usize::try_from(*scale).ok()?;
            let max = 10i128.checked_pow(u32::from(*precision))? - 1;
            let make = |value: i128| Scalar::Decimal128 {
                value,
                precision: *precision,
                scale: *scale,
            };
            to_integral(&number, scale_digits, -max, max, make)
        }
        DataType::Int8 => to_integral(&number, 0, i8::MIN.into(), i8::MAX.into(), |v| {
            int(v, i8::MIN, i8::MAX, Scalar::Int8)
        }),
        DataType::Int16 => to_integral(&number, 0, i16::MIN.into(), i16::MAX.into(), |v| {
            int(v, i16::MIN, i16::MAX, Scalar::Int16)
        }),
        DataType::Int32 => to_integral(&number, 0, i32::MIN.into(), i32::MAX.into(), |v| {
            int(v, i32::MIN, i32::MAX, Scalar::Int32)
        }),
        DataType::Int64 => to_integral(&number, 0, i64::MIN.into(), i64::MAX.into(), |v| {
            int(v, i64::MIN, i64::MAX, Scalar::Int64)
        }),
        _ => return None,
    })
}

/// The nearest `double` to a numeric literal (a float literal exactly; an
/// integer or decimal rounded to nearest, as SQL's promotion to `double`).
fn as_f64(literal: &Scalar, number: &Number) -> Option<f64> {
    let v = match (literal, number) {
        (Scalar::Float64(v), _) => *v,
        (Scalar::Float32(v), _) => f64::from(*v),
        // Rust's float parsing is correctly rounded.
        (_, Number::Finite(d)) => d.to_string().parse::<f64>().ok()?,
        _ => return None,
    };
    let Scalar::Float64(v) = normalize_scalar(Scalar::Float64(v)) else {
        return None;
    };
    Some(v)
}

/// A `double` against a `float` column: the `float` of the same value, or
/// the two around it.
fn to_f32(v: f64) -> Coerced {
    if v.is_nan() {
        return Coerced::Exact(Scalar::Float32(f32::NAN));
    }
    // `as` rounds to nearest (to ±∞ past the largest `float`).
    let near = v as f32;
    if f64::from(near) == v {
        return Coerced::Exact(normalize_scalar(Scalar::Float32(near)));
    }
    let (below, above) = if f64::from(near) > v {
        (near.next_down(), near)
    } else {
        (near, near.next_up())
    };
    Coerced::Between {
        below: Some(normalize_scalar(Scalar::Float32(below))),
        above: Some(normalize_scalar(Scalar::Float32(above))),
    }
}

/// A number against an integral type: integers, or decimals of `scale`
/// digits after the point, whose unscaled values run from `min` to `max`.
fn to_integral(
    number: &Number,
    scale: usize,
    min: i128,
    max: i128,
    make: impl Fn(i128) -> Scalar,
) -> Coerced {
    let over = Coerced::Between {
        below: Some(make(max)),
        above: None,
    };
    let under = Coerced::Between {
        below: None,
        above: Some(make(min)),
    };
    let d = match number {
        // NaN sorts above every number in SQL.
        Number::NaN | Number::Infinite { negative: false } => return over,
        Number::Infinite { negative: true } => return under,
        Number::Finite(d) => d,
    };
    let Some((floor, ceil)) = d.scaled(scale) else {
        return if d.negative { under } else { over };
    };
    if floor == ceil && (min..=max).contains(&floor) {
        return Coerced::Exact(make(floor));
    }
    // Inexact (`ceil = floor + 1`) or out of range: the neighbours, where
    // the type has them.
    if floor >= max {
        return over;
    }
    if ceil <= min {
        return under;
    }
    Coerced::Between {
        below: Some(make(floor)),
        above: Some(make(ceil)),
    }
}

#[cfg(test)]
#[path = "coerce_tests.rs"]
mod tests;
