//! A deliberately simple row-by-row evaluator: SQL three-valued logic over
//! `Scalar`s, independent of the Arrow kernels under test.

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

fn order(a: &Scalar, b: &Scalar) -> Option<Ordering> {
    use Scalar as S;
    Some(match (a, b) {
        (S::Null, _) | (_, S::Null) => return None,
        (S::Boolean(a), S::Boolean(b)) => a.cmp(b),
        (S::Int8(a), S::Int8(b)) => a.cmp(b),
        (S::Int16(a), S::Int16(b)) => a.cmp(b),
        (S::Int32(a), S::Int32(b)) => a.cmp(b),
        (S::Int64(a), S::Int64(b)) => a.cmp(b),
        (S::Float32(a), S::Float32(b)) => a.total_cmp(b),
        (S::Float64(a), S::Float64(b)) => a.total_cmp(b),
        (
            S::Decimal128 {
                value: a,
                scale: sa,
                ..
            },
            S::Decimal128 {
                value: b,
                scale: sb,
                ..
            },
        ) => {
            assert_eq!(sa, sb, "bound literals share the column scale");
            a.cmp(b)
        }
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

/// Evaluates a bound expression on one row.
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
        Expr::Column(_) => panic!("bound predicates have no bare columns"),
    }
}
