//! SQL semantics for floats: `-0.0 = 0.0`, and NaN is one value (whatever
//! its sign or payload), equal to itself and above every other value,
//! `+∞` included (Spark's rules; DataFusion and DuckDB compare the zeros
//! equal too).
//!
//! arrow-rs's comparison kernels and comparators order floats by IEEE total
//! order instead, which tells `-0.0` from `0.0` and puts a negative NaN
//! below `-∞`. Rewriting every float operand first, `-0.0` to `0.0` and
//! every NaN to the canonical positive NaN, makes that total order the SQL
//! one, so the exact evaluator, the `IN` lookups and the pruning rules all
//! keep using arrow's kernels. Arrays that hold neither a negative zero nor
//! a non-canonical NaN are returned as they are (one pass, no copy).

use std::sync::Arc;

use arrow_array::{ArrayRef, ArrowPrimitiveType, PrimitiveArray, cast::AsArray, types};
use arrow_schema::DataType;

use crate::expr::Scalar;

/// A float type whose values have one SQL-canonical form.
trait SqlFloat: Copy {
    /// `0.0` for either zero, the canonical NaN for every NaN, else `self`.
    fn canonical(self) -> Self;
    /// Whether `self` is already [`SqlFloat::canonical`] (bit for bit).
    fn is_canonical(self) -> bool;
}

macro_rules! sql_float {
    ($t:ty) => {
        impl SqlFloat for $t {
            fn canonical(self) -> Self {
                if self.is_nan() {
                    <$t>::NAN
                } else if self == 0.0 {
                    0.0
                } else {
                    self
                }
            }
            fn is_canonical(self) -> bool {
                self.to_bits() == self.canonical().to_bits()
            }
        }
    };
}
sql_float!(f32);
sql_float!(f64);

fn normalize_typed<T>(array: &ArrayRef) -> ArrayRef
where
    T: ArrowPrimitiveType,
    T::Native: SqlFloat,
{
    let typed = array.as_primitive::<T>();
    if typed.values().iter().all(|v| v.is_canonical()) {
        return Arc::clone(array);
    }
    let out: PrimitiveArray<T> = typed.unary(SqlFloat::canonical);
    Arc::new(out)
}

/// `array` with its float values in SQL-canonical form (see the module
/// docs); arrays of other types are returned unchanged.
pub(crate) fn normalize(array: &ArrayRef) -> ArrayRef {
    match array.data_type() {
        DataType::Float32 => normalize_typed::<types::Float32Type>(array),
        DataType::Float64 => normalize_typed::<types::Float64Type>(array),
        _ => Arc::clone(array),
    }
}

/// A float literal in SQL-canonical form; other literals unchanged.
pub(crate) fn normalize_scalar(s: Scalar) -> Scalar {
    match s {
        Scalar::Float32(v) => Scalar::Float32(v.canonical()),
        Scalar::Float64(v) => Scalar::Float64(v.canonical()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::Float64Array;
    use arrow_ord::cmp;

    use super::*;

    #[test]
    fn zeros_are_equal_and_nan_is_one_value_above_infinity() {
        let negative_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
        let payload_nan = f64::from_bits(f64::NAN.to_bits() | 1);
        let values: ArrayRef = Arc::new(Float64Array::from(vec![
            -0.0,
            0.0,
            negative_nan,
            payload_nan,
            f64::INFINITY,
        ]));
        // arrow's kernels alone: the zeros differ, a negative NaN is lowest.
        let zero = Float64Array::new_scalar(0.0);
        assert_eq!(
            cmp::eq(&values, &zero).unwrap(),
            vec![false, true, false, false, false].into()
        );
        let v = normalize(&values);
        assert_eq!(
            cmp::eq(&v, &zero).unwrap(),
            vec![true, true, false, false, false].into()
        );
        let nan = Float64Array::new_scalar(f64::NAN);
        assert_eq!(
            cmp::eq(&v, &nan).unwrap(),
            vec![false, false, true, true, false].into()
        );
        let inf = Float64Array::new_scalar(f64::INFINITY);
        assert_eq!(
            cmp::gt(&v, &inf).unwrap(),
            vec![false, false, true, true, false].into()
        );
        // Already canonical: the same array, not a copy.
        let plain: ArrayRef = Arc::new(Float64Array::from(vec![1.0, f64::NAN]));
        assert!(Arc::ptr_eq(&normalize(&plain), &plain));
        let Scalar::Float32(z) = normalize_scalar(Scalar::Float32(-0.0)) else {
            panic!()
        };
        assert_eq!(z.to_bits(), 0);
        let Scalar::Float64(n) = normalize_scalar(Scalar::Float64(negative_nan)) else {
            panic!()
        };
        assert_eq!(n.to_bits(), f64::NAN.to_bits());
    }
}
