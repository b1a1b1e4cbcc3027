//! Exact evaluation of a bound [`Expr`] on a [`RecordBatch`] with arrow-rs
//! kernels, under SQL three-valued logic.
//!
//! * comparisons: `arrow_ord::cmp` against a one-element literal (a NULL
//!   operand gives NULL); floats compare as SQL does, `-0.0 = 0.0` and NaN
//!   equal to itself and above every other value, as in Spark (both sides
//!   are put in canonical form first, see [`crate::float_order`]);
//! * `AND` / `OR` / `NOT`: the Kleene kernels of `arrow_arith::boolean`;
//! * `IN`: an `OR` of equalities, so a NULL in the list makes a non-match
//!   NULL rather than `false`;
//! * `LIKE 'p%'`: `arrow_string::like::starts_with`.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_array::{
    Array, ArrayRef, BooleanArray, RecordBatch, Scalar as Datum, StringArray, cast::AsArray,
    make_array,
};
use arrow_buffer::NullBuffer;
use arrow_cast::cast::{CastOptions, cast_with_options};
use arrow_schema::ArrowError;

use crate::error::{PruneError, Result};
use crate::expr::{CmpOp, ColumnPath, Expr, Scalar};

fn kernel(context: &str) -> impl FnOnce(ArrowError) -> PruneError + '_ {
    move |e| PruneError::arrow(context, e)
}

/// Evaluates a bound expression on `batch` (see the module docs).
pub(crate) fn evaluate(expr: &Expr, batch: &RecordBatch) -> Result<BooleanArray> {
    let rows = batch.num_rows();
    match expr {
        Expr::Literal(Scalar::Boolean(b)) => Ok(BooleanArray::from(vec![*b; rows])),
        Expr::Literal(Scalar::Null) => Ok(BooleanArray::new_null(rows)),
        Expr::Compare { left, op, right } => {
            let (Expr::Column(c), Expr::Literal(l)) = (left.as_ref(), right.as_ref()) else {
                return Err(unbound(expr));
            };
            let values = column_array(batch, c)?;
            compare(c, &values, *op, l)
        }
        Expr::InList {
            expr: inner,
            list,
            negated,
        } => {
            let Expr::Column(c) = inner.as_ref() else {
                return Err(unbound(expr));
            };
            let values = column_array(batch, c)?;
            if list.len() > crate::in_list::SHORT_LIST
                && let Some(found) = crate::in_list::evaluate(&values, list)
            {
                return negate_if(found, *negated);
            }
            let mut acc = BooleanArray::from(vec![false; rows]);
            for item in list {
                let eq = compare(c, &values, CmpOp::Eq, item)?;
                acc = or_kleene(&acc, &eq).map_err(kernel("evaluating IN"))?;
            }
            negate_if(acc, *negated)
        }
        Expr::IsNull {
            expr: inner,
            negated,
        } => {
            let Expr::Column(c) = inner.as_ref() else {
                return Err(unbound(expr));
            };
            let values = column_array(batch, c)?;
            if *negated {
                is_not_null(&values)
            } else {
                is_null(&values)
            }
            .map_err(kernel("evaluating IS NULL"))
        }
        Expr::Between {
            expr: inner,
            low,
            high,
            negated,
        } => {
            let Expr::Column(c) = inner.as_ref() else {
                return Err(unbound(expr));
            };
            let values = column_array(batch, c)?;
            let ge = compare(c, &values, CmpOp::GtEq, low)?;
            let le = compare(c, &values, CmpOp::LtEq, high)?;
            negate_if(
                and_kleene(&ge, &le).map_err(kernel("evaluating BETWEEN"))?,
                *negated,
            )
        }
        Expr::StartsWith {
            expr: inner,
            prefix,
            negated,
        } => {
            let Expr::Column(c) = inner.as_ref() else {
                return Err(unbound(expr));
            };
            let values = column_array(batch, c)?;
            let pattern: ArrayRef = Arc::new(StringArray::from(vec![prefix.as_str()]));
            let pattern = cast_to(c, &pattern, values.data_type())?;
            let out = arrow_string::like::starts_with(&values, &Datum::new(pattern))
                .map_err(kernel("evaluating LIKE"))?;
            negate_if(out, *negated)
        }
        Expr::And(children) => fold(children, batch, true),
        Expr::Or(children) => fold(children, batch, false),
        Expr::Not(a) => not(&evaluate(a, batch)?).map_err(kernel("evaluating NOT")),
        Expr::Column(_) | Expr::Literal(_) => Err(unbound(expr)),
    }
}

