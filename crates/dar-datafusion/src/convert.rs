//! DataFusion filter expressions to `dar-prune` predicates.
//!
//! Each filter DataFusion offers the provider goes through [`convert`],
//! which returns the `dar_prune::Expr` and whether it is *exact* (the same
//! rows as the DataFusion expression) or only *implied by it* (a weaker
//! predicate: every row the filter keeps, it keeps too, so it can prune and
//! pre-filter but DataFusion must filter again):
//!
//! ```text
//! column, s.a (get_field) ......... column path
//! literal, CAST(literal AS t) ..... typed literal (every dar-prune type)
//! CAST(column AS wider type) ...... the column (lossless, order kept:
//!                                   wider ints, decimals, floats)
//! =, !=, <, <=, >, >= ............. comparison (column vs literal)
//! [NOT] IN, [NOT] BETWEEN ......... as is
//! IS [NOT] NULL, NOT, AND, OR ..... as is (NOT only of exact parts)
//! TRUE, FALSE, NULL ............... literal predicates (the simplifier
//!                                   folds `x = NULL` to NULL)
//! LIKE 'abc%' ..................... starts_with (exact)
//! LIKE 'ab%c' ..................... starts_with 'ab' (implied only)
//! a AND f(b) ...................... a (implied only)
//! anything else ................... not converted (left to DataFusion)
//! ```
//!
//! A converted predicate is then bound to the table's schema
//! ([`dar_prune::Predicate::try_new`]); one that does not bind (a literal
//! that does not fit its column, say) is left to DataFusion too.

use arrow_schema::{DataType, Schema};
use dar_prune::{CmpOp, ColumnPath, Expr, Predicate, Scalar};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Expr as DfExpr, Operator, TableProviderFilterPushDown};

/// A converted filter: the predicate and whether it is exact.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Converted {
    /// The `dar-prune` predicate.
    pub expr: Expr,
    /// True: the same rows as the DataFusion filter; false: implied by it.
    pub exact: bool,
}

/// The two schemas of a provider: the one DataFusion sees (view types,
/// dictionary partition columns) and the dar logical one predicates bind to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schemas<'a> {
    /// What the provider reports to DataFusion.
    pub datafusion: &'a Schema,
    /// The table's logical schema in dar.
    pub dar: &'a Schema,
}

/// Converts `filter`, or `None` when no part of it converts and binds.
pub(crate) fn convert(filter: &DfExpr, schemas: Schemas<'_>) -> Option<Converted> {
    let converted = convert_bool(filter, schemas.datafusion)?;
    Predicate::try_new(converted.expr.clone(), schemas.dar).ok()?;
    Some(converted)
}

/// How DataFusion may rely on the scan for `filter`.
pub(crate) fn classify(filter: &DfExpr, schemas: Schemas<'_>) -> TableProviderFilterPushDown {
    match convert(filter, schemas) {
        Some(c) if c.exact => TableProviderFilterPushDown::Exact,
        Some(_) => TableProviderFilterPushDown::Inexact,
        None => TableProviderFilterPushDown::Unsupported,
    }
}

fn exact(expr: Expr) -> Option<Converted> {
    Some(Converted { expr, exact: true })
}

fn convert_bool(e: &DfExpr, s: &Schema) -> Option<Converted> {
    match e {
        DfExpr::Alias(a) => convert_bool(&a.expr, s),
        DfExpr::BinaryExpr(b) => match b.op {
            Operator::And => match (convert_bool(&b.left, s), convert_bool(&b.right, s)) {
                (Some(l), Some(r)) => Some(Converted {
                    expr: l.expr.and(r.expr),
                    exact: l.exact && r.exact,
                }),
                // One side alone is implied by the conjunction.
                (Some(one), None) | (None, Some(one)) => Some(Converted {
                    expr: one.expr,
                    exact: false,
                }),
                (None, None) => None,
            },
            Operator::Or => {
                let (l, r) = (convert_bool(&b.left, s)?, convert_bool(&b.right, s)?);
                Some(Converted {
                    expr: l.expr.or(r.expr),
                    exact: l.exact && r.exact,
                })
            }
            op => {
                let op = cmp_op(op)?;
                let (l, r) = (value(&b.left, s)?, value(&b.right, s)?);
                // dar-prune compares a column with a literal.
                match (&l, &r) {
                    (Expr::Column(_), Expr::Literal(_)) | (Expr::Literal(_), Expr::Column(_)) => {
                        exact(l.compare(op, r))
                    }
                    _ => None,
                }
            }
        },
        DfExpr::Not(inner) => {
            // NOT of a weaker predicate is not implied by NOT of the filter.
            let c = convert_bool(inner, s).filter(|c| c.exact)?;
            exact(c.expr.not())
        }
        DfExpr::IsNull(inner) => exact(column(inner, s)?.is_null()),
        DfExpr::IsNotNull(inner) => exact(column(inner, s)?.is_not_null()),
        DfExpr::InList(list) => {
            let expr = Box::new(column(&list.expr, s)?);
            let list = list
                .list
                .iter()
                .map(literal)
                .collect::<Option<Vec<Scalar>>>()?;
            exact(Expr::InList {
                expr,
                list,
                negated: matches!(e, DfExpr::InList(l) if l.negated),
            })
        }
        DfExpr::Between(b) => exact(Expr::Between {
            expr: Box::new(column(&b.expr, s)?),
            low: literal(&b.low)?,
            high: literal(&b.high)?,
            negated: b.negated,
        }),
        DfExpr::Like(like) if !like.case_insensitive => {
            let expr = Box::new(column(&like.expr, s)?);
            let Scalar::Utf8(pattern) = literal(&like.pattern)? else {
                return None;
            };
            let (prefix, whole) = like_prefix(&pattern, like.escape_char);
            if like.negated && !whole {
                return None;
            }
            Some(Converted {
                expr: Expr::StartsWith {
                    expr,
                    prefix,
                    negated: like.negated,
                },
                exact: whole,
            })
        }
        // A boolean column alone.
        DfExpr::Column(_) | DfExpr::ScalarFunction(_) => exact(column(e, s)?),
        // TRUE, FALSE and NULL (DataFusion's simplifier folds `x = NULL`
        // and `x IN (NULL)` to a NULL literal in a boolean position).
        DfExpr::Literal(..) | DfExpr::Cast(_) | DfExpr::TryCast(_) => match literal(e)? {
            b @ (Scalar::Boolean(_) | Scalar::Null) => exact(Expr::Literal(b)),
            _ => None,
        },
        _ => None,
    }
}

