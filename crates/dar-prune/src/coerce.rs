//! Coercing a literal to the type of the column it is compared with, only
//! where no information is lost.
//!
//! Each column type has a *canonical literal type* (one of the [`Scalar`]
//! variants). A literal is cast to it with Arrow's cast kernel in strict mode;
//! numeric casts are then cast back and must give the original value, so
//! `300` against a `byte` column or `1.5` against an `integer` column is an
//! error rather than a silently different predicate.

use arrow_cast::cast::{CastOptions, cast_with_options};
use arrow_schema::{DataType, TimeUnit};

use crate::error::{PruneError, Result};
use crate::expr::{ColumnPath, Scalar, UTC};

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

/// Converts `literal` to the canonical literal type of `column_type`.
pub(crate) fn coerce(
    column: &ColumnPath,
    column_type: &DataType,
    literal: &Scalar,
) -> Result<Scalar> {
    let incompatible = |reason: Option<String>| PruneError::IncompatibleTypes {
        column: column.to_string(),
        column_type: column_type.clone(),
        literal_type: literal.data_type(),
        literal: literal.to_string(),
        reason,
    };
    if literal.is_null() {
        return Ok(Scalar::Null);
    }
    let Some(target) = canonical_type(column_type) else {
        return Err(incompatible(Some(
            "columns of this type cannot be compared with literals".into(),
        )));
    };
    let source = literal.data_type();
    if source == target {
        return Ok(literal.clone());
    }
    let allowed = match (&source, &target) {
        (s, t) if is_numeric(s) && is_numeric(t) => true,
        (DataType::Utf8, t) => matches!(t, DataType::Binary) || is_temporal(t),
        (s, t) if is_temporal(s) && is_temporal(t) => true,
        _ => false,
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
    // Numeric and temporal narrowing must round-trip exactly (a string parsed
    // as a date has many spellings, so it is not checked this way).
    if source != DataType::Utf8 {
        let back = cast_with_options(&cast, &source, &strict)
            .ok()
            .and_then(|b| Scalar::from_array(&b, 0));
        let same = match (&back, literal) {
            (Some(Scalar::Float32(a)), Scalar::Float32(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Some(Scalar::Float64(a)), Scalar::Float64(b)) => a == b || (a.is_nan() && b.is_nan()),
            // A decimal literal against a float column takes the nearest
            // float, as SQL's numeric promotion does (`x > 0.1`).
            (_, Scalar::Decimal128 { .. }) if target.is_floating() => true,
            (Some(b), l) => b == l,
            (None, _) => false,
        };
        if !same {
            return Err(incompatible(Some(format!(
                "the value does not fit {target} exactly"
            ))));
        }
    }
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(t: DataType, s: Scalar) -> Result<Scalar> {
        coerce(&ColumnPath::from_dotted("c"), &t, &s)
    }

    #[test]
    fn lossless_numeric() {
        assert_eq!(
            c(DataType::Int8, Scalar::Int64(5)).unwrap(),
            Scalar::Int8(5)
        );
        assert!(c(DataType::Int8, Scalar::Int64(300)).is_err());
        assert_eq!(
            c(DataType::Float64, Scalar::Int64(5)).unwrap(),
            Scalar::Float64(5.0)
        );
        assert!(c(DataType::Float32, Scalar::Int64((1 << 24) + 1)).is_err());
        assert_eq!(
            c(DataType::Decimal128(10, 2), Scalar::Int64(5)).unwrap(),
            Scalar::Decimal128 {
                value: 500,
                precision: 10,
                scale: 2
            }
        );
        assert!(c(DataType::Decimal128(3, 2), Scalar::Int64(50)).is_err());
        let d = Scalar::Decimal128 {
            value: 15,
            precision: 2,
            scale: 1,
        };
        assert!(c(DataType::Int32, d.clone()).is_err());
        assert_eq!(c(DataType::Float64, d).unwrap(), Scalar::Float64(1.5));
        assert_eq!(
            c(DataType::Float32, Scalar::Float64(1.5)).unwrap(),
            Scalar::Float32(1.5)
        );
        assert!(c(DataType::Float32, Scalar::Float64(0.1)).is_err());
    }

    #[test]
    fn strings_to_temporal() {
        assert_eq!(
            c(DataType::Date32, Scalar::from("1970-01-02")).unwrap(),
            Scalar::Date32(1)
        );
        let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into()));
        assert_eq!(
            c(ts, Scalar::from("1970-01-01T00:00:01Z")).unwrap(),
            Scalar::Timestamp(1_000_000)
        );
        let ntz = DataType::Timestamp(TimeUnit::Microsecond, None);
        assert_eq!(
            c(ntz.clone(), Scalar::Date32(1)).unwrap(),
            Scalar::TimestampNtz(86_400_000_000)
        );
        assert!(c(DataType::Date32, Scalar::from("not a date")).is_err());
        assert!(c(DataType::Date32, Scalar::TimestampNtz(1)).is_err());
        let err = c(DataType::Int32, Scalar::from("x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot compare column `c` of type Int32 with Utf8 literal 'x'"
        );
    }
}
