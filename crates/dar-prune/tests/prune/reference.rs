//! A deliberately simple row-by-row evaluator: SQL three-valued logic over
//! `Scalar`s, independent of the Arrow kernels under test and of binding:
//! it evaluates predicates as written, numbers compared by value across
//! types, floats in SQL's order (`-0.0 = 0.0`, NaN one value above all).

use std::cmp::Ordering;

use arrow_array::{Array, RecordBatch, cast::AsArray};
use dar_prune::{CmpOp, ColumnPath, Expr, Scalar};

/// The value of `path` at `row`, NULL when any enclosing struct is NULL.
pub fn value_at(batch: &RecordBatch, path: &ColumnPath, row: usize) -> Scalar {
    let mut array = batch.column_by_name(&path.parts()[0]).unwrap().clone();
    for part in &path.parts()[1..] {
        if array.is_null(row) {
            return Scalar::Null;
        }
        array = array.as_struct().column_by_name(part).unwrap().clone();
    }
    Scalar::from_array(array.as_ref(), row).expect("test columns use literal types")
}

/// SQL's order of doubles: the zeros equal, NaN one value above all.
fn sql_f64(a: f64, b: f64) -> Ordering {
    let canonical = |v: f64| {
        if v.is_nan() {
            f64::NAN
        } else if v == 0.0 {
            0.0
        } else {
            v
        }
    };
    canonical(a).total_cmp(&canonical(b))
}

/// A number as the reference sees it: an exact fraction, or past every
/// finite number (the infinities, NaN above +∞).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Num {
    NegInf,
    Ratio,
    PosInf,
    NaN,
}

fn is_number(s: &Scalar) -> bool {
    use Scalar as S;
    matches!(
        s,
        S::Int8(_)
            | S::Int16(_)
            | S::Int32(_)
            | S::Int64(_)
            | S::Decimal128 { .. }
            | S::Float32(_)
            | S::Float64(_)
    )
}

/// `(kind, numerator, denominator)` of a numeric literal or value; `None`
/// for other scalars. Doubles in the tests are small multiples of 1/1024
/// or whole numbers, so their fractions are exact in `i128`.
fn ratio(s: &Scalar) -> Option<(Num, i128, i128)> {
    use Scalar as S;
    let float = |v: f64| {
        if v.is_nan() {
            (Num::NaN, 0, 1)
        } else if v.is_infinite() {
            (if v > 0.0 { Num::PosInf } else { Num::NegInf }, 0, 1)
        } else if v == v.trunc() {
            (Num::Ratio, v as i128, 1)
        } else {
            let scaled = v * 1024.0;
            assert_eq!(
                scaled,
                scaled.trunc(),
                "test doubles are multiples of 1/1024: {v}"
            );
            (Num::Ratio, scaled as i128, 1024)
        }
    };
    Some(match s {
        S::Int8(v) => (Num::Ratio, i128::from(*v), 1),
        S::Int16(v) => (Num::Ratio, i128::from(*v), 1),
        S::Int32(v) => (Num::Ratio, i128::from(*v), 1),
        S::Int64(v) => (Num::Ratio, i128::from(*v), 1),
        S::Decimal128 { value, scale, .. } => (Num::Ratio, *value, 10i128.pow(*scale as u32)),
        S::Float64(v) => float(*v),
        S::Float32(v) => float(f64::from(*v)),
        _ => return None,
    })
}

/// The double SQL compares a literal as against a float column (integers
/// and decimals rounded to the nearest double).
fn as_double(s: &Scalar) -> f64 {
    match s {
        Scalar::Float64(v) => *v,
        Scalar::Float32(v) => f64::from(*v),
        Scalar::Decimal128 { value, scale, .. } => {
            // Small test values: a correctly rounded quotient of two exact doubles.
            *value as f64 / 10f64.powi(i32::from(*scale))
        }
        other => {
            let (_, n, d) = ratio(other).unwrap();
            assert_eq!(d, 1);
            n as f64
        }
    }
}