/// `LIKE pattern` as a prefix: the literal text before the first wildcard
/// or escape, and whether the pattern is exactly that prefix then `%`.
fn like_prefix(pattern: &str, escape: Option<char>) -> (String, bool) {
    let escape = escape.unwrap_or('\\');
    let end = pattern
        .char_indices()
        .find(|(_, c)| *c == '%' || *c == '_' || *c == escape)
        .map_or(pattern.len(), |(i, _)| i);
    let prefix = &pattern[..end];
    let rest = &pattern[end..];
    // `LIKE 'abc'` (no wildcard) is equality, not a prefix: implied only.
    (prefix.to_string(), rest == "%")
}

fn cmp_op(op: Operator) -> Option<CmpOp> {
    Some(match op {
        Operator::Eq => CmpOp::Eq,
        Operator::NotEq => CmpOp::NotEq,
        Operator::Lt => CmpOp::Lt,
        Operator::LtEq => CmpOp::LtEq,
        Operator::Gt => CmpOp::Gt,
        Operator::GtEq => CmpOp::GtEq,
        _ => return None,
    })
}

/// A value position: a column or a literal.
fn value(e: &DfExpr, s: &Schema) -> Option<Expr> {
    column(e, s).or_else(|| literal(e).map(Expr::Literal))
}

/// A column path: a column, `get_field` of one, or a lossless cast of one.
fn column(e: &DfExpr, s: &Schema) -> Option<Expr> {
    column_path(e, s).map(|parts| Expr::Column(ColumnPath::new(parts)))
}

fn column_path(e: &DfExpr, s: &Schema) -> Option<Vec<String>> {
    match e {
        DfExpr::Column(c) => Some(vec![c.name.clone()]),
        DfExpr::Alias(a) => column_path(&a.expr, s),
        DfExpr::ScalarFunction(f) if f.func.name() == "get_field" => {
            let (base, names) = f.args.split_first()?;
            let mut path = column_path(base, s)?;
            for n in names {
                match n {
                    DfExpr::Literal(
                        ScalarValue::Utf8(Some(s))
                        | ScalarValue::Utf8View(Some(s))
                        | ScalarValue::LargeUtf8(Some(s)),
                        _,
                    ) => path.push(s.clone()),
                    _ => return None,
                }
            }
            Some(path)
        }
        DfExpr::Cast(c) if lossless_cast(&c.expr, c.field.data_type(), s) => {
            column_path(&c.expr, s)
        }
        DfExpr::TryCast(c) if lossless_cast(&c.expr, c.field.data_type(), s) => {
            column_path(&c.expr, s)
        }
        _ => None,
    }
}

/// Whether casting column `e` (of the provider's DataFusion schema) to
/// `to` keeps every value, its order and its nulls, so that comparing the
/// cast with a literal is comparing the column with it by value (dar-prune
/// compares numbers by value across types): a dictionary decoded to its
/// value type, integer widening, integers to decimals with enough digits
/// or to floats that hold them exactly, decimal widening, `float` to
/// `double`, or between the string (binary) forms.
fn lossless_cast(e: &DfExpr, to: &DataType, schema: &Schema) -> bool {
    let DfExpr::Column(c) = e else {
        return false;
    };
    let Ok(field) = schema.field_with_name(&c.name) else {
        return false;
    };
    lossless_type(field.data_type(), to)
}