/// Kleene `AND` (`is_and`) or `OR` of every child, left to right.
fn fold(children: &[Expr], batch: &RecordBatch, is_and: bool) -> Result<BooleanArray> {
    let mut acc: Option<BooleanArray> = None;
    for c in children {
        let v = evaluate(c, batch)?;
        acc = Some(match acc {
            None => v,
            Some(a) if is_and => and_kleene(&a, &v).map_err(kernel("evaluating AND"))?,
            Some(a) => or_kleene(&a, &v).map_err(kernel("evaluating OR"))?,
        });
    }
    Ok(acc.unwrap_or_else(|| BooleanArray::from(vec![is_and; batch.num_rows()])))
}

fn unbound(expr: &Expr) -> PruneError {
    PruneError::InvalidExpr {
        message: format!("`{expr}` is not a bound predicate (build it with Predicate::try_new)"),
    }
}

fn negate_if(a: BooleanArray, negated: bool) -> Result<BooleanArray> {
    if negated {
        not(&a).map_err(kernel("evaluating NOT"))
    } else {
        Ok(a)
    }
}

fn cast_to(
    column: &ColumnPath,
    literal: &ArrayRef,
    to: &arrow_schema::DataType,
) -> Result<ArrayRef> {
    if literal.data_type() == to {
        return Ok(literal.clone());
    }
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(literal, to, &strict).map_err(|e| PruneError::BatchMismatch {
        column: column.to_string(),
        message: format!(
            "cannot convert literal of type {} to the column's type {to}: {e}",
            literal.data_type()
        ),
    })
}

/// `values op literal`, NULL where either side is NULL.
pub(crate) fn compare(
    column: &ColumnPath,
    values: &ArrayRef,
    op: CmpOp,
    literal: &Scalar,
) -> Result<BooleanArray> {
    if literal.is_null() {
        return Ok(BooleanArray::new_null(values.len()));
    }
    let rhs = cast_to(column, &literal.to_array(), values.data_type())?;
    let rhs = Datum::new(crate::float_order::normalize(&rhs));
    let values = crate::float_order::normalize(values);
    let lhs = values.as_ref();
    use arrow_ord::cmp;
    match op {
        CmpOp::Eq => cmp::eq(&lhs, &rhs),
        CmpOp::NotEq => cmp::neq(&lhs, &rhs),
        CmpOp::Lt => cmp::lt(&lhs, &rhs),
        CmpOp::LtEq => cmp::lt_eq(&lhs, &rhs),
        CmpOp::Gt => cmp::gt(&lhs, &rhs),
        CmpOp::GtEq => cmp::gt_eq(&lhs, &rhs),
    }
    .map_err(|e| PruneError::BatchMismatch {
        column: column.to_string(),
        message: e.to_string(),
    })
}

/// The values of the column at `path`. A field inside a NULL struct is NULL
/// (SQL semantics), even where the child array holds a value.
pub fn column_array(batch: &RecordBatch, path: &ColumnPath) -> Result<ArrayRef> {
    let missing = |what: &str| PruneError::BatchMismatch {
        column: path.to_string(),
        message: what.to_string(),
    };
    let parts = path.parts();
    let first = parts.first().ok_or_else(|| missing("empty column path"))?;
    let mut array = batch
        .column_by_name(first)
        .cloned()
        .ok_or_else(|| missing("the batch has no such column"))?;
    for part in &parts[1..] {
        let Some(st) = array.as_struct_opt() else {
            return Err(missing(&format!(
                "`{part}` is looked up in a {} column",
                array.data_type()
            )));
        };
        let child = st
            .column_by_name(part)
            .cloned()
            .ok_or_else(|| missing("the struct has no such field"))?;
        let nulls = NullBuffer::union(st.nulls(), child.nulls());
        array = if nulls.as_ref() == child.nulls() {
            child
        } else {
            let data = child
                .to_data()
                .into_builder()
                .nulls(nulls)
                .build()
                .map_err(kernel("masking a struct field"))?;
            make_array(data)
        };
    }
    Ok(array)
}