/// How column value `a` compares with literal `b`, as SQL says: numbers by
/// value across types (against a float column, the literal as a double).
fn order(a: &Scalar, b: &Scalar) -> Option<Ordering> {
    use Scalar as S;
    Some(match (a, b) {
        (S::Null, _) | (_, S::Null) => return None,
        (S::Float64(a), b) if is_number(b) => sql_f64(*a, as_double(b)),
        (S::Float32(a), b) if is_number(b) => sql_f64(f64::from(*a), as_double(b)),
        (a, b) if is_number(a) && is_number(b) => {
            let ((ka, na, da), (kb, nb, db)) = (ratio(a).unwrap(), ratio(b).unwrap());
            if ka == Num::Ratio && kb == Num::Ratio {
                (na * db).cmp(&(nb * da))
            } else {
                ka.cmp(&kb)
            }
        }
        (S::Boolean(a), S::Boolean(b)) => a.cmp(b),
        (S::Utf8(a), S::Utf8(b)) => a.as_bytes().cmp(b.as_bytes()),
        (S::Binary(a), S::Binary(b)) => a.cmp(b),
        (S::Date32(a), S::Date32(b)) => a.cmp(b),
        (S::Timestamp(a), S::Timestamp(b)) | (S::TimestampNtz(a), S::TimestampNtz(b)) => a.cmp(b),
        (a, b) => panic!("reference cannot compare {a:?} with {b:?}"),
    })
}

fn compare(v: &Scalar, op: CmpOp, l: &Scalar) -> Option<bool> {
    let o = order(v, l)?;
    Some(match op {
        CmpOp::Eq => o == Ordering::Equal,
        CmpOp::NotEq => o != Ordering::Equal,
        CmpOp::Lt => o == Ordering::Less,
        CmpOp::LtEq => o != Ordering::Greater,
        CmpOp::Gt => o == Ordering::Greater,
        CmpOp::GtEq => o != Ordering::Less,
    })
}

fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

fn column(e: &Expr) -> &ColumnPath {
    match e {
        Expr::Column(c) => c,
        other => panic!("bound leaves have a column, found {other}"),
    }
}

/// Evaluates an expression (as written or bound) on one row.
pub fn eval_row(e: &Expr, batch: &RecordBatch, row: usize) -> Option<bool> {
    let neg = |v: Option<bool>, negated: bool| if negated { v.map(|b| !b) } else { v };
    match e {
        Expr::Literal(Scalar::Boolean(b)) => Some(*b),
        Expr::Literal(_) => None,
        Expr::Compare { left, op, right } => {
            let Expr::Literal(l) = right.as_ref() else {
                panic!("bound")
            };
            compare(&value_at(batch, column(left), row), *op, l)
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let v = value_at(batch, column(expr), row);
            let mut found = Some(false);
            for l in list {
                found = or(found, compare(&v, CmpOp::Eq, l));
            }
            neg(found, *negated)
        }
        Expr::IsNull { expr, negated } => {
            Some(value_at(batch, column(expr), row).is_null() != *negated)
        }
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => {
            let v = value_at(batch, column(expr), row);
            neg(
                and(
                    compare(&v, CmpOp::GtEq, low),
                    compare(&v, CmpOp::LtEq, high),
                ),
                *negated,
            )
        }
        Expr::StartsWith {
            expr,
            prefix,
            negated,
        } => match value_at(batch, column(expr), row) {
            Scalar::Utf8(s) => neg(Some(s.starts_with(prefix.as_str())), *negated),
            _ => None,
        },
        Expr::And(c) => {
            // Kleene: an unknown term does not end the walk.
            let mut acc = Some(true);
            for x in c {
                acc = and(acc, eval_row(x, batch, row));
            }
            acc
        }
        Expr::Or(c) => {
            let mut acc = Some(false);
            for x in c {
                acc = or(acc, eval_row(x, batch, row));
            }
            acc
        }
        Expr::Not(a) => eval_row(a, batch, row).map(|b| !b),
        // A boolean column standing alone.
        Expr::Column(c) => match value_at(batch, c, row) {
            Scalar::Boolean(b) => Some(b),
            Scalar::Null => None,
            other => panic!("a bare column must be boolean, found {other:?}"),
        },
    }
}