fn lossless_type(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    let rank = |t: &DataType| match t {
        Int8 => Some(1),
        Int16 => Some(2),
        Int32 => Some(3),
        Int64 => Some(4),
        _ => None,
    };
    // Decimal digits of the widest value of an integer type.
    let digits = |t: &DataType| match t {
        Int8 => Some(3),
        Int16 => Some(5),
        Int32 => Some(10),
        Int64 => Some(19),
        _ => None,
    };
    let decimal = |t: &DataType| match t {
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) | Decimal256(p, s) => {
            Some((i16::from(*p), i16::from(*s)))
        }
        _ => None,
    };
    match (from, to) {
        (a, b) if a == b => true,
        (Dictionary(_, v), b) => lossless_type(v, b),
        (Utf8 | LargeUtf8 | Utf8View, Utf8 | LargeUtf8 | Utf8View) => true,
        (Binary | LargeBinary | BinaryView, Binary | LargeBinary | BinaryView) => true,
        // Every value of these integer types is a float exactly.
        (Int8 | Int16 | Int32, Float64) | (Int8 | Int16, Float32) | (Float32, Float64) => true,
        (a, b) if rank(a).is_some() && rank(b).is_some() => rank(a) <= rank(b),
        (a, b) => match (digits(a), decimal(a), decimal(b)) {
            (Some(d), _, Some((p, s))) => s >= 0 && p - s >= d,
            (_, Some((p1, s1)), Some((p2, s2))) => s2 >= s1 && p2 - s2 >= p1 - s1,
            _ => false,
        },
    }
}

/// A literal, possibly under a cast, as a dar-prune scalar.
pub(crate) fn literal(e: &DfExpr) -> Option<Scalar> {
    match e {
        DfExpr::Literal(v, _) => scalar(v),
        DfExpr::Alias(a) => literal(&a.expr),
        DfExpr::Cast(c) => match c.expr.as_ref() {
            DfExpr::Literal(v, _) => scalar(&v.cast_to(c.field.data_type()).ok()?),
            _ => None,
        },
        DfExpr::TryCast(c) => match c.expr.as_ref() {
            DfExpr::Literal(v, _) => scalar(&v.cast_to(c.field.data_type()).ok()?),
            _ => None,
        },
        _ => None,
    }
}

/// A DataFusion scalar as a dar-prune scalar, when it has an exact
/// counterpart (a null of any type is [`Scalar::Null`]).
pub(crate) fn scalar(v: &ScalarValue) -> Option<Scalar> {
    if v.is_null() {
        return Some(Scalar::Null);
    }
    Some(match v {
        ScalarValue::Boolean(Some(b)) => Scalar::Boolean(*b),
        ScalarValue::Int8(Some(x)) => Scalar::Int8(*x),
        ScalarValue::Int16(Some(x)) => Scalar::Int16(*x),
        ScalarValue::Int32(Some(x)) => Scalar::Int32(*x),
        ScalarValue::Int64(Some(x)) => Scalar::Int64(*x),
        ScalarValue::UInt8(Some(x)) => Scalar::Int16(i16::from(*x)),
        ScalarValue::UInt16(Some(x)) => Scalar::Int32(i32::from(*x)),
        ScalarValue::UInt32(Some(x)) => Scalar::Int64(i64::from(*x)),
        ScalarValue::UInt64(Some(x)) => Scalar::Int64(i64::try_from(*x).ok()?),
        ScalarValue::Float32(Some(x)) => Scalar::Float32(*x),
        ScalarValue::Float64(Some(x)) => Scalar::Float64(*x),
        ScalarValue::Decimal128(Some(value), precision, scale) => Scalar::Decimal128 {
            value: *value,
            precision: *precision,
            scale: *scale,
        },
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Scalar::Utf8(s.clone()),
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b))
        | ScalarValue::FixedSizeBinary(_, Some(b)) => Scalar::Binary(b.clone()),
        ScalarValue::Date32(Some(d)) => Scalar::Date32(*d),
        ScalarValue::Date64(Some(ms)) => {
            const MS_PER_DAY: i64 = 86_400_000;
            if ms % MS_PER_DAY != 0 {
                return None;
            }
            Scalar::Date32(i32::try_from(ms / MS_PER_DAY).ok()?)
        }
        ScalarValue::TimestampSecond(Some(t), tz) => timestamp(t.checked_mul(1_000_000)?, tz),
        ScalarValue::TimestampMillisecond(Some(t), tz) => timestamp(t.checked_mul(1_000)?, tz),
        ScalarValue::TimestampMicrosecond(Some(t), tz) => timestamp(*t, tz),
        ScalarValue::TimestampNanosecond(Some(t), tz) => {
            // A sub-microsecond instant has no Delta counterpart.
            if t % 1_000 != 0 {
                return None;
            }
            timestamp(t / 1_000, tz)
        }
        ScalarValue::Dictionary(_, inner) => return scalar(inner),
        _ => return None,
    })
}

fn timestamp(micros: i64, tz: &Option<std::sync::Arc<str>>) -> Scalar {
    match tz {
        // An instant: the same whatever zone labels it.
        Some(_) => Scalar::Timestamp(micros),
        None => Scalar::TimestampNtz(micros),
    }
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
